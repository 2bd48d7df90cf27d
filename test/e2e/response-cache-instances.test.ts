import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cliOn } from '../support/cli.ts';
import { openSharedDatabase, type SharedDatabase } from '../support/databases.ts';
import { contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

const COURSES = '/api/public/v1/courses';
const BOOKINGS = '/api/public/v1/bookings';

/** One GET; resolves with its body and the `cache` field of the instance's request log line. */
function get(server: ServerProcess, path: string, key: string): Promise<{ status: number; text: string; cache: string | null }> {
  const requestId = randomUUID();
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}${path}`, { headers: { Authorization: `Bearer ${key}`, 'X-Request-Id': requestId } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', async () => {
        let line: string | undefined;
        for (let tries = 0; !line && tries < 200; tries += 1) {
          line = server.output().split('\n').find((entry) => entry.includes(requestId));
          if (!line) await new Promise((wait) => setTimeout(wait, 10));
        }
        if (!line) return reject(new Error(`no request log line for ${path}`));
        resolve({ status: res.statusCode ?? 0, text, cache: (JSON.parse(line) as { cache: string | null }).cache });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

describeOnEachDatabase('two API processes with response caches on %s', (target) => {
  let deployment: SharedDatabase;
  let one: ServerProcess;
  let two: ServerProcess;
  let ws: SeededWorkspace;

  beforeAll(async () => {
    deployment = await openSharedDatabase(target, 10);
    ws = await seedWorkspace(deployment.db, contractFixture('Instances', 10));
    [one, two] = await Promise.all([startServerProcess(deployment.env), startServerProcess(deployment.env)]);
  });
  afterAll(async () => {
    await one?.stop();
    await two?.stop();
    await deployment?.close();
  });

  /** Both instances answer from their caches: each has built the answer once before. */
  const warm = async (path: string, key: string) => {
    for (const server of [one, two]) {
      await get(server, path, key);
      const cached = await get(server, path, key);
      expect([cached.status, cached.cache]).toEqual([200, 'hit']);
    }
    return (await get(one, path, key)).text;
  };

  it('a change committed through plain SQL while both hold the answer cached is in each instance\'s very next answer', async () => {
    const before = await warm(BOOKINGS, ws.fullKey);
    const sql = new pg.Client({ connectionString: deployment.db.connectionString });
    await sql.connect();
    try {
      await sql.query('UPDATE participants SET email = $2 WHERE booking_id = $1', [ws.ids.b9, 'changed@instances.example']);
    } finally {
      await sql.end();
    }
    for (const server of [two, one]) {
      const next = await get(server, BOOKINGS, ws.fullKey);
      expect([next.status, next.cache]).toEqual([200, 'miss']);
      expect(next.text).toContain('"email":"changed@instances.example"');
      expect(next.text).not.toBe(before);
    }
    // Then each serves the new answer from its cache.
    for (const server of [one, two]) expect((await get(server, BOOKINGS, ws.fullKey)).cache).toBe('hit');
  });

  it('a course imported with the operator CLI is in the other instance\'s very next answer, after the first instance has answered with it', async () => {
    await warm(COURSES, ws.fullKey);
    const dir = await mkdtemp(join(tmpdir(), 'cache-import-'));
    try {
      const file = join(dir, 'fixture.json');
      const fixture = {
        members: [],
        courseTemplates: [{ ref: 'new', title: 'Imported between two polls', description: '' }],
        courseRuns: [{ ref: 'run', template: 'new', status: 'published', sessions: [{ ref: 's', startsAt: '2027-03-01T09:00:00.000Z', durationMinutes: 60, timeZone: 'UTC', location: 'Hall', status: 'scheduled' }] }],
        bookings: [],
      };
      await writeFile(file, JSON.stringify(fixture));
      await cliOn(deployment.db).json('import', '--file', file, '--workspace', ws.workspaceId);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const first = await get(one, COURSES, ws.fullKey);
    expect(first.text).toContain('Imported between two polls');
    const other = await get(two, COURSES, ws.fullKey);
    expect([other.cache, other.text]).toEqual(['miss', first.text]);
  });
});
