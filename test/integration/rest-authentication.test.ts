import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeApiKey, rotateApiKey } from '../../src/auth/api-key-store.ts';
import { forgedApiKey } from '../support/forged-credentials.ts';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';
import { captureStatements, statementsOfRequests } from '../support/statements.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

const COURSES = '/api/public/v1/courses';
const BOOKINGS = '/api/public/v1/bookings';
const errorBody = (code: string) => ({ error: { code, message: expect.any(String) } });

describeOnEachDatabase('authentication of the public API on %s', (target) => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture('Auth', 3));
    api = await startTestApi(db);
  });
  afterAll(async () => {
    await api?.close();
    await db?.close();
  });

  const countStatements = async (work: () => Promise<unknown>) => (await captureStatements(db, work)).length;

  describe('auth.invalid-key: a missing, invalid, too long, revoked or rotated key gives 401 invalid_api_key', () => {
    it('a missing header gets 401 with WWW-Authenticate: Bearer', async () => {
      const response = await api.call(COURSES);
      expect(response.status).toBe(401);
      expect(response.body).toEqual(errorBody('invalid_api_key'));
      expect(response.headers['www-authenticate']).toBe('Bearer');
    });

    // auth.bearer: a header not in the form `Bearer <key>` is refused like an invalid key, its
    // message saying the form; a key in that form that is not active here gets the catalogue's.
    const FORM = 'The Authorization header must read "Bearer <API key>": the word Bearer, one space, then the key.';
    const KEY = 'The API key is missing, invalid, revoked or rotated.';
    it.each([
      ['an unknown well-formed key', () => `Bearer ${forgedApiKey()}`, KEY],
      ['a key with a wrong checksum', () => `Bearer ${ws.fullKey.slice(0, -1)}${ws.fullKey.endsWith('A') ? 'B' : 'A'}`, KEY],
      ['a key of another prefix', () => `Bearer svc_cal_${ws.fullKey.slice(8)}`, KEY],
      ['the Basic scheme', () => `Basic ${Buffer.from(`${ws.fullKey}:`).toString('base64')}`, FORM],
      ['a scheme with no space', () => `Bearer${ws.fullKey}`, FORM],
      ['a bare key without scheme', () => ws.fullKey, FORM],
      ['a key longer than 128 characters', () => `Bearer ${ws.fullKey}${'x'.repeat(100)}`, KEY],
      ['an empty bearer token', () => 'Bearer ', FORM],
      ['two tokens', () => `Bearer ${ws.fullKey} ${ws.fullKey}`, FORM],
    ])('%s gets 401 with error="invalid_token" and a message that says what to mend', async (_name, header, message) => {
      const response = await api.call(COURSES, { headers: [['Authorization', header()]] });
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ error: { code: 'invalid_api_key', message } });
      expect(response.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
    });

    it('a repeated Authorization header gets 401 even when one of them is valid', async () => {
      const response = await api.call(COURSES, { headers: [['Authorization', `Bearer ${ws.fullKey}`], ['Authorization', `Bearer ${ws.fullKey}`]] });
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ error: { code: 'invalid_api_key', message: 'Send one Authorization header, "Bearer <API key>".' } });
    });

    it('a revoked key gets 401', async () => {
      const seeded = await seedWorkspace(db, contractFixture('Revoked', 1));
      const before = await api.call(COURSES, { key: seeded.coursesOnlyKey });
      expect(before.status).toBe(200);
      const id = (await db.query<{ id: string }>('SELECT id FROM api_keys WHERE last4 = $1', [seeded.coursesOnlyKey.slice(-4)])).rows[0]!.id;
      await revokeApiKey(db, id);
      const after = await api.call(COURSES, { key: seeded.coursesOnlyKey });
      expect(after.status).toBe(401);
      expect(after.body).toEqual(errorBody('invalid_api_key'));
    });

    it('a rotated key gets 401 at once and its replacement works with the same scopes', async () => {
      const seeded = await seedWorkspace(db, contractFixture('Rotated', 1));
      const id = (await db.query<{ id: string }>('SELECT id FROM api_keys WHERE last4 = $1', [seeded.coursesOnlyKey.slice(-4)])).rows[0]!.id;
      const rotated = await rotateApiKey(db, id);
      expect((await api.call(COURSES, { key: seeded.coursesOnlyKey })).status).toBe(401);
      expect((await api.call(COURSES, { key: rotated.key })).status).toBe(200);
      expect((await api.call(BOOKINGS, { key: rotated.key })).status).toBe(403);
    });
  });

  it('auth.safe-message: the 401 message contains no hash and no internal id', async () => {
    const response = await api.call(COURSES, { headers: [['Authorization', `Bearer ${forgedApiKey()}`]] });
    const message = (response.body as { error: { message: string } }).error.message;
    expect(message).not.toMatch(/[0-9a-f]{16,}|key_|ws_|svc_/);
  });

  it('auth.bearer: the word Bearer is case-insensitive', async () => {
    for (const scheme of ['bearer', 'BEARER', 'bEaReR']) {
      const response = await api.call(COURSES, { headers: [['Authorization', `${scheme} ${ws.fullKey}`]] });
      expect(response.status, scheme).toBe(200);
    }
  });

  it('auth.max-length: malformed and over-long keys are refused before any database work', async () => {
    const statements = await countStatements(async () => {
      await api.call(COURSES, { headers: [['Authorization', `Bearer ${'a'.repeat(5000)}`]] });
      await api.call(COURSES, { headers: [['Authorization', `Bearer ${ws.fullKey.slice(0, -1)}${ws.fullKey.endsWith('0') ? '1' : '0'}`]] });
      await api.call(COURSES, { headers: [['Authorization', 'Bearer svc_api_short']] });
    });
    expect(statements).toBe(0);
  });

  it('reads the key and its workspace in one statement: /bookings then needs two more (the bookings\' versions, the bookings), /courses three more (the runs\' versions, runs with templates, sessions)', async () => {
    // The periodic write of last-used times may fall into the window: it is not the request's. A
    // change to every booking and session first, so that the answers are built, none of their
    // pieces reused from the response cache; the data version it reads before and after building
    // is counted apart (test/unit/answer-cache.test.ts).
    await db.query('UPDATE bookings SET status = status WHERE workspace_id = $1', [ws.workspaceId]);
    await db.query('UPDATE sessions SET location = location WHERE workspace_id = $1', [ws.workspaceId]);
    const ofRequest = async (work: () => Promise<unknown>) =>
      (await statementsOfRequests(db, work)).filter((text) => !text.includes('FROM data_versions'));
    const bookings = await ofRequest(() => api.call(BOOKINGS, { key: ws.fullKey }));
    expect(bookings).toHaveLength(3);
    expect(bookings[0]).toMatch(/FROM api_keys k JOIN workspaces w/);
    const courses = await ofRequest(() => api.call(COURSES, { key: ws.fullKey }));
    expect(courses).toHaveLength(4);
    expect(courses.some((text) => /^SELECT .* FROM workspaces t /.test(text))).toBe(false);
  });

  it('auth.storage: only a SHA-256 hash and the last 4 characters of a key are stored', async () => {
    const rows = await db.query('SELECT * FROM api_keys WHERE workspace_id = $1', [ws.workspaceId]);
    const stored = JSON.stringify(rows.rows.map((row) => ({ ...row, key_hash: (row.key_hash as Buffer).toString('hex') })));
    for (const key of [ws.fullKey, ws.bookingsKey, ws.coursesOnlyKey]) {
      expect(stored).not.toContain(key);
      expect(stored).not.toContain(key.slice(8, 40));
      expect(stored).toContain(key.slice(-4));
      expect(stored).toContain(createHash('sha256').update(key).digest('hex'));
    }
  });
});
