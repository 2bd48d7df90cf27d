/** The bench's database (a PostgreSQL database of its own, or an embedded one), and its data at each size as import fixtures (deterministic). */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createApiKey } from '../src/auth/api-key-store.ts';
import { openDatabase, type Database } from '../src/db/database.ts';
import { importFixture } from '../src/fixtures/import-fixture.ts';

export interface BenchDatabase {
  db: Database;
  kind: string;
  version: string;
  /** What points a server process at this database. */
  serverEnv: Record<string, string>;
  close(): Promise<void>;
}

const serverVersion = async (db: Database) => (await db.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]!.v;

async function onAdmin(url: string, statement: string): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(statement);
  } finally {
    await admin.end();
  }
}

/** With DATABASE_URL a database created for this run and dropped after it; else an embedded one. */
export async function openBenchDatabase(): Promise<BenchDatabase> {
  const adminUrl = process.env.DATABASE_URL;
  if (adminUrl) {
    const name = `bench_${randomBytes(4).toString('hex')}`;
    await onAdmin(adminUrl, `CREATE DATABASE ${name}`);
    const url = Object.assign(new URL(adminUrl), { pathname: `/${name}` }).toString();
    const db = await openDatabase({ url, poolSize: 4 });
    return {
      db,
      kind: 'PostgreSQL',
      version: await serverVersion(db),
      serverEnv: { DATABASE_URL: url },
      async close() {
        await db.close();
        await onAdmin(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      },
    };
  }
  const dir = await mkdtemp(join(tmpdir(), 'bench-'));
  const db = await openDatabase({ dataDir: dir, shareEmbedded: true, poolSize: 4 });
  return {
    db,
    kind: 'embedded PGlite',
    version: await serverVersion(db),
    // The servers reach this process's embedded database through its socket.
    serverEnv: { DATA_DIR: dir },
    async close() {
      await db.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface Seeded {
  workspaceId: string;
  /** A key with every scope. */
  full: string;
  /** A key without participants:read. */
  limited: string;
}

export async function seed(db: Database, size: SizeSpec): Promise<Seeded> {
  const { workspaceId } = await importFixture(db, fixtureFor(size), {});
  const key = async (scopes: string) => (await createApiKey(db, { workspaceId, memberEmail: 'owner@bench.example', scopes })).key;
  return { workspaceId, full: await key('courses:read,bookings:read,participants:read'), limited: await key('courses:read,bookings:read') };
}

export const ENDPOINTS = [
  { label: '/courses', path: '/api/public/v1/courses', key: 'full' as const, answer: 'courses' },
  { label: '/bookings', path: '/api/public/v1/bookings', key: 'limited' as const, answer: 'bookings' },
  { label: '/bookings + participants:read', path: '/api/public/v1/bookings', key: 'full' as const, answer: 'bookings' },
];
export type Endpoint = (typeof ENDPOINTS)[number];

const iso = (ms: number) => new Date(ms).toISOString();
const BASE = Date.UTC(2026, 0, 1);

export interface SizeSpec {
  name: string;
  publishedRuns: number;
  sessionsPerRun: number;
  draftRuns: number;
  cancelledPerRun: number;
  bookings: number;
}

export const SIZES: SizeSpec[] = [
  { name: 'S', publishedRuns: 5, sessionsPerRun: 2, draftRuns: 0, cancelledPerRun: 0, bookings: 20 },
  { name: 'M', publishedRuns: 200, sessionsPerRun: 6, draftRuns: 20, cancelledPerRun: 1, bookings: 5_000 },
  { name: 'L', publishedRuns: 10_000, sessionsPerRun: 10, draftRuns: 0, cancelledPerRun: 0, bookings: 100_000 },
];

export function fixtureFor(size: SizeSpec): unknown {
  const templates = Array.from({ length: 20 }, (_, i) => ({ ref: `t${i}`, title: `Course ${i}, level ${i % 3}`, description: `About course ${i}; bring a notebook.` }));
  const runs = [];
  for (let r = 0; r < size.publishedRuns + size.draftRuns; r += 1) {
    const published = r < size.publishedRuns;
    const sessions = [];
    for (let s = 0; s < size.sessionsPerRun + size.cancelledPerRun; s += 1) {
      sessions.push({
        ref: `r${r}s${s}`,
        startsAt: iso(BASE + (r * 7 + s) * 3_600_000),
        durationMinutes: 60 + (s % 4) * 30,
        timeZone: ['Europe/Berlin', 'America/New_York', 'Asia/Tokyo'][r % 3],
        location: `Room ${r % 50}, building ${s}`,
        status: s < size.sessionsPerRun ? 'scheduled' : 'cancelled',
      });
    }
    runs.push({ ref: `r${r}`, template: `t${r % 20}`, status: published ? 'published' : 'draft', sessions });
  }
  const bookings = Array.from({ length: size.bookings }, (_, b) => ({
    ref: `b${b}`,
    courseRun: `r${b % size.publishedRuns}`,
    source: ['admin', 'public_page', 'widget', 'api'][b % 4],
    status: ['pending', 'confirmed', 'waitlisted', 'cancelled', 'expired'][b % 5],
    createdAt: iso(BASE + b * 60_000),
    updatedAt: iso(BASE + b * 60_000 + 30_000),
    participant: { name: `Participant ${b}`, email: `p${b}@bench.example` },
  }));
  return {
    workspace: { name: `Bench ${size.name}` },
    members: [{ ref: 'owner', email: 'owner@bench.example', name: 'Bench Owner', role: 'owner' }],
    courseTemplates: templates,
    courseRuns: runs,
    bookings,
  };
}
