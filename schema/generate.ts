/**
 * `npm run generate` writes the files derived from the migrations, the overlay and the fixed
 * operations (schema/generated-files.ts). With `--check` (`npm run build` runs it, after the
 * embedded template's step has checked the committed catalog against the migrations) it writes
 * nothing, derives the rest from the committed catalog, and fails, naming every field or type
 * that differs, while a file is stale. A migration or an overlay entry that breaks a fixed
 * operation of the public API is refused before anything is written, naming the operation, the
 * contract's field and the ways out; no failure prints a stack trace.
 */
import { writeFile } from 'node:fs/promises';
import { catalog } from '../src/model/catalog.generated.ts';
import { MigrationError } from '../src/db/migrate.ts';
import { overlay } from '../src/model/overlay.ts';
import { ModelError } from '../src/model/resource-model.ts';
import { brokenOperations } from '../src/graphql/operation-problems.ts';
import { generatedFiles, migratedCatalog, staleFiles } from './generated-files.ts';

const root = new URL('../', import.meta.url);
const check = process.argv.includes('--check');

try {
  const source = check ? catalog : await migratedCatalog();
  const broken = brokenOperations(catalog, source, overlay, source.migrations.filter((name) => !catalog.migrations.includes(name)));
  if (broken.length > 0) {
    console.error(`${broken.join('\n')}\n${check ? 'The build stops here.' : 'npm run generate wrote nothing.'}`);
    process.exitCode = 1;
  } else {
    const files = await generatedFiles(source);
    if (check) {
      const stale = await staleFiles(root, files);
      if (stale.length > 0) {
        for (const file of stale) console.error(`${file.path} is stale:\n${file.differences.map((line) => `  - ${line}`).join('\n')}`);
        console.error('Run npm run generate, then npm run build.');
        process.exitCode = 1;
      }
    } else {
      for (const file of files) await writeFile(new URL(file.path, root), file.content);
      console.log(`wrote ${files.map((file) => file.path).join(', ')}`);
    }
  }
} catch (error) {
  const known = error instanceof ModelError || error instanceof MigrationError;
  console.error(known ? error.message : `npm run generate failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
