/**
 * `npm run build`'s last step: the embedded cluster a first start copies (src/db/embedded-template.ts),
 * migrated and with the demo workspace imported, without keys. Run as built JavaScript.
 */
import { mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from './db/database.ts';
import { EMBEDDED_TEMPLATE_DIR } from './db/embedded-template.ts';
import { migrate } from './db/migrate.ts';
import { importDemo } from './demo/demo.ts';

const dataDir = await mkdtemp(join(tmpdir(), 'embedded-template-'));
try {
  const db = await openDatabase({ dataDir });
  try {
    await migrate(db);
    await importDemo(db);
  } finally {
    await db.close();
  }
  await rm(EMBEDDED_TEMPLATE_DIR, { recursive: true, force: true });
  await rename(join(dataDir, 'pgdata'), EMBEDDED_TEMPLATE_DIR).catch(async () => {
    // Another file system (a tmpfs /tmp): copy instead.
    const { cp } = await import('node:fs/promises');
    await cp(join(dataDir, 'pgdata'), EMBEDDED_TEMPLATE_DIR, { recursive: true });
  });
} finally {
  await rm(dataDir, { recursive: true, force: true });
}
