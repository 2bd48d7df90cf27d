/**
 * `npm run generate` writes the files derived from the migrations, the overlay and the fixed
 * operations (schema/generated-files.ts). With `--check` (`npm run build` runs it, after the
 * embedded template's step has checked the committed catalog against the migrations) it writes
 * nothing, derives the rest from the committed catalog, and fails, naming every field or type
 * that differs, while a file is stale.
 */
import { writeFile } from 'node:fs/promises';
import { ModelError } from '../src/db/resource-model.ts';
import { catalog } from '../src/db/catalog.generated.ts';
import { generatedFiles, migratedCatalog, staleFiles } from './generated-files.ts';

const root = new URL('../', import.meta.url);
const check = process.argv.includes('--check');

try {
  const files = await generatedFiles(check ? catalog : await migratedCatalog());
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
} catch (error) {
  if (!(error instanceof ModelError)) throw error;
  console.error(error.message);
  process.exitCode = 1;
}
