import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { copyEmbeddedTemplate } from '../db/embedded-template.ts';
import { wantsDemo, type Config } from '../config.ts';
import { InputError } from '../input-error.ts';
import { packagePath } from '../package-root.ts';

/** The file, as messages name it (from the package root). */
export const DEMO_FIXTURE_FILE = 'src/demo/demo-fixture.json';
export const DEMO_FIXTURE_PATH = packagePath(...DEMO_FIXTURE_FILE.split('/'));

/** The demo fixture as it is now, and the SHA-256 of its bytes. */
export async function readDemoFixture(): Promise<{ fixture: unknown; sha256: string }> {
  const bytes = await readFile(DEMO_FIXTURE_PATH);
  let fixture: unknown;
  try {
    fixture = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw new InputError(`${DEMO_FIXTURE_FILE} is not JSON: ${(error as Error).message}`);
  }
  return { fixture, sha256: sha256Of(bytes) };
}

const sha256Of = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/**
 * A first start of the embedded database: the build's template copied into the data directory
 * when it has no cluster yet (true when it was). A template made with another demo fixture is
 * left: the demo is imported from the current one (demo.ts says so). Apart from demo.ts, whose
 * fixture import the service's modules do not load, and light enough for src/main.ts to start the
 * copy (the system's `cp`, in a process of its own) while the service's modules load.
 */
export function copyTemplateForStart(config: Config): Promise<boolean> {
  if (config.DATABASE_URL) return Promise.resolve(false);
  // The fixture read at once, as the copy's other steps before cp (embedded-template.ts says why).
  return copyEmbeddedTemplate(config.DATA_DIR, (info) => !wantsDemo(config) || info?.demoFixtureSha256 === sha256Of(readFileSync(DEMO_FIXTURE_PATH)));
}
