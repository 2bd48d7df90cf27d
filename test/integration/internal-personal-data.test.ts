import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readCatalog } from '../../src/model/catalog.ts';
import type { Database } from '../../src/db/database.ts';
import { overlay } from '../../src/model/overlay.ts';
import { deriveModel } from '../../src/model/resource-model.ts';
import { cliOn } from '../support/cli.ts';
import { openTestDatabase } from '../support/databases.ts';
import { INTERNAL_TOKEN, startTestApi, type TestApi } from '../support/public-api.ts';
import { contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { captureStatements } from '../support/statements.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

const GUIDE = await readFile(new URL('../../docs/internal-graphql.md', import.meta.url), 'utf8');

/**
 * A table with a personal column, as docs/adding-a-resource.md adds one: coaches, their e-mail
 * personal. Named for this test alone (planted_…), so that a resource the service gains never
 * meets it.
 */
const COACHES = /* SQL */ `
  CREATE TABLE planted_coaches (
    id text PRIMARY KEY DEFAULT new_id('pco'),
    workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name text NOT NULL,
    bio text,
    email text NOT NULL
  );
  ALTER TABLE sessions ADD COLUMN planted_coach_id text REFERENCES planted_coaches (id);
`;

interface AuditLine {
  audit?: string;
  tokenName: string;
  status: number;
  personalColumns: string[];
  errorCodes: string[];
}

/** Statements that read or compare a personal column: a coach's e-mail, or anything of participants. */
const PERSONAL = /\.email\b|\bparticipants\b/;

describeOnEachDatabase('personal data per column and per token, through internal GraphQL on %s', (target) => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;
  let coach: string;
  let withoutGrant: string;
  let withGrant: string;

  const graphql = (token: string, query: string, variables: Record<string, unknown> = {}) => api.graphql(query, variables, token);
  const lastAudit = () => api.logs.map((line) => JSON.parse(line) as AuditLine).findLast((line) => line.audit === 'internal-graphql')!;

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture('Personal', 8));
    await db.query(COACHES);
    coach = (
      await db.query<{ id: string }>(`INSERT INTO planted_coaches (workspace_id, name, bio, email) VALUES ($1, 'Grace Hopper', 'Compilers.', 'grace@personal.example') RETURNING id`, [ws.workspaceId])
    ).rows[0]!.id;
    await db.query(`INSERT INTO planted_coaches (workspace_id, name, email) VALUES ($1, 'Alan Turing', 'alan@personal.example')`, [ws.workspaceId]);
    await db.query('UPDATE sessions SET planted_coach_id = $1 WHERE workspace_id = $2', [coach, ws.workspaceId]);
    const model = deriveModel(await readCatalog(db), { ...overlay, planted_coaches: { order: ['name'], personalData: ['email'] } });
    api = await startTestApi(db, {}, { model });
    const cli = cliOn(db);
    withoutGrant = (await cli.json<{ token: string; personalData: boolean }>('internal-token', 'create', '--name', 'reporting')).token;
    withGrant = (await cli.json<{ token: string }>('internal-token', 'create', '--name', 'support', '--personal-data')).token;
  });
  afterAll(async () => {
    await api?.close();
    await db?.close();
  });

  it('a token without the grant is refused an operation that selects a personal column, before any statement reads it; the refusal names the field', async () => {
    const statements = await captureStatements(db, async () => {
      const refused = await graphql(withoutGrant, 'query ($id: ID!) { plantedCoach(id: $id) { name email } }', { id: coach });
      expect(refused.status).toBe(403);
      expect(refused.body.data).toBeUndefined();
      expect(refused.body.errors).toEqual([
        {
          message:
            'This token has no personal-data grant, and the operation reads or filters on personal data: PlantedCoach.email. An operator grants it with: npm run admin -- internal-token update --name reporting --personal-data',
          extensions: { code: 'PERSONAL_DATA_NOT_GRANTED' },
        },
      ]);
    });
    // The token's own lookup, and nothing of coaches.
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatch(/FROM internal_tokens/);
    expect(lastAudit()).toMatchObject({ tokenName: 'reporting', status: 403, personalColumns: [], errorCodes: ['PERSONAL_DATA_NOT_GRANTED'] });
  });

  it('nor may it filter on one, in the document or through a variable, nor read a table that is personal as a whole (participants)', async () => {
    const statements = await captureStatements(db, async () => {
      const inline = await graphql(withoutGrant, `query ($id: ID!) { workspace(id: $id) { plantedCoachesConnection(filter: { email: { eq: "grace@personal.example" } }) { totalCount } } }`, { id: ws.workspaceId });
      expect(inline.status).toBe(403);
      expect(inline.body.errors?.[0]?.message).toContain('personal data: PlantedCoachFilter.email.');
      const variable = await graphql(withoutGrant, `query ($id: ID!, $f: PlantedCoachFilter) { workspace(id: $id) { plantedCoachesConnection(filter: $f) { nodes { name } } } }`, {
        id: ws.workspaceId,
        f: { email: { in: ['grace@personal.example'] } },
      });
      expect(variable.status).toBe(403);
      expect(variable.body.errors?.[0]?.extensions?.code).toBe('PERSONAL_DATA_NOT_GRANTED');
      const participants = await graphql(withoutGrant, `query ($id: ID!) { booking(id: $id) { id ...P } } fragment P on Booking { participant { name } }`, { id: ws.ids.b1 });
      expect(participants.status).toBe(403);
      expect(participants.body.errors?.[0]?.message).toContain('personal data: Booking.participant, Participant.name.');
      // A skipped selection is not a selection.
      const skipped = await graphql(withoutGrant, `query ($id: ID!, $people: Boolean!) { booking(id: $id) { id participant @include(if: $people) { name } } }`, { id: ws.ids.b1, people: false });
      expect(skipped.status).toBe(200);
      expect(skipped.body.data).toEqual({ booking: { id: ws.ids.b1 } });
    });
    for (const text of statements) expect(text).not.toMatch(PERSONAL);
  });

  it('everything else of the same table it reads as any token does, and no statement it causes names a personal column, lookups and joined rows included', async () => {
    const query = /* GraphQL */ `
      query ($id: ID!, $coach: ID!) {
        plantedCoach(id: $coach) { id name bio }
        workspace(id: $id) {
          plantedCoachesConnection(first: 1, filter: { name: { in: ["Alan Turing", "Grace Hopper"] } }) { totalCount nodes { name } pageInfo { endCursor } }
          sessionsConnection(first: 3) { nodes { id plantedCoach { name bio } } }
        }
      }
    `;
    let answer: Awaited<ReturnType<typeof graphql>> | undefined;
    const statements = await captureStatements(db, async () => {
      answer = await graphql(withoutGrant, query, { id: ws.workspaceId, coach });
    });
    expect(answer!.body.errors).toBeUndefined();
    const data = answer!.body.data as {
      plantedCoach: unknown;
      workspace: { plantedCoachesConnection: { totalCount: number; nodes: unknown[]; pageInfo: { endCursor: string } }; sessionsConnection: { nodes: Array<{ plantedCoach: unknown }> } };
    };
    expect(data.plantedCoach).toEqual({ id: coach, name: 'Grace Hopper', bio: 'Compilers.' });
    expect(data.workspace.plantedCoachesConnection).toMatchObject({ totalCount: 2, nodes: [{ name: 'Alan Turing' }] });
    // A cursor carries the list's order values (the name, then the id), never a personal value.
    expect(Buffer.from(data.workspace.plantedCoachesConnection.pageInfo.endCursor, 'base64url').toString('utf8')).not.toContain('@personal.example');
    expect(data.workspace.sessionsConnection.nodes[0]!.plantedCoach).toEqual({ name: 'Grace Hopper', bio: 'Compilers.' });
    const generated = statements.filter((text) => !/FROM internal_tokens/.test(text));
    expect(generated.some((text) => /FROM planted_coaches/.test(text))).toBe(true);
    expect(generated.some((text) => /LEFT JOIN planted_coaches/.test(text))).toBe(true);
    for (const text of generated) expect(text).not.toMatch(PERSONAL);
    expect(lastAudit()).toMatchObject({ tokenName: 'reporting', status: 200, personalColumns: [] });
  });

  it('a token with the grant reads and filters on a personal column; it is read only when selected, and the audit trail names it', async () => {
    const unselected = await captureStatements(db, () => graphql(withGrant, 'query ($id: ID!) { plantedCoach(id: $id) { name } }', { id: coach }));
    expect(unselected.filter((text) => /FROM planted_coaches/.test(text))).toHaveLength(1);
    for (const text of unselected) expect(text).not.toMatch(PERSONAL);
    expect(lastAudit()).toMatchObject({ tokenName: 'support', personalColumns: [] });

    let read: Awaited<ReturnType<typeof graphql>> | undefined;
    const selected = await captureStatements(db, async () => {
      read = await graphql(withGrant, 'query ($id: ID!) { plantedCoach(id: $id) { name email } }', { id: coach });
    });
    expect(read!.body).toEqual({ data: { plantedCoach: { name: 'Grace Hopper', email: 'grace@personal.example' } } });
    expect(selected.find((text) => /FROM planted_coaches/.test(text))).toMatch(/t\.email AS "email"/);
    expect(lastAudit()).toMatchObject({ tokenName: 'support', status: 200, personalColumns: ['planted_coaches.email'] });

    const filtered = await graphql(withGrant, `query ($id: ID!) { workspace(id: $id) { plantedCoachesConnection(filter: { email: { eq: "alan@personal.example" } }) { nodes { name } } } }`, { id: ws.workspaceId });
    expect(filtered.body).toEqual({ data: { workspace: { plantedCoachesConnection: { nodes: [{ name: 'Alan Turing' }] } } } });
    expect(lastAudit()).toMatchObject({ personalColumns: ['planted_coaches.email'] });

    const people = await graphql(withGrant, 'query ($id: ID!) { booking(id: $id) { participant { email } } }', { id: ws.ids.b1 });
    expect(people.body.errors).toBeUndefined();
    expect(lastAudit()).toMatchObject({ personalColumns: ['participants.booking_id', 'participants.email'] });
    // The bootstrap token has the grant.
    expect((await graphql(INTERNAL_TOKEN, 'query ($id: ID!) { plantedCoach(id: $id) { email } }', { id: coach })).body).toEqual({ data: { plantedCoach: { email: 'grace@personal.example' } } });
  });

  it('internal-token update grants and withdraws it from the next request on; list shows it', async () => {
    const cli = cliOn(db);
    const { token } = await cli.json<{ token: string }>('internal-token', 'create', '--name', 'changing');
    const ask = () => graphql(token, 'query ($id: ID!) { plantedCoach(id: $id) { email } }', { id: coach });
    expect((await ask()).status).toBe(403);
    expect(await cli.json('internal-token', 'update', '--name', 'changing', '--personal-data')).toMatchObject({ name: 'changing', personalData: true });
    expect((await ask()).body).toEqual({ data: { plantedCoach: { email: 'grace@personal.example' } } });
    expect((await cli.run('internal-token', 'list')).stdout).toMatch(/changing .*personal data granted/);
    expect(await cli.json('internal-token', 'update', '--name', 'changing', '--no-personal-data')).toMatchObject({ personalData: false });
    expect((await ask()).status).toBe(403);
    expect((await cli.run('internal-token', 'list')).stdout).toMatch(/changing .*no personal data/);
  });

  it('the refusal docs/internal-graphql.md shows is the one a token without the grant gets', async () => {
    const shown = /```json\n(\{"errors":\[\{"message":"This token has no personal-data grant[^\n]*)\n```/.exec(GUIDE)![1]!;
    const answer = await graphql(withoutGrant, 'query ($id: ID!) { booking(id: $id) { participant { name } } }', { id: ws.ids.b1 });
    expect(answer.body).toEqual(JSON.parse(shown));
  });
});

