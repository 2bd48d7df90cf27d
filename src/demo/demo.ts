import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { countActiveKeysEndingIn, createApiKey, revokeKeysNamed } from '../auth/api-key-store.ts';
import type { Database } from '../db/database.ts';
import { importFixture } from '../fixtures/import-fixture.ts';
import { packagePath } from '../package-root.ts';
import { findManagerEmail } from '../workspaces/member-store.ts';
import { findKeylessWorkspaceNamed, findWorkspaceWithKeyNamed, workspaceExists } from '../workspaces/workspace-store.ts';

export const DEMO_FIXTURE_PATH = packagePath('src', 'demo', 'demo-fixture.json');

export interface DemoKeys {
  workspaceId: string;
  /** courses:read, bookings:read, participants:read */
  fullKey: string;
  /** courses:read, bookings:read: bookings without participant data */
  limitedKey: string;
}

const FULL_NAME = 'Demo key (all scopes)';
const LIMITED_NAME = 'Demo key (no participants:read)';

export async function loadDemoFixture(): Promise<unknown> {
  return JSON.parse(await readFile(DEMO_FIXTURE_PATH, 'utf8'));
}

export async function importDemo(db: Database): Promise<{ workspaceId: string; ids: Record<string, string> }> {
  return importFixture(db, await loadDemoFixture(), {});
}

async function issueKeys(db: Database, workspaceId: string): Promise<DemoKeys> {
  const memberEmail = await findManagerEmail(db, workspaceId);
  if (!memberEmail) throw new Error('The demo workspace has no owner or admin');
  // Earlier demo keys of this workspace stop working: only the printed ones are live.
  await revokeKeysNamed(db, workspaceId, [FULL_NAME, LIMITED_NAME]);
  const full = await createApiKey(db, {
    workspaceId,
    memberEmail,
    name: FULL_NAME,
    scopes: ['courses:read', 'bookings:read', 'participants:read'],
  });
  const limited = await createApiKey(db, { workspaceId, memberEmail, name: LIMITED_NAME, scopes: ['courses:read', 'bookings:read'] });
  return { workspaceId, fullKey: full.key, limitedKey: limited.key };
}

/**
 * The embedded demo: imported on first start, its two keys kept in the data directory (and only
 * there) so that every start can print keys that work.
 */
export async function ensureEmbeddedDemo(db: Database, dataDir: string): Promise<DemoKeys> {
  const file = join(dataDir, 'demo-keys.json');
  const saved = await readFile(file, 'utf8')
    .then((text) => JSON.parse(text) as DemoKeys)
    .catch(() => null);
  if (saved && (await workspaceExists(db, saved.workspaceId))) {
    if ((await countActiveKeysEndingIn(db, saved.workspaceId, [saved.fullKey.slice(-4), saved.limitedKey.slice(-4)])) === 2) return saved;
    const keys = await issueKeys(db, saved.workspaceId);
    await writeFile(file, JSON.stringify(keys, null, 2), { mode: 0o600 });
    return keys;
  }
  // A data directory started from the build's template holds the demo already, without keys.
  const fixture = (await loadDemoFixture()) as { workspace: { name: string } };
  const workspaceId = (await findKeylessWorkspaceNamed(db, fixture.workspace.name)) ?? (await importDemo(db)).workspaceId;
  const keys = await issueKeys(db, workspaceId);
  await writeFile(file, JSON.stringify(keys, null, 2), { mode: 0o600 });
  return keys;
}

/** DEMO=true on a real PostgreSQL: the demo workspace once, fresh keys each start, nothing stored. */
export async function ensureDatabaseDemo(db: Database): Promise<DemoKeys> {
  const fixture = (await loadDemoFixture()) as { workspace: { name: string } };
  const existing = await findWorkspaceWithKeyNamed(db, fixture.workspace.name, FULL_NAME);
  const workspaceId = existing ?? (await importDemo(db)).workspaceId;
  return issueKeys(db, workspaceId);
}
