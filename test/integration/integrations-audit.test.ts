import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { cliOn } from '../support/cli.ts';
import { openTestDatabase } from '../support/databases.ts';
import { postGraphQL } from '../support/internal-graphql.ts';
import { startTestApi, type GraphQLResponse, type TestApi } from '../support/public-api.ts';
import { OWNER_EMAIL, contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { insertBooking, verifyDelivery, webhookEnv } from '../support/webhooks.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

const ADMIN = 'admin@seed.example';

interface Entry {
  memberEmail: string | null;
  operation: string;
  targetId: string | null;
  source: string;
  at: string;
}

/** Every mutation of the area, each with the selection its test reads. */
const MUTATIONS = /* GraphQL */ `
  mutation CreateKey($w: ID!, $m: String!) { createApiKey(workspaceId: $w, member: $m, input: { name: "dashboard key", scopes: ["courses:read"] }) { id key } }
  mutation UpdateKey($w: ID!, $m: String!, $id: ID!) { updateApiKey(workspaceId: $w, member: $m, id: $id, input: { name: "renamed", expiresIn: "30d" }) { id name expiresAt } }
  mutation RotateKey($w: ID!, $m: String!, $id: ID!) { rotateApiKey(workspaceId: $w, member: $m, id: $id) { id key expiresAt } }
  mutation RevokeKey($w: ID!, $m: String!, $id: ID!) { revokeApiKey(workspaceId: $w, member: $m, id: $id) { id state } }
  mutation AddEndpoint($w: ID!, $m: String!, $url: String!) { addWebhookEndpoint(workspaceId: $w, member: $m, input: { url: $url, events: ["booking.created"] }) { id secret } }
  mutation UpdateEndpoint($w: ID!, $m: String!, $id: ID!) { updateWebhookEndpoint(workspaceId: $w, member: $m, id: $id, input: { events: ["booking.created", "booking.updated"] }) { id events } }
  mutation TestEndpoint($w: ID!, $m: String!, $id: ID!) { sendWebhookTestEvent(workspaceId: $w, member: $m, id: $id) { event type ok httpStatus answerStart stillDisabled } }
  mutation Resend($w: ID!, $m: String!, $id: ID!, $event: ID!) { resendWebhookDelivery(workspaceId: $w, member: $m, endpointId: $id, eventId: $event) { ok httpStatus } }
  mutation Recover($w: ID!, $m: String!, $id: ID!, $since: String!) { recoverWebhookDeliveries(workspaceId: $w, member: $m, id: $id, since: $since) { recovered } }
  mutation RotateSecret($w: ID!, $m: String!, $id: ID!) { rotateWebhookSecret(workspaceId: $w, member: $m, id: $id, overlap: "0") { id secret previousSecretUntil } }
  mutation Enable($w: ID!, $m: String!, $id: ID!) { enableWebhookEndpoint(workspaceId: $w, member: $m, id: $id) { id state resumed } }
  mutation RemoveEndpoint($w: ID!, $m: String!, $id: ID!) { removeWebhookEndpoint(workspaceId: $w, member: $m, id: $id) { id state } }
  mutation CreateFeed($w: ID!, $m: String!) { createCalendarFeed(workspaceId: $w, member: $m, name: "Team") { id token path } }
  mutation RevokeFeed($w: ID!, $m: String!, $id: ID!) { revokeCalendarFeed(workspaceId: $w, member: $m, id: $id) { id state } }
  query Area($w: ID!, $m: String!, $key: ID!, $endpoint: ID!, $since: String) {
    integrations(workspaceId: $w, member: $m) {
      apiKeys { id name state lastUsedAt }
      apiKeyRequests(id: $key, status: "2xx") { path status requestId }
      apiKeyUsage(id: $key, days: 1) { requests status2xx }
      webhookEndpoints { id state events health { state } }
      webhookDeliveries(endpointId: $endpoint) { eventId test state log { manual httpStatus error } }
      calendarFeeds { id state }
      audit(since: $since) { memberEmail operation targetId source at }
    }
  }
`;

describeOnEachDatabase('the integrations audit on %s', (target) => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;
  let receiver: WebhookReceiver;
  let token: string;
  const env = webhookEnv();
  const cli = () => cliOn(db, env, receiver);

  const run = async (operationName: string, variables: Record<string, unknown>) => {
    const answer = await postGraphQL(api.server.internalUrl!, token, { query: MUTATIONS, operationName, variables: { w: ws.workspaceId, m: ADMIN, ...variables } });
    expect(answer.body.errors, operationName).toBeUndefined();
    return Object.values(answer.body.data!)[0] as Record<string, unknown>;
  };
  const audit = async (since: string) => cli().json<Entry[]>('audit', 'list', '--workspace', ws.workspaceId, '--since', since);

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture('Audited', 3));
    await cli().json('member', 'add', '--workspace', ws.workspaceId, '--email', ADMIN, '--name', 'Ada Admin', '--role', 'admin');
    receiver = await startReceiver(() => ({ status: 200, body: 'thanks' }));
    api = await startTestApi(db, env, { trustedCertificates: [receiver.certificate] });
    // The audit names members by e-mail: personal data, read with the personal-data grant.
    token = (await cli().json<{ token: string }>('internal-token', 'create', '--name', 'dashboard', '--integrations', '--personal-data')).token;
  });
  afterAll(async () => {
    await api?.close();
    await receiver?.close();
    await db?.close();
  });

  it('auth.integrations-audit: every mutation runs its operation and records one audit entry: the member, the operation, its target, the time and source graphql; the reads see what they did', async () => {
    const since = new Date().toISOString();
    const key = (await run('CreateKey', {})) as { id: string; key: string };
    expect((await api.call('/api/public/v1/courses', { key: key.key })).status).toBe(200);
    await api.server.keyActivity.flush();
    expect(await run('UpdateKey', { id: key.id })).toMatchObject({ id: key.id, name: 'renamed', expiresAt: expect.stringMatching(/Z$/) });
    const endpoint = (await run('AddEndpoint', { url: receiver.url })) as { id: string; secret: string };
    receiver.checkWith([endpoint.secret]);
    expect(await run('UpdateEndpoint', { id: endpoint.id })).toEqual({ id: endpoint.id, events: ['booking.created', 'booking.updated'] });
    const tested = await run('TestEndpoint', { id: endpoint.id });
    expect(tested).toMatchObject({ type: 'booking.created', ok: true, httpStatus: 200, answerStart: 'thanks', stillDisabled: false });
    expect(verifyDelivery(endpoint.secret, receiver.received.at(-1)!)).toMatchObject({ test: true });
    await insertBooking(db, ws.workspaceId, ws.ids.r1!);
    await receiver.waitFor((received) => received.some((delivery) => !(JSON.parse(delivery.body) as { test?: boolean }).test));
    const booked = receiver.received.find((delivery) => !(JSON.parse(delivery.body) as { test?: boolean }).test)!;
    const eventId = booked.headers['webhook-id']!;
    expect(await run('Resend', { id: endpoint.id, event: eventId })).toEqual({ ok: true, httpStatus: 200 });
    expect(await run('Recover', { id: endpoint.id, since })).toEqual({ recovered: 0 });

    const area = await postGraphQL(api.server.internalUrl!, token, { query: MUTATIONS, operationName: 'Area', variables: { w: ws.workspaceId, m: OWNER_EMAIL, key: key.id, endpoint: endpoint.id } });
    const seen = area.body.data!.integrations as Record<'apiKeys' | 'apiKeyRequests' | 'apiKeyUsage' | 'webhookEndpoints' | 'webhookDeliveries', Array<Record<string, unknown>>>;
    expect(seen.apiKeys).toContainEqual({ id: key.id, name: 'renamed', state: 'active', lastUsedAt: expect.stringMatching(/Z$/) });
    expect(seen.apiKeyRequests).toEqual([{ path: '/api/public/v1/courses', status: 200, requestId: expect.any(String) }]);
    expect(seen.apiKeyUsage).toEqual([{ requests: 1, status2xx: 1 }]);
    expect(seen.webhookEndpoints).toContainEqual({ id: endpoint.id, state: 'active', events: ['booking.created', 'booking.updated'], health: { state: 'healthy' } });
    expect(seen.webhookDeliveries).toContainEqual({ eventId: tested.event, test: true, state: 'succeeded', log: [{ manual: true, httpStatus: 200, error: null }] });
    expect(seen.webhookDeliveries.find((delivery) => delivery.eventId === eventId)!.log).toContainEqual({ manual: true, httpStatus: 200, error: null });

    const rotatedSecret = await run('RotateSecret', { id: endpoint.id });
    expect(rotatedSecret).toMatchObject({ id: endpoint.id, secret: expect.stringMatching(/^whsec_/), previousSecretUntil: null });
    expect(await run('Enable', { id: endpoint.id })).toEqual({ id: endpoint.id, state: 'active', resumed: 0 });
    const rotated = (await run('RotateKey', { id: key.id })) as { id: string; key: string };
    expect(await run('RevokeKey', { id: rotated.id })).toEqual({ id: rotated.id, state: 'revoked' });
    expect((await api.call('/api/public/v1/courses', { key: rotated.key })).status).toBe(401);
    expect(await run('RemoveEndpoint', { id: endpoint.id })).toEqual({ id: endpoint.id, state: 'removed' });
    const feed = (await run('CreateFeed', {})) as { id: string; token: string; path: string };
    expect(feed.path).toBe(`/api/calendar/v1/${feed.token}.ics`);
    expect(await run('RevokeFeed', { id: feed.id })).toEqual({ id: feed.id, state: 'revoked' });

    const expected = [
      ['key.create', key.id],
      ['key.update', key.id],
      ['webhook.add', endpoint.id],
      ['webhook.update', endpoint.id],
      ['webhook.test', endpoint.id],
      ['webhook.resend', eventId],
      ['webhook.recover', endpoint.id],
      ['webhook.rotate-secret', endpoint.id],
      ['webhook.enable', endpoint.id],
      ['key.rotate', key.id],
      ['key.revoke', rotated.id],
      ['webhook.remove', endpoint.id],
      ['feed.create', feed.id],
      ['feed.revoke', feed.id],
    ].map(([operation, targetId]) => ({ memberEmail: ADMIN, operation, targetId, source: 'graphql', at: expect.stringMatching(/Z$/) }));
    expect(await audit(since)).toEqual(expected.map((entry) => ({ ...entry, id: expect.stringMatching(/^aud_/), workspaceId: ws.workspaceId })));
    // Internal GraphQL reads the same entries.
    const read = await postGraphQL(api.server.internalUrl!, token, { query: MUTATIONS, operationName: 'Area', variables: { w: ws.workspaceId, m: OWNER_EMAIL, key: key.id, endpoint: endpoint.id, since } });
    expect((read.body.data!.integrations as { audit: Entry[] }).audit).toEqual(expected);
  });

  it('auth.integrations-audit: the CLI records the same entries, source cli, with the member --member names, or none for the operator; audit list prints them and refuses a bad --since', async () => {
    const since = new Date().toISOString();
    const issued = await cli().json<{ id: string }>('key', 'create', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--scopes', 'courses:read');
    await cli().json('key', 'update', '--id', issued.id, '--member', ADMIN, '--name', 'by the CLI');
    await cli().json('key', 'rotate', '--id', issued.id);
    const endpoint = await cli().json<{ id: string; secret: string }>('webhook', 'add', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--url', receiver.url);
    receiver.checkWith([endpoint.secret]);
    await cli().json('webhook', 'events', '--endpoint', endpoint.id, '--set', 'booking.updated', '--member', ADMIN);
    await cli().json('webhook', 'test', '--endpoint', endpoint.id, '--member', ADMIN);
    await cli().json('webhook', 'rotate-secret', '--endpoint', endpoint.id, '--overlap', '0');
    await cli().json('webhook', 'enable', '--endpoint', endpoint.id);
    await cli().json('webhook', 'recover', '--endpoint', endpoint.id, '--since', since);
    await cli().json('webhook', 'remove', '--endpoint', endpoint.id, '--member', OWNER_EMAIL);
    const feed = await cli().json<{ id: string }>('feed', 'create', '--workspace', ws.workspaceId, '--member', ADMIN);
    await cli().json('feed', 'revoke', '--id', feed.id, '--member', ADMIN);
    // A plain member named at the CLI is refused as in GraphQL, and nothing is recorded.
    const refused = await cli().run('key', 'revoke', '--id', issued.id, '--member', 'member@seed.example');
    expect([refused.code, refused.stderr]).toEqual([1, expect.stringMatching(/^error: Member member@seed.example has role member; only an owner or admin may do this/)]);

    const entries = await audit(since);
    expect(entries.map((entry) => [entry.operation, entry.targetId, entry.memberEmail, entry.source])).toEqual([
      ['key.create', issued.id, OWNER_EMAIL, 'cli'],
      ['key.update', issued.id, ADMIN, 'cli'],
      ['key.rotate', issued.id, null, 'cli'],
      ['webhook.add', endpoint.id, OWNER_EMAIL, 'cli'],
      ['webhook.update', endpoint.id, ADMIN, 'cli'],
      ['webhook.test', endpoint.id, ADMIN, 'cli'],
      ['webhook.rotate-secret', endpoint.id, null, 'cli'],
      ['webhook.enable', endpoint.id, null, 'cli'],
      ['webhook.recover', endpoint.id, null, 'cli'],
      ['webhook.remove', endpoint.id, OWNER_EMAIL, 'cli'],
      ['feed.create', feed.id, ADMIN, 'cli'],
      ['feed.revoke', feed.id, ADMIN, 'cli'],
    ]);
    const text = await cli().run('audit', 'list', '--workspace', ws.workspaceId, '--since', since);
    expect(text.stdout.split('\n')[0]).toMatch(new RegExp(`^\\S+Z  cli      ${OWNER_EMAIL}  key.create  ${issued.id}$`));
    expect(text.stdout).toContain(`(operator)  key.rotate  ${issued.id}`);
    const bad = await cli().run('audit', 'list', '--workspace', ws.workspaceId, '--since', 'yesterday');
    expect([bad.code, bad.stdout]).toEqual([1, '']);
    expect(bad.stderr).toMatch(/^error: --since "yesterday" is not an ISO 8601 time with a time zone/);
    const missing = await cli().run('audit', 'list', '--workspace', 'ws_missing');
    expect(missing.stderr).toMatch(/No workspace with id "ws_missing"/);
    expect((await audit(new Date(Date.now() + 60_000).toISOString())).length).toBe(0);
  });

  it('auth.integrations-audit: a member who may not act is refused before anything runs, in GraphQL as at the CLI, and no entry is recorded', async () => {
    const before = (await audit('2000-01-01T00:00:00Z')).length;
    const answer = await postGraphQL(api.server.internalUrl!, token, { query: MUTATIONS, operationName: 'CreateFeed', variables: { w: ws.workspaceId, m: 'member@seed.example' } });
    expect((answer.body as GraphQLResponse).errors!.map((error) => error.extensions?.code)).toEqual(['FORBIDDEN']);
    expect((await audit('2000-01-01T00:00:00Z')).length).toBe(before);
  });

  it('updateWebhookEndpoint moves an endpoint to another https address, refusing one the CLI would refuse in the same words', async () => {
    const endpoint = (await run('AddEndpoint', { url: receiver.url })) as { id: string };
    const UPDATE_URL = `mutation UpdateUrl($w: ID!, $m: String!, $id: ID!, $url: String!) { updateWebhookEndpoint(workspaceId: $w, member: $m, id: $id, input: { url: $url }) { id url events } }`;
    const send = (url: string) => postGraphQL(api.server.internalUrl!, token, { query: UPDATE_URL, variables: { w: ws.workspaceId, m: OWNER_EMAIL, id: endpoint.id, url } });
    const refused = await send('http://receiver.example/hooks');
    expect(refused.body.errors).toEqual([
      { message: 'url must use https:// (got http://); plain http is never allowed', path: ['updateWebhookEndpoint'], extensions: { code: 'BAD_USER_INPUT', field: 'url' } },
    ]);
    const atCli = await cli().run('webhook', 'add', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--url', 'http://receiver.example/hooks');
    expect(atCli.stderr).toBe('error: --url must use https:// (got http://); plain http is never allowed\n');
    const moved = await send(`${receiver.url}?moved=1`);
    expect(moved.body.data!.updateWebhookEndpoint).toEqual({ id: endpoint.id, url: `${receiver.url}?moved=1`, events: null });
    const listed = await cli().json<Array<{ id: string; url: string }>>('webhook', 'list', '--workspace', ws.workspaceId, '--member', ADMIN);
    expect(listed.find((entry) => entry.id === endpoint.id)!.url).toBe(`${receiver.url}?moved=1`);
    await run('RemoveEndpoint', { id: endpoint.id });
  });
});