describeOnEachDatabase('tokens that existed before the personal-data grant, on %s', (target) => {
  let db: Database;
  afterAll(async () => {
    await db?.close();
  });

  it('keep what they read: the migration gives them the grant; a token created after it has none', async () => {
    db = await openTestDatabase(target);
    // The table as the release before the grant left it, with one token; then the migration's own
    // statements (run by hand: later migrations of this checkout, applied already, would keep
    // node-pg-migrate from running an earlier one again).
    const migration = await readFile(new URL('../../src/db/migrations/1763801600000_internal-token-personal-data.sql', import.meta.url), 'utf8');
    const up = migration.slice(migration.indexOf('-- Up Migration'), migration.indexOf('-- Down Migration'));
    await db.query('ALTER TABLE internal_tokens DROP COLUMN personal_data');
    await db.query(`INSERT INTO internal_tokens (name, token_hash, last4) VALUES ('older', sha256('older'::bytea), 'abcd')`);
    await db.query(up);
    const cli = cliOn(db);
    await cli.json('internal-token', 'create', '--name', 'newer');
    const listed = await cli.json<Array<{ name: string; personalData: boolean }>>('internal-token', 'list');
    expect(listed.map(({ name, personalData }) => ({ name, personalData }))).toEqual([
      { name: 'older', personalData: true },
      { name: 'newer', personalData: false },
    ]);
  });
});
