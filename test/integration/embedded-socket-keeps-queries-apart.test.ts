import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';

/**
 * A link to the embedded database's socket that delivers what each client sends in pieces of 16
 * bytes, one piece per event-loop turn, as a busy or distant link delivers them: a client's
 * Parse, Bind, Execute and Sync then reach the server in separate reads, between other clients'.
 * Sent in one piece, as pg writes them, they all run before the next client's read is handled,
 * and the interleaving this test is about (electric-sql/pglite#1046) rarely shows.
 */
interface SlowLink {
  /** The directory to give pg as `host`. */
  directory: string;
  /** The next client's link breaks just before its first query's last five bytes (pg's Sync). */
  breakBeforeNextSync(): void;
  close(): Promise<void>;
}

const PIECE = 16;

async function openSlowLink(socketDirectory: string): Promise<SlowLink> {
  const directory = await mkdtemp(join(tmpdir(), 'slow-link-'));
  let breakNext = false;
  const links = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(join(socketDirectory, '.s.PGSQL.5432'));
    links.add(client).add(upstream);
    const breaks = breakNext;
    breakNext = false;
    let chunks = 0;
    let sending = Promise.resolve();
    upstream.pipe(client);
    client.on('data', (chunk: Buffer) => {
      chunks += 1;
      // The first chunk is the startup message, the second the first query.
      const broken = breaks && chunks === 2;
      const bytes = broken ? chunk.subarray(0, chunk.length - 5) : chunk;
      sending = sending.then(async () => {
        for (let at = 0; at < bytes.length; at += PIECE) {
          upstream.write(bytes.subarray(at, at + PIECE));
          await nextTurn();
        }
        if (broken) {
          // Long enough for the server to run what arrived, then the client is gone.
          await new Promise((resolve) => setTimeout(resolve, 50));
          upstream.destroy();
        }
      });
    });
    const closeBoth = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', closeBoth).on('error', closeBoth);
    upstream.on('close', closeBoth).on('error', closeBoth);
  });
  await new Promise<void>((resolve) => server.listen(join(directory, '.s.PGSQL.5432'), resolve));
  return {
    directory,
    breakBeforeNextSync: () => (breakNext = true),
    async close() {
      for (const socket of links) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/** What one client's statement gave: its rows, or the error's message. */
type Outcome = unknown[] | string;

async function outcome(run: () => Promise<pg.QueryResult>): Promise<Outcome> {
  try {
    return (await run()).rows;
  } catch (error) {
    return (error as Error).message;
  }
}

describe('the embedded database socket with several clients at once', () => {
  let db: Database;
  let link: SlowLink;

  beforeAll(async () => {
    db = await openTestDatabase('embedded');
    link = await openSlowLink(new URL(db.connectionString).searchParams.get('host')!);
  });
  afterAll(async () => {
    await link?.close();
    await db?.close();
  });

  const client = async () => {
    // A client stuck behind another's unfinished statement fails within seconds, not at the test's timeout.
    const connection = new pg.Client({ host: link.directory, user: 'postgres', database: 'postgres', connectionTimeoutMillis: 15_000, query_timeout: 15_000 });
    connection.on('error', () => {});
    await connection.connect();
    return connection;
  };

  it('runs each client\'s parameterized statements whole, so every client gets its own results and writes what it meant', async () => {
    const clients = await Promise.all(Array.from({ length: 6 }, client));
    try {
      // Three statement shapes, so that a Bind meeting another client's Parse cannot go unnoticed.
      const runs = clients.map(async (connection, k) => {
        const outcomes: Outcome[] = [];
        for (let i = 0; i < 8; i += 1) {
          if (k % 3 === 0) outcomes.push(await outcome(() => connection.query('SELECT $1::int + 1 AS n', [k * 100 + i])));
          else if (k % 3 === 1) outcomes.push(await outcome(() => connection.query('SELECT $1::text || $2::text AS s', [`client ${k}`, ` query ${i}`])));
          else outcomes.push(await outcome(() => connection.query('INSERT INTO workspaces (name) VALUES ($1) RETURNING name', [`apart ${k}.${i}`])));
        }
        return outcomes;
      });
      const outcomes = await Promise.all(runs);
      outcomes.forEach((got, k) => {
        const expected = Array.from({ length: 8 }, (_, i) =>
          k % 3 === 0 ? [{ n: k * 100 + i + 1 }] : k % 3 === 1 ? [{ s: `client ${k} query ${i}` }] : [{ name: `apart ${k}.${i}` }],
        );
        expect(got, `client ${k}`).toEqual(expected);
      });
      const written = await db.query<{ name: string; n: number }>("SELECT name, count(*)::int AS n FROM workspaces WHERE name LIKE 'apart %' GROUP BY name ORDER BY name");
      const names = [2, 5].flatMap((k) => Array.from({ length: 8 }, (_, i) => ({ name: `apart ${k}.${i}`, n: 1 })));
      expect(written.rows).toEqual(names);
    } finally {
      await Promise.all(clients.map((connection) => connection.end().catch(() => {})));
    }
  });

  it('serves the other clients when one goes away in the middle of a statement, before its Sync', async () => {
    link.breakBeforeNextSync();
    const leaving = await client();
    const left = outcome(() => leaving.query('SELECT $1::int AS never_synced', [1]));
    const others = await Promise.all(Array.from({ length: 3 }, client));
    try {
      const answers = await Promise.all(others.map((connection, k) => outcome(() => connection.query('SELECT $1::text AS s', [`after ${k}`]))));
      expect(answers).toEqual([[{ s: 'after 0' }], [{ s: 'after 1' }], [{ s: 'after 2' }]]);
      expect(typeof (await left)).toBe('string');
    } finally {
      await Promise.all([leaving, ...others].map((connection) => connection.end().catch(() => {})));
    }
  });
});
