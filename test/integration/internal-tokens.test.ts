import { createHash } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { cliOn } from '../support/cli.ts';
import { openTestDatabase } from '../support/databases.ts';
import { INTERNAL_TOKEN, startTestApi, type TestApi } from '../support/public-api.ts';
import { contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { captureStatements } from '../support/statements.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

interface AuditLine {
  audit: string;
  tokenId: string | null;
  tokenName: string | null;
  operationName: string | null;
  documentHash: string | null;
  status: number;
  durationMs: number;
  rows: number;
  personalColumns: string[];
  errorCodes: string[];
}

const ENTRY_POINTS = /* GraphQL */ `
  query EntryPoints($workspaceId: ID!, $bookingId: ID!, $courseRunId: ID!, $courseTemplateId: ID!) {
    workspace(id: $workspaceId) { id name bookingsConnection(first: 3) { nodes { id } } }
    booking(id: $bookingId) { id courseRun { id } participant { name } }
    courseRun(id: $courseRunId) { id template { title } bookingsConnection(first: 3) { nodes { id } } }
    courseTemplate(id: $courseTemplateId) { id title }
  }
`;

describeOnEachDatabase('named internal tokens on %s', (target) => {
  let db: Database;
  let api: TestApi;
  let a: SeededWorkspace;
  let b: SeededWorkspace;

  const cli = () => cliOn(db);
  const create = async (...argv: string[]) => cli().json<{ id: string; name: string; token: string; workspaces: string[] | null }>('internal-token', 'create', ...argv);
  const entryPoints = (ws: SeededWorkspace) => ({ workspaceId: ws.workspaceId, bookingId: ws.ids.b1, courseRunId: ws.ids.r1, courseTemplateId: ws.ids.t1 });
  const auditLines = () => api.logs.map((line) => JSON.parse(line) as AuditLine).filter((line) => line.audit === 'internal-graphql');

  beforeAll(async () => {
    db = await openTestDatabase(target);
    a = await seedWorkspace(db, contractFixture('Alpha', 12));
    b = await seedWorkspace(db, contractFixture('Beta', 12));
    api = await startTestApi(db);
  });
  afterAll(async () => {
    await api?.close();
    await db?.close();
  });

  it('internal-token create prints the token once; only its hash and last 4 characters are stored; list shows no secret', async () => {
    const text = await cli().run('internal-token', 'create', '--name', 'support', '--workspaces', `${a.workspaceId}, ${b.workspaceId}`);
    expect(text.code).toBe(0);
    const token = /svc_int_[0-9A-Za-z]{38}/.exec(text.stdout)?.[0];
    expect(token).toBeDefined();
    expect(text.stdout).toContain('It is shown only now.');
    const stored = await db.query<{ token_hash: Buffer; last4: string; workspaces: string[] }>('SELECT * FROM internal_tokens WHERE name = $1', ['support']);
    expect(stored.rows).toHaveLength(1);
    expect(JSON.stringify(stored.rows)).not.toContain(token!.slice(8));
    expect(stored.rows[0]!.token_hash.equals(createHash('sha256').update(token!).digest())).toBe(true);
    expect(stored.rows[0]!.last4).toBe(token!.slice(-4));
    expect(stored.rows[0]!.workspaces).toEqual([a.workspaceId, b.workspaceId]);

    const listed = await cli().json<Array<Record<string, unknown>>>('internal-token', 'list');
    expect(listed).toContainEqual({
      id: expect.stringMatching(/^itk_[0-9a-f]{32}$/),
      name: 'support',
      last4: token!.slice(-4),
      workspaces: [a.workspaceId, b.workspaceId],
      documents: 'any',
      costPerMinute: null,
      personalData: false,
      integrations: false,
      createdAt: expect.stringMatching(/Z$/),
      state: 'active',
    });
    const listText = await cli().run('internal-token', 'list');
    expect(listText.stdout).toContain('support');
    expect(`${JSON.stringify(listed)}${listText.stdout}`).not.toContain(token!);
  });

  it('internal-token create and revoke refuse bad input with a clear message, a non-zero exit and no write', async () => {
    await create('--name', 'taken');
    const count = async () => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM internal_tokens')).rows[0]!.n;
    const before = await count();
    for (const [argv, message] of [
      [['create', '--name', 'x', '--workspaces', 'ws_missing'], /No workspace with id "ws_missing"/],
      [['create', '--name', 'x', '--workspaces', `${a.workspaceId},,${b.workspaceId}`], /none of them empty/],
      [['create', '--name', 'taken'], /already named "taken"/],
      [['create', '--name', 'bootstrap'], /reserved for INTERNAL_API_TOKEN/],
      [['create', '--name', '  '], /--name must not be empty/],
      [['create', '--name', 'y'.repeat(101)], /longer than 100 characters/],
      [['create'], /required option '--name <name>'/],
      [['revoke', '--id', 'itk_missing'], /No internal token with id "itk_missing"/],
      [['revoke', '--name', 'nobody'], /No active internal token named "nobody"/],
      [['revoke'], /Give either --id or --name/],
      [['revoke', '--id', 'itk_x', '--name', 'taken'], /Give either --id or --name/],
    ] as const) {
      const result = await cli().run('internal-token', ...argv);
      expect(result.code, argv.join(' ')).not.toBe(0);
      expect(result.stderr).toMatch(/^error: /);
      expect(result.stderr).toMatch(message);
      expect(result.stdout).toBe('');
    }
    expect(await count()).toBe(before);
  });

  it('a token restricted to a workspace reads nothing of another workspace through any entry point: each row is null, exactly as if missing', async () => {
    const { token } = await create('--name', 'alpha-reporting', '--workspaces', a.workspaceId, '--personal-data');
    const own = await api.graphql(ENTRY_POINTS, entryPoints(a), token);
    expect(own.body.errors).toBeUndefined();
    expect(own.body.data).toMatchObject({
      workspace: { id: a.workspaceId, name: 'Alpha' },
      booking: { id: a.ids.b1, courseRun: { id: a.ids.r2 } },
      courseRun: { id: a.ids.r1, template: { title: 'Alpha First Aid' } },
      courseTemplate: { id: a.ids.t1 },
    });

    const other = await api.graphql(ENTRY_POINTS, entryPoints(b), token);
    const missing = await api.graphql(ENTRY_POINTS, { workspaceId: 'ws_missing', bookingId: 'bkg_missing', courseRunId: 'run_missing', courseTemplateId: 'tpl_missing' }, token);
    expect(other.body).toEqual({ data: { workspace: null, booking: null, courseRun: null, courseTemplate: null } });
    expect(other.status).toBe(missing.status);
    expect(other.body).toEqual(missing.body);

    // The bootstrap token and an unrestricted named token read the other workspace.
    const unrestricted = await create('--name', 'everything', '--personal-data');
    for (const reader of [INTERNAL_TOKEN, unrestricted.token]) {
      const all = await api.graphql(ENTRY_POINTS, entryPoints(b), reader);
      expect(all.body.data).toMatchObject({ workspace: { name: 'Beta' }, booking: { id: b.ids.b1 }, courseRun: { id: b.ids.r1 }, courseTemplate: { id: b.ids.t1 } });
    }
  });

  it('the restriction is in every generated statement of a restricted request, with the token lookup the only other one', async () => {
    const { token } = await create('--name', 'alpha-statements', '--workspaces', a.workspaceId, '--personal-data');
    const statements = await captureStatements(db, () => api.graphql(ENTRY_POINTS, entryPoints(b), token));
    expect(statements[0]).toMatch(/FROM internal_tokens WHERE token_hash = \$1 AND revoked_at IS NULL/);
    const generated = statements.slice(1);
    expect(generated.length).toBeGreaterThanOrEqual(4);
    for (const text of generated) {
      expect(text).toMatch(/\b[tl]\.(workspace_id|id) = ANY\(\$2\)/);
      // A row looked up with its page (alias l, the page's rows t): both restricted.
      if (/ LEFT JOIN LATERAL /.test(text)) expect(text).toMatch(/\bt\.workspace_id = ANY\(\$\d+\)/);
    }
  });

  it('a token restricted to two workspaces reads both', async () => {
    const { token } = await create('--name', 'both', '--workspaces', `${a.workspaceId},${b.workspaceId}`, '--personal-data');
    for (const ws of [a, b]) {
      const result = await api.graphql(ENTRY_POINTS, entryPoints(ws), token);
      expect(result.body.data).toMatchObject({ workspace: { id: ws.workspaceId }, booking: { id: ws.ids.b1 }, courseRun: { id: ws.ids.r1 }, courseTemplate: { id: ws.ids.t1 } });
    }
  });

  it('a revoked token is refused at once, whether revoked by id or by name', async () => {
    for (const by of ['id', 'name'] as const) {
      const issued = await create('--name', `short-lived-${by}`);
      const query = `{ __typename }`;
      expect((await api.graphql(query, {}, issued.token)).status).toBe(200);
      const revoked = await cli().json('internal-token', 'revoke', `--${by}`, by === 'id' ? issued.id : issued.name);
      expect(revoked).toEqual({ id: issued.id, name: issued.name, state: 'revoked' });
      const refused = await api.graphql(query, {}, issued.token);
      expect(refused.status).toBe(401);
      expect(refused.body).toEqual({ errors: [{ message: 'A valid internal API token is required.', extensions: { code: 'invalid_api_key' } }] });
    }
    // A revoked token's name can be given to a new token.
    expect((await create('--name', 'short-lived-id')).name).toBe('short-lived-id');
  });

  it('refuses malformed and unknown tokens; a malformed one costs no statement', async () => {
    const { token } = await create('--name', 'to-mangle');
    const mangled = `${token.slice(0, 20)}${token[20] === 'a' ? 'b' : 'a'}${token.slice(21)}`;
    const statements = await captureStatements(db, async () => {
      expect((await api.graphql('{ __typename }', {}, mangled)).status).toBe(401);
      expect((await api.graphql('{ __typename }', {}, 'svc_int_short')).status).toBe(401);
    });
    expect(statements).toEqual([]);
  });

  it('writes one audit line per request: token name, operation, document hash, duration, rows, the personal columns read; never variables or results', async () => {
    const { token, id } = await create('--name', 'auditor', '--workspaces', a.workspaceId, '--personal-data');
    const query = /* GraphQL */ `
      query Audited($workspaceId: ID!, $withParticipant: Boolean!) {
        workspace(id: $workspaceId) { name bookingsConnection(first: 5) { nodes { id participant @include(if: $withParticipant) { name email } } } }
      }
    `;
    const before = auditLines().length;
    const withPeople = await api.graphql(query, { workspaceId: a.workspaceId, withParticipant: true }, token);
    const without = await api.graphql(query, { workspaceId: a.workspaceId, withParticipant: false }, token);
    const refused = await api.graphql(query, { workspaceId: a.workspaceId, withParticipant: true }, 'svc_int_wrong');
    expect(withPeople.body.errors).toBeUndefined();
    expect(without.body.errors).toBeUndefined();
    expect(refused.status).toBe(401);
    const lines = auditLines().slice(before);
    expect(lines).toHaveLength(3);
    const hash = createHash('sha256').update(query).digest('hex');
    expect(lines[0]).toEqual({
      level: 30,
      time: expect.any(Number),
      msg: 'internal graphql request',
      audit: 'internal-graphql',
      tokenId: id,
      tokenName: 'auditor',
      operationName: 'Audited',
      documentHash: hash,
      status: 200,
      durationMs: expect.any(Number),
      // The workspace, and its first page of bookings read with one more row to know that another page follows.
      rows: 1 + 6,
      // The participants read with their bookings: the key they are found by, and the two fields selected.
      personalColumns: ['participants.booking_id', 'participants.email', 'participants.name'],
      errorCodes: [],
    });
    expect(lines[1]).toMatchObject({ tokenName: 'auditor', documentHash: hash, personalColumns: [], rows: 7 });
    expect(lines[2]).toMatchObject({ tokenId: null, tokenName: null, operationName: null, documentHash: null, status: 401, rows: 0 });

    const written = api.logs.slice(-20).join('\n');
    const result = JSON.stringify(withPeople.body);
    expect(result).toContain('Person');
    for (const secret of [a.workspaceId, 'Alpha', 'Person', '@alpha.example', token, token.slice(8)]) expect(written).not.toContain(secret);
  });

  it('audits the bootstrap token by its name and a refused query by its error code', async () => {
    const before = auditLines().length;
    await api.graphql(`query TooBig { workspace(id: "x") { bookingsConnection(first: 500) { nodes { id } } } }`);
    const [line] = auditLines().slice(before);
    expect(line).toMatchObject({ tokenId: null, tokenName: 'bootstrap', operationName: 'TooBig', status: 400, errorCodes: ['invalid_request'], rows: 0 });
  });
});
