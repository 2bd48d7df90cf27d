import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { countActiveKeysEndingIn, createApiKey, revokeKeysNamed } from '../auth/api-key-store.ts';
import type { Database } from '../db/database.ts';
import { FixtureRefusedError, importFixture } from '../fixtures/import-fixture.ts';
import { InputError } from '../input-error.ts';
import { DEMO_FIXTURE_FILE, readDemoFixture } from './demo-fixture.ts';
import { findManagerEmail } from '../workspaces/member-store.ts';
import { findKeylessWorkspaceNamed, findWorkspaceWithKeyNamedLike, workspaceExists } from '../workspaces/workspace-store.ts';


export interface DemoKeys {
  workspaceId: string;
  /** courses:read, bookings:read, participants:read */
  fullKey: string;
  /** courses:read, bookings:read: bookings without participant data */
  limitedKey: string;
  /** SHA-256 of the demo fixture the workspace was imported from. */
  fixtureSha256?: string;
  /** What the start did about a demo fixture changed since the build or the data directory's import; printed with the keys. */
  notice?: string;
}

const FULL_NAME = 'Demo key (all scopes)';
const LIMITED_NAME = 'Demo key (no participants:read)';


/** Identical problems of many rows in one line: `bookings[0] (ref "b1") and 19 more: channel is missing: …`. */
function grouped(problems: readonly string[]): string[] {
  const byText = new Map<string, string[]>();
  for (const problem of problems) {
    const split = /^(.*?\]?(?: \(ref "[^"]*"\))?): (.*)$/.exec(problem);
    const [element, text] = split ? [split[1]!, split[2]!] : ['', problem];
    byText.set(text, [...(byText.get(text) ?? []), element]);
  }
  return [...byText].map(([text, elements]) => (elements[0] ? `${elements[0]}${elements.length > 1 ? ` and ${elements.length - 1} more` : ''}: ${text}` : text));
}

/**
 * The demo fixture refused by the database the migrations give: named, with each problem once
 * and, for a NOT NULL column its rows leave out, the two ways out.
 */
export function demoFixtureRefusal(error: FixtureRefusedError): InputError {
  const lines = [`${DEMO_FIXTURE_FILE} does not fit the migrations: the demo workspace is imported from it, and it is refused:`, ...grouped(error.problems).map((line) => `  - ${line}`)];
  for (const { table, column, type } of error.missing) {
    lines.push(
      `The column ${table}.${column} is NOT NULL without a default: every row needs a value, the demo's and those of every database the migration will run on. ` +
        `Give it a DEFAULT in its migration (ALTER TABLE ${table} ADD COLUMN ${column} ${type} NOT NULL DEFAULT <value>), or give each row of ${table} in ${DEMO_FIXTURE_FILE} a value for it.`,
    );
  }
  return new InputError(lines.join('\n'));
}

export async function importDemo(db: Database, fixture?: unknown): Promise<{ workspaceId: string; ids: Record<string, string> }> {
  try {
    return await importFixture(db, fixture ?? (await readDemoFixture()).fixture, {});
  } catch (error) {
    throw error instanceof FixtureRefusedError ? demoFixtureRefusal(error) : error;
  }
}

/** The demo keys' names: `mark` (the fixture's digest, on a real PostgreSQL) follows the name. */
const demoKeyNames = (mark = '') => [`${FULL_NAME}${mark}`, `${LIMITED_NAME}${mark}`] as const;

async function issueKeys(db: Database, workspaceId: string, mark = ''): Promise<DemoKeys> {
  const memberEmail = await findManagerEmail(db, workspaceId);
  if (!memberEmail) throw new InputError(`The demo workspace has no owner or admin: ${DEMO_FIXTURE_FILE} needs a member with role owner or admin`);
  const [fullName, limitedName] = demoKeyNames(mark);
  // Earlier demo keys of this workspace stop working: only the printed ones are live.
  await revokeKeysNamed(db, workspaceId, [...demoKeyNames(), ...demoKeyNames(mark)]);
  const full = await createApiKey(db, {
    workspaceId,
    memberEmail,
    name: fullName,
    scopes: ['courses:read', 'bookings:read', 'participants:read'],
  });
  const limited = await createApiKey(db, { workspaceId, memberEmail, name: limitedName, scopes: ['courses:read', 'bookings:read'] });
  return { workspaceId, fullKey: full.key, limitedKey: limited.key };
}

/**
 * The embedded demo: imported on first start, its two keys kept in the data directory (and only
 * there) so that every start can print keys that work. `templateFixtureSha256` is the fixture the
 * build's template was made with (null without a template): a first start uses the template's demo
 * only when it is the current fixture's. A fixture changed since the demo was imported is imported
 * again, as a new workspace, and the start says so.
 */
export async function ensureEmbeddedDemo(db: Database, dataDir: string, templateFixtureSha256: string | null = null): Promise<DemoKeys> {
  const file = join(dataDir, 'demo-keys.json');
  const current = await readDemoFixture();
  const save = async (keys: DemoKeys) => {
    const saved = { ...keys, fixtureSha256: current.sha256 };
    await writeFile(file, JSON.stringify({ ...saved, notice: undefined }, null, 2), { mode: 0o600 });
    return saved;
  };
  const saved = await readFile(file, 'utf8')
    .then((text) => JSON.parse(text) as DemoKeys)
    .catch(() => null);
  if (saved && (await workspaceExists(db, saved.workspaceId))) {
    // Data directories from before the hash was kept hold the fixture of their time: it is taken as the current one.
    if (saved.fixtureSha256 !== undefined && saved.fixtureSha256 !== current.sha256) {
      const fresh = await importDemo(db, current.fixture);
      await revokeKeysNamed(db, saved.workspaceId, [FULL_NAME, LIMITED_NAME]);
      const keys = await save(await issueKeys(db, fresh.workspaceId));
      return {
        ...keys,
        notice: `${DEMO_FIXTURE_FILE} changed since this data directory's demo was imported: imported it again as workspace ${fresh.workspaceId}; the earlier demo workspace ${saved.workspaceId} stays, its demo keys revoked.`,
      };
    }
    if ((await countActiveKeysEndingIn(db, saved.workspaceId, [saved.fullKey.slice(-4), saved.limitedKey.slice(-4)])) === 2) {
      return saved.fixtureSha256 === undefined ? save(saved) : saved;
    }
    return save(await issueKeys(db, saved.workspaceId));
  }
  // A data directory started from the build's template holds the demo already, without keys.
  const fromTemplate = templateFixtureSha256 === current.sha256 ? await findKeylessWorkspaceNamed(db, (current.fixture as { workspace: { name: string } }).workspace.name) : null;
  const workspaceId = fromTemplate ?? (await importDemo(db, current.fixture)).workspaceId;
  const keys = await save(await issueKeys(db, workspaceId));
  if (templateFixtureSha256 === null || templateFixtureSha256 === current.sha256) return keys;
  return { ...keys, notice: `${DEMO_FIXTURE_FILE} changed since npm run build: imported it now instead of the build's copy (run npm run build to make first starts fast again).` };
}

/**
 * DEMO=true on a real PostgreSQL: the demo workspace once, fresh keys each start, nothing stored
 * but in the database. The demo keys' names carry the digest of the fixture their workspace was
 * imported from, so a fixture changed since is imported again, as a new workspace, and the start
 * says so; a demo from before the digest was kept is taken as the current fixture's.
 */
export async function ensureDatabaseDemo(db: Database): Promise<DemoKeys> {
  const { fixture, sha256 } = await readDemoFixture();
  const mark = ` · fixture ${sha256.slice(0, 12)}`;
  const existing = await findWorkspaceWithKeyNamedLike(db, (fixture as { workspace: { name: string } }).workspace.name, FULL_NAME);
  if (existing && (existing.keyName === FULL_NAME || existing.keyName === `${FULL_NAME}${mark}`)) return { ...(await issueKeys(db, existing.id, mark)), fixtureSha256: sha256 };
  const fresh = await importDemo(db, fixture);
  const keys = { ...(await issueKeys(db, fresh.workspaceId, mark)), fixtureSha256: sha256 };
  if (!existing) return keys;
  await revokeKeysNamed(db, existing.id, demoKeyNames(existing.keyName.slice(FULL_NAME.length)));
  return {
    ...keys,
    notice: `${DEMO_FIXTURE_FILE} changed since the demo workspace ${existing.id} was imported: imported it again as workspace ${fresh.workspaceId}; the earlier demo workspace stays, its demo keys revoked.`,
  };
}
