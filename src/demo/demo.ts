import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createApiKey, revokeApiKey } from '../auth/api-key-store.ts';
import type { Database } from '../db/database.ts';
import { importFixture } from '../fixtures/import-fixture.ts';

export const DEMO_FIXTURE_URL = new URL('./demo-fixture.json', import.meta.url);

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
  return JSON.parse(await readFile(DEMO_FIXTURE_URL, 'utf8'));
}

export async function importDemo(db: Database): Promise<{ workspaceId: string; ids: Record<string, string> }> {
  return importFixture(db, await loadDemoFixture(), {});
}

async function issueKeys(db: Database, workspaceId: string): Promise<DemoKeys> {
  const owner = await db.query<{ email: string }>(
    "SELECT email FROM members WHERE workspace_id = $1 AND role IN ('owner', 'admin') ORDER BY role, created_at LIMIT 1",
    [workspaceId],
  );
  const memberEmail = owner.rows[0]?.email;
  if (!memberEmail) throw new Error('The demo workspace has no owner or admin');
  // Earlier demo keys of this workspace stop working: only the printed ones are live.
  const previous = await db.query<{ id: string }>(
    'SELECT id FROM api_keys WHERE workspace_id = $1 AND name = ANY($2) AND revoked_at IS NULL',
    [workspaceId, [FULL_NAME, LIMITED_NAME]],
  );
  for (const row of previous.rows) await revokeApiKey(db, row.id);
  const full = await createApiKey(db, {
    workspaceId,
    memberEmail,
    name: FULL_NAME,
    scopes: ['courses:read', 'bookings:read', 'participants:read'],
  });
  const limited = await createApiKey(db, { workspaceId, memberEmail, name: LIMITED_NAME, scopes: ['courses:read', 'bookings:read'] });
  return { workspaceId, fullKey: full.key, limitedKey: limited.key };
}

async function workspaceExists(db: Database, workspaceId: string): Promise<boolean> {
  return ((await db.query('SELECT 1 FROM workspaces WHERE id = $1', [workspaceId])).rowCount ?? 0) > 0;
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
    const live = await db.query(
      'SELECT count(*)::int AS n FROM api_keys WHERE workspace_id = $1 AND revoked_at IS NULL AND last4 = ANY($2)',
      [saved.workspaceId, [saved.fullKey.slice(-4), saved.limitedKey.slice(-4)]],
    );
    if (live.rows[0]?.n === 2) return saved;
    const keys = await issueKeys(db, saved.workspaceId);
    await writeFile(file, JSON.stringify(keys, null, 2), { mode: 0o600 });
    return keys;
  }
  const { workspaceId } = await importDemo(db);
  const keys = await issueKeys(db, workspaceId);
  await writeFile(file, JSON.stringify(keys, null, 2), { mode: 0o600 });
  return keys;
}

/** DEMO=true on a real PostgreSQL: the demo workspace once, fresh keys each start, nothing stored. */
export async function ensureDatabaseDemo(db: Database): Promise<DemoKeys> {
  const fixture = (await loadDemoFixture()) as { workspace: { name: string } };
  const existing = await db.query<{ id: string }>(
    `SELECT w.id FROM workspaces w WHERE w.name = $1
       AND EXISTS (SELECT 1 FROM api_keys k WHERE k.workspace_id = w.id AND k.name = $2)
     ORDER BY w.created_at LIMIT 1`,
    [fixture.workspace.name, FULL_NAME],
  );
  const workspaceId = existing.rows[0]?.id ?? (await importDemo(db)).workspaceId;
  return issueKeys(db, workspaceId);
}
