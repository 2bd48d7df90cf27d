/**
 * What the data-version triggers cost writers: 1,000 bookings inserted into one workspace by 10
 * concurrent writers, each booking its own transaction, with the triggers and without them (the
 * data-version triggers of bookings and participants disabled), in alternating rounds. A webhook
 * endpoint is registered, so the booking trigger of the webhooks migration records an event,
 * a delivery and a job for every booking, as in production.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Database } from '../src/db/database.ts';
import { importFixture } from '../src/fixtures/import-fixture.ts';
import type { WriteVariant } from './results.ts';

const BOOKINGS = 1000;
const WRITERS = 10;
const DATA_VERSION_TRIGGERS = ['bookings_data_version_insert ON bookings', 'participants_data_version_insert ON participants'];


type Writer = (client: pg.PoolClient, workspaceId: string, runId: string) => Promise<void>;

const VARIANTS: Array<[string, Writer]> = [
  [
    'one INSERT per booking',
    async (client, workspaceId, runId) => {
      await client.query("INSERT INTO bookings (workspace_id, course_run_id, source, status) VALUES ($1, $2, 'widget', 'pending')", [workspaceId, runId]);
    },
  ],
  [
    'booking and participant in one transaction',
    async (client, workspaceId, runId) => {
      await client.query('BEGIN');
      try {
        const booking = await client.query<{ id: string }>(
          "INSERT INTO bookings (workspace_id, course_run_id, source, status) VALUES ($1, $2, 'widget', 'pending') RETURNING id",
          [workspaceId, runId],
        );
        await client.query("INSERT INTO participants (booking_id, name, email) VALUES ($1, 'Bench Person', 'person@bench.example')", [booking.rows[0]!.id]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      }
    },
  ],
];

async function timed(pool: pg.Pool, write: Writer, workspaceId: string, runId: string): Promise<number> {
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      const client = await pool.connect();
      try {
        for (let i = 0; i < BOOKINGS / WRITERS; i += 1) await write(client, workspaceId, runId);
      } finally {
        client.release();
      }
    }),
  );
  return Number(process.hrtime.bigint() - started) / 1e6;
}

export async function measureWriteCost(db: Database, rounds: number): Promise<WriteVariant[]> {
  const { workspaceId, ids } = await importFixture(
    db,
    {
      workspace: { name: 'Bench writes' },
      members: [{ ref: 'owner', email: 'owner@writes.example', name: 'Owner', role: 'owner' }],
      courseTemplates: [{ ref: 't', title: 'Writes' }],
      courseRuns: [{ ref: 'r', template: 't', status: 'published', sessions: [] }],
      bookings: [],
    },
    {},
  );
  // No worker runs on this database now: the jobs only accumulate.
  await db.query(
    `INSERT INTO webhook_endpoints (workspace_id, url, secret_ciphertext, created_by)
     SELECT $1, 'https://receiver.bench.example/hooks', $2, id FROM members WHERE workspace_id = $1`,
    [workspaceId, randomBytes(64)],
  );
  const pool = new pg.Pool({ connectionString: db.connectionString, max: WRITERS });
  pool.on('error', () => {});
  const triggers = async (enabled: boolean) => {
    for (const trigger of DATA_VERSION_TRIGGERS) {
      const [name, table] = trigger.split(' ON ');
      await db.query(`ALTER TABLE ${table} ${enabled ? 'ENABLE' : 'DISABLE'} TRIGGER ${name}`);
    }
  };
  const results: WriteVariant[] = [];
  try {
    for (const [name, write] of VARIANTS) {
      const variant: WriteVariant = { name, withTriggers: [], withoutTriggers: [] };
      await timed(pool, write, workspaceId, ids.r!);
      for (let round = 0; round < rounds; round += 1) {
        for (const enabled of round % 2 === 0 ? [true, false] : [false, true]) {
          await triggers(enabled);
          (enabled ? variant.withTriggers : variant.withoutTriggers).push(await timed(pool, write, workspaceId, ids.r!));
        }
      }
      results.push(variant);
    }
  } finally {
    await triggers(true);
    await pool.end();
  }
  return results;
}
