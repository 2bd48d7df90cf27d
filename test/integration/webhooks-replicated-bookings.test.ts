import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { cliOn } from '../support/cli.ts';
import { openTestDatabase } from '../support/databases.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { OWNER_EMAIL, contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { idLiteral, withServerFile } from '../support/server-files.ts';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { bookingOf, insertBooking, webhookEnv } from '../support/webhooks.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

const newId = () => `bkg_${randomUUID().replace(/-/g, '')}`;

describeOnEachDatabase('booking.created for bookings written in replica role on %s', (target) => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;
  let plain: WebhookReceiver;
  let personal: WebhookReceiver;
  /** A client of its own: every write here is plain SQL, as a replication or a restore writes. */
  let sql: pg.Client;
  const env = webhookEnv();

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture('Replicated hooks', 3));
    [plain, personal] = await Promise.all([startReceiver(), startReceiver()]);
    const cli = cliOn(db, env);
    await cli.json('webhook', 'add', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--url', plain.url);
    await cli.json('webhook', 'add', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--url', personal.url, '--participants');
    api = await startTestApi(db, env, { trustedCertificates: [plain.certificate] });
    sql = new pg.Client({ connectionString: db.connectionString });
    await sql.connect();
  });
  afterAll(async () => {
    await sql?.end();
    await api?.close();
    await plain?.close();
    await personal?.close();
    await db?.close();
  });

  /** Statements in one committed transaction; the role is set for it alone (PGlite shares one session among connections). */
  async function write(statements: Array<[string, unknown[]?]>, role: 'origin' | 'replica'): Promise<void> {
    await sql.query('BEGIN');
    try {
      if (role === 'replica') await sql.query('SET LOCAL session_replication_role = replica');
      for (const [text, values] of statements) await sql.query(text, values);
      await sql.query('COMMIT');
    } catch (error) {
      await sql.query('ROLLBACK');
      throw error;
    }
  }

  const insertStatement = (id: string): [string, unknown[]] => [
    "INSERT INTO bookings (id, workspace_id, course_run_id, source, status) VALUES ($1, $2, $3, 'api', 'confirmed')",
    [id, ws.workspaceId, ws.ids.r1],
  ];
  const eventsOf = async (id: string) => (await sql.query('SELECT 1 FROM webhook_events WHERE booking_id = $1', [id])).rowCount;
  const deliveredTo = (receiver: WebhookReceiver, id: string) => receiver.received.filter((delivery) => bookingOf(delivery).id === id).length;
  /** Waits until both endpoints got every booking named, then a while for duplicates, were there any. */
  async function delivered(ids: string[]): Promise<void> {
    for (const receiver of [plain, personal]) await receiver.waitFor(() => ids.every((id) => deliveredTo(receiver, id) > 0));
    await new Promise((resolve) => setTimeout(resolve, 300));
  }

  it('webhooks.guarantee: a booking inserted in replica role, as logical replication applies it, produces exactly one event, delivered once to each endpoint', async () => {
    const id = newId();
    await write([insertStatement(id), ["INSERT INTO participants (booking_id, name, email) VALUES ($1, 'Replicated Person', 'replicated@example.com')", [id]]], 'replica');
    await delivered([id]);
    expect(await eventsOf(id)).toBe(1);
    expect([deliveredTo(plain, id), deliveredTo(personal, id)]).toEqual([1, 1]);
    const withParticipant = personal.received.find((delivery) => bookingOf(delivery).id === id)!;
    expect(bookingOf(withParticipant).participant).toEqual({ name: 'Replicated Person', email: 'replicated@example.com' });
  });

  it('webhooks.guarantee: bookings copied in replica role, as the initial synchronisation of a subscription copies them, produce one event each (docs/webhooks.md says how to subscribe without)', async () => {
    const ids = [newId(), newId()];
    const rows = ids.map((id) => `SELECT ${idLiteral(id)}, ${idLiteral(ws.workspaceId)}, ${idLiteral(ws.ids.r2!)}, 'widget', 'pending'`).join(' UNION ALL ');
    await withServerFile(sql, target, rows, (file) =>
      write([[`COPY bookings (id, workspace_id, course_run_id, source, status) FROM '${file}' WITH (FORMAT csv)`]], 'replica'),
    );
    await delivered(ids);
    for (const id of ids) expect([await eventsOf(id), deliveredTo(plain, id), deliveredTo(personal, id)]).toEqual([1, 1, 1]);
  });

  it('a booking loaded with its table\'s triggers disabled, as pg_restore --disable-triggers loads it, produces no event; after migrate, inserts in either role produce one each', async () => {
    const restored = newId();
    await write([['ALTER TABLE bookings DISABLE TRIGGER ALL'], insertStatement(restored), ['ALTER TABLE bookings ENABLE TRIGGER ALL']], 'origin');
    await migrate(db);
    const ordinary = await insertBooking(db, ws.workspaceId, ws.ids.r1!);
    const replicated = newId();
    await write([insertStatement(replicated)], 'replica');
    await delivered([ordinary, replicated]);
    expect(await eventsOf(restored)).toBe(0);
    expect([deliveredTo(plain, restored), deliveredTo(personal, restored)]).toEqual([0, 0]);
    for (const id of [ordinary, replicated]) expect([await eventsOf(id), deliveredTo(plain, id), deliveredTo(personal, id)]).toEqual([1, 1, 1]);
  });
});
