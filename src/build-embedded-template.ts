/**
 * `npm run build`'s last step: the embedded cluster a first start copies (src/db/embedded-template.ts),
 * migrated and with the demo workspace imported, without keys. Run as built JavaScript.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { openDatabase } from './db/database.ts';
import { EMBEDDED_TEMPLATE_PATH } from './db/embedded-template.ts';
import { migrate } from './db/migrate.ts';
import { importDemo } from './demo/demo.ts';

const db = await openDatabase({});
try {
  await migrate(db);
  await importDemo(db);
  const dump = await db.dumpData!();
  await mkdir(dirname(EMBEDDED_TEMPLATE_PATH), { recursive: true });
  await writeFile(EMBEDDED_TEMPLATE_PATH, Buffer.from(await dump.arrayBuffer()));
} finally {
  await db.close();
}
