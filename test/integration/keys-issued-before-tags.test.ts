import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readIssuerTag } from '../../src/auth/issuer-key-store.ts';
import { isIssuedBy, sha256 } from '../../src/auth/secret-format.ts';
import type { Database } from '../../src/db/database.ts';
import { cliOn } from '../support/cli.ts';
import { openTestDatabase } from '../support/databases.ts';
import { forgedApiKey, guessedFeedToken } from '../support/forged-credentials.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { OWNER_EMAIL, contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { captureStatements } from '../support/statements.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

const COURSES = '/api/public/v1/courses';
const run = randomBytes(2).toString('hex');
let clients = 0;
const nextClient = () => `2001:db8:${run}:${(clients += 1).toString(16)}::6`;

describeOnEachDatabase('API keys and feed tokens issued before issuer tags, on %s', (target) => {
  let db: Database;
  let ws: SeededWorkspace;
  let api: TestApi;
  // Made as releases before tags made them: 32 random characters (and a CRC32 for keys), stored untagged.
  const oldKey = forgedApiKey();
  const oldFeedToken = guessedFeedToken();

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture('Before tags', 1));
    await db.query(
      `INSERT INTO api_keys (workspace_id, name, scopes, key_hash, last4, created_by, tagged)
       SELECT workspace_id, 'old key', scopes, $1, $2, created_by, false FROM api_keys WHERE workspace_id = $3 LIMIT 1`,
      [sha256(oldKey), oldKey.slice(-4), ws.workspaceId],
    );
    await db.query(
      `INSERT INTO feed_tokens (workspace_id, name, token_hash, last4, created_by, tagged)
       SELECT workspace_id, 'old feed', $1, $2, created_by, false FROM api_keys WHERE workspace_id = $3 LIMIT 1`,
      [sha256(oldFeedToken), oldFeedToken.slice(-4), ws.workspaceId],
    );
    api = await startTestApi(db, { TRUST_PROXY: 'loopback', KEY_CACHE_TTL_MS: '500' });
  });
  afterAll(async () => {
    await api?.close();
    await db?.close();
  });

  const withKey = (client: string, key: string) => api.call(COURSES, { headers: [['X-Forwarded-For', client], ['Authorization', `Bearer ${key}`]] });

  it('auth.key-format: keys and feed tokens issued before tags keep working, while others made from the format alone are refused unseen', async () => {
    const client = nextClient();
    expect((await withKey(client, oldKey)).status).toBe(200);
    expect((await api.call(`/api/calendar/v1/${oldFeedToken}.ics`, { headers: [['X-Forwarded-For', client]] })).status).toBe(200);
    const statements = await captureStatements(db, async () => {
      expect((await withKey(client, forgedApiKey())).status).toBe(401);
      expect((await api.call(`/api/calendar/v1/${guessedFeedToken()}.ics`, { headers: [['X-Forwarded-For', client]] })).status).toBe(404);
    });
    expect(statements.filter((text) => /_hash = \$1/.test(text))).toEqual([]);
  });

  it('auth.revocation: rotating a key issued before tags issues a tagged key that works at once; the old key gets 401', async () => {
    const client = nextClient();
    const id = (await db.query<{ id: string }>("SELECT id FROM api_keys WHERE name = 'old key'")).rows[0]!.id;
    const listed = await cliOn(db).json<Array<{ id: string; tagged: boolean }>>('key', 'list', '--workspace', ws.workspaceId);
    expect(listed.find((key) => key.id === id)?.tagged).toBe(false);
    expect((await cliOn(db).run('key', 'list', '--workspace', ws.workspaceId)).stdout).toContain('issued before tags: rotate to renew');
    const rotated = await cliOn(db).json<{ key: string }>('key', 'rotate', '--id', id);
    expect(isIssuedBy(await readIssuerTag(db), rotated.key)).toBe(true);
    expect((await withKey(client, rotated.key)).status).toBe(200);
    await expect.poll(async () => (await withKey(client, oldKey)).status, { timeout: 1000, interval: 50 }).toBe(401);
    // Found revoked once, it is refused from memory from then on.
    const statements = await captureStatements(db, async () => {
      for (let i = 0; i < 5; i += 1) expect((await withKey(client, oldKey)).status).toBe(401);
    });
    expect(statements.filter((text) => /key_hash = \$1/.test(text))).toEqual([]);
  });

  it('a writer that does not know about tags cannot issue an untagged credential', async () => {
    await expect(
      db.query(
        `INSERT INTO api_keys (workspace_id, name, scopes, key_hash, last4, created_by)
         SELECT workspace_id, 'older release', scopes, $1, 'abcd', created_by FROM api_keys WHERE workspace_id = $2 LIMIT 1`,
        [sha256(forgedApiKey()), ws.workspaceId],
      ),
    ).rejects.toThrow(/tagged/);
    const created = await cliOn(db).json<{ key: string }>('key', 'create', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--scopes', 'courses:read');
    expect(isIssuedBy(await readIssuerTag(db), created.key)).toBe(true);
  });
});
