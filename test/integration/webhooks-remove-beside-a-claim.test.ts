import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';
import { OWNER_EMAIL, contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { cliOn } from '../support/cli.ts';
import { insertBooking, webhookEnv } from '../support/webhooks.ts';
import { describeWhere, missingFor } from '../support/variants.ts';

/**
 * `webhook remove` beside a worker that locks the same rows in another order: a claim leasing
 * deliveries of the endpoint being removed holds one of them while it waits for another. The
 * embedded database runs one transaction at a time, so only PostgreSQL can deadlock.
 */
describeWhere(missingFor('postgres'), '`webhook remove` when PostgreSQL picks it as a deadlock’s victim, on postgres', () => {
  let db: Database;
  let ws: SeededWorkspace;
  const env = webhookEnv();

  beforeAll(async () => {
    db = await openTestDatabase('postgres');
    ws = await seedWorkspace(db, contractFixture('Removal beside a claim', 1));
  });
  afterAll(async () => {
    await db?.close();
  });

  /** Until a backend other than `pid` waits for a row lock. */
  const someoneWaitsForALock = async (pid: number) => {
    for (let tries = 0; tries < 200; tries += 1) {
      const waiting = await db.query(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> $1 AND datname = current_database()`, [pid]);
      if ((waiting.rowCount ?? 0) > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error('no backend waited for a lock');
  };

  it('runs again after the deadlock and removes the endpoint: its pending deliveries are cancelled and the command says nothing on stderr', async () => {
    const cli = cliOn(db, env);
    const endpoint = await cli.json<{ id: string }>('webhook', 'add', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--url', 'https://receiver.example/hooks');
    await insertBooking(db, ws.workspaceId, ws.ids.r1!);
    await insertBooking(db, ws.workspaceId, ws.ids.r1!);
    const pending = await db.query<{ id: string }>(`SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 AND state = 'pending' ORDER BY id`, [endpoint.id]);
    expect(pending.rows).toHaveLength(2);

    let removal: ReturnType<typeof cli.run> | undefined;
    await db.transaction(async (worker) => {
      // The other side of the deadlock, as a claim holds it: one delivery leased, then the endpoint's row wanted.
      // Its own deadlock check waits longer, so that PostgreSQL picks the removal as the victim.
      await worker.query(`SET LOCAL deadlock_timeout = '20s'`);
      const [{ pid }] = (await worker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows as [{ pid: number }];
      await worker.query('SELECT 1 FROM webhook_deliveries WHERE id = $1 FOR UPDATE', [pending.rows[1]!.id]);
      removal = cli.run('webhook', 'remove', '--id', endpoint.id, '--json');
      await someoneWaitsForALock(pid);
      await worker.query('SELECT 1 FROM webhook_endpoints WHERE id = $1 FOR NO KEY UPDATE', [endpoint.id]);
    });
    const removed = await removal!;
    expect(removed.stderr).toBe('');
    expect(removed.code).toBe(0);
    expect(JSON.parse(removed.stdout)).toEqual({ id: endpoint.id, state: 'removed' });
    const states = await db.query<{ state: string }>('SELECT state::text FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY id', [endpoint.id]);
    expect(states.rows.map((row) => row.state)).toEqual(['cancelled', 'cancelled']);
    const listed = await cli.json<Array<{ id: string; state: string }>>('webhook', 'list', '--workspace', ws.workspaceId);
    expect(listed.find((row) => row.id === endpoint.id)?.state).toBe('removed');
  });
});
