import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliOn } from '../support/cli.ts';
import { openSharedDatabase, type DatabaseTarget, type SharedDatabase } from '../support/databases.ts';
import { rawRequest } from '../support/http.ts';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.ts';
import { INTERNAL_TOKEN, capturedLogs } from '../support/public-api.ts';
import { OWNER_EMAIL, contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { insertBooking, webhookEnv } from '../support/webhooks.ts';
import { describeWhere, missingFor } from '../support/variants.ts';

const SERVER = 2;
const CLIENT = 3;
const CONSUMER = 5;

/** A W3C traceparent of a new trace, as an upstream service would send it. */
function traceparent(): { header: string; traceId: string; parentId: string } {
  const traceId = randomBytes(16).toString('hex');
  const parentId = randomBytes(8).toString('hex');
  return { header: `00-${traceId}-${parentId}-01`, traceId, parentId };
}

/** Everything a span carries that an exporter sends: name, attributes, events, status. */
const exported = (span: ReceivedSpan) => JSON.stringify([span.name, span.attributes, span.events, span.status]);

/** Whether `ancestor` is `span` or one of its ancestors among `spans`. */
function descendsFrom(span: ReceivedSpan, ancestor: ReceivedSpan, spans: ReceivedSpan[]): boolean {
  for (let current: ReceivedSpan | undefined = span; current; current = spans.find((candidate) => candidate.spanId === current!.parentSpanId)) {
    if (current.spanId === ancestor.spanId) return true;
  }
  return false;
}

const encodeAll = (text: string) => [...Buffer.from(text)].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');

// Both export protocols on the embedded database, and http/protobuf on PostgreSQL with the Redis
// rate-limit store (for its spans) when the run has them.
const cases: Array<{ protocol: string; target: DatabaseTarget; redis: boolean }> = [
  { protocol: 'http/json', target: 'embedded', redis: false },
  { protocol: 'http/protobuf', target: 'embedded', redis: false },
  { protocol: 'http/protobuf', target: 'postgres', redis: true },
];

for (const { protocol, target, redis } of cases) describeWhere(missingFor(target, redis ? 'redis' : undefined), `traces exported over ${protocol} from a server on ${target} (Redis rate limit: ${redis})`, () => {
  let deployment: SharedDatabase;
  let ws: SeededWorkspace;
  let otlp: OtlpReceiver;
  let receiver: WebhookReceiver;
  let server: ServerProcess;
  let feedToken: string;
  let webhookSecret: string;
  const env = webhookEnv();

  /** The spans of one trace, once its span of `kind` named by `done` has arrived. */
  const traceOf = async (traceId: string, done: (span: ReceivedSpan) => boolean) => {
    await otlp.waitFor((spans) => spans.some((span) => span.traceId === traceId && done(span)));
    // The batch that holds the server span may be followed by one with its last children.
    await new Promise((resolve) => setTimeout(resolve, 300));
    return otlp.spans.filter((span) => span.traceId === traceId);
  };

  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    receiver = await startReceiver();
    deployment = await openSharedDatabase(target);
    ws = await seedWorkspace(deployment.db, contractFixture('Traced', 15));
    feedToken = (await cliOn(deployment.db).json<{ token: string }>('feed', 'create', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL)).token;
    webhookSecret = (
      await cliOn(deployment.db, env).json<{ secret: string }>('webhook', 'add', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--url', `${receiver.url}/hook-path-4711?token=receiver-secret-0123`)
    ).secret;
    server = await startServerProcess({
      ...deployment.env,
      ...env,
      ...(redis ? { RATE_LIMIT_STORE: 'redis', REDIS_URL: process.env.REDIS_URL } : {}),
      NODE_EXTRA_CA_CERTS: receiver.certificateFile,
      INTERNAL_API_TOKEN: INTERNAL_TOKEN,
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
      OTEL_SERVICE_NAME: 'traced-api',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
  });
  afterAll(async () => {
    if (server) capturedLogs.push(...server.output().split('\n'));
    await server?.stop();
    await deployment?.close();
    await receiver?.close();
    await otlp?.close();
  });

  it(`exports with the ${protocol} content type and the configured service name`, async () => {
    const { header, traceId } = traceparent();
    await rawRequest(server.url, '/livez', { headers: [['traceparent', header]] });
    const [span] = await traceOf(traceId, (candidate) => candidate.kind === SERVER);
    expect(span!.service).toBe('traced-api');
    expect(new Set(otlp.contentTypes)).toEqual(new Set([protocol === 'http/json' ? 'application/json' : 'application/x-protobuf']));
  });

  it("a request's trace joins the incoming traceparent and holds the server span with its route, the GraphQL operation and each SQL statement under it", async () => {
    const { header, traceId, parentId } = traceparent();
    const response = await rawRequest(server.url, '/api/public/v1/bookings', { headers: [['Authorization', `Bearer ${ws.fullKey}`], ['traceparent', header]] });
    expect(response.status).toBe(200);
    const spans = await traceOf(traceId, (span) => span.kind === SERVER);
    const serverSpan = spans.find((span) => span.kind === SERVER)!;
    expect(serverSpan.parentSpanId).toBe(parentId);
    expect(serverSpan.attributes['http.route']).toBe('/api/public/v1/bookings');
    expect(serverSpan.name).toBe('GET /api/public/v1/bookings');
    expect(serverSpan.attributes['http.response.status_code']).toBe(200);
    // An answer in pieces reads its bookings by their ids (docs/tracing.md).
    const operation = spans.find((span) => span.name === 'query PublicBookingsOfIds');
    expect(operation?.attributes).toMatchObject({ 'graphql.operation.type': 'query', 'graphql.operation.name': 'PublicBookingsOfIds' });
    expect(descendsFrom(operation!, serverSpan, spans)).toBe(true);
    const statements = spans.filter((span) => span.scope === '@opentelemetry/instrumentation-pg' && typeof span.attributes['db.query.text'] === 'string');
    const underOperation = statements.filter((span) => descendsFrom(span, operation!, spans));
    expect(underOperation.map((span) => span.attributes['db.query.text'])).toContainEqual(expect.stringMatching(/FROM bookings/));
    expect(statements.every((span) => descendsFrom(span, serverSpan, spans))).toBe(true);
    if (redis) expect(spans.some((span) => span.scope === '@opentelemetry/instrumentation-ioredis')).toBe(true);

    // The answer held participant data; no span does, nor the key, nor a statement's parameters.
    const participants = (response.body as { data: Array<{ participant?: { name: string; email: string } | null }> }).data.flatMap((booking) =>
      booking.participant ? [booking.participant.name, booking.participant.email] : [],
    );
    expect(participants.length).toBeGreaterThan(0);
    const keyHash = createHash('sha256').update(ws.fullKey).digest('hex');
    for (const span of spans) {
      for (const forbidden of [...participants, ws.fullKey, ws.fullKey.slice(8), ws.workspaceId, keyHash]) {
        expect(exported(span).includes(forbidden), `${span.name} holds ${forbidden}`).toBe(false);
      }
    }
    // Statement text holds placeholders where values go.
    expect(statements.map((span) => span.attributes['db.query.text']).join('\n')).toMatch(/\$1/);
  });

  it('no span of calendar feed requests holds the feed token, however the path spells it; URL attributes read as the request log writes them', async () => {
    const random = feedToken.replace(/^svc_cal_/, '');
    const traces: string[] = [];
    for (const path of [`/api/calendar/v1/${feedToken}.ics`, `/api/calendar/v1/${encodeAll(feedToken)}.ics`, `/api/calendar/v1/x.ics?token=${feedToken}`, `/API/calendar/v1/${feedToken}.ics`]) {
      const { header, traceId } = traceparent();
      traces.push(traceId);
      await rawRequest(server.url, path, { headers: [['traceparent', header]] });
    }
    const spans: ReceivedSpan[] = [];
    for (const traceId of traces) spans.push(...(await traceOf(traceId, (span) => span.kind === SERVER)));
    const served = spans.find((span) => span.traceId === traces[0] && span.kind === SERVER)!;
    expect(served.attributes).toMatchObject({ 'http.route': '/api/calendar/v1/{token}.ics', 'url.path': '/api/calendar/v1/[redacted].ics', 'http.response.status_code': 200 });
    expect(spans.some((span) => span.traceId === traces[0] && span.name === 'query PublicCoursesOfRuns')).toBe(true);
    expect(spans.find((span) => span.traceId === traces[2] && span.kind === SERVER)!.attributes['url.query']).toBe('token=svc_cal_[redacted]');
    for (const span of spans) {
      for (const spelled of [random, encodeAll(random), random.slice(0, 16), random.slice(-16)]) {
        expect(exported(span).includes(spelled), `${span.name} holds the token`).toBe(false);
      }
      expect(exported(span)).not.toContain(ws.workspaceId);
    }
  });

  it('a webhook delivery attempt is a span of its own, parent of the POST to the receiver, which carries its trace on and shows no secret, URL path or participant', async () => {
    const participant = { name: 'Traceable Tina', email: 'tina@traced.example' };
    const bookingId = await insertBooking(deployment.db, ws.workspaceId, ws.ids.r1!, participant);
    await receiver.waitFor((received) => received.some((delivery) => delivery.body.includes(bookingId)));
    const delivery = receiver.received.find((candidate) => candidate.body.includes(bookingId))!;
    const incoming = /^00-([0-9a-f]{32})-([0-9a-f]{16})-/.exec(String(delivery.headers.traceparent));
    expect(incoming, 'the POST carries a traceparent').not.toBeNull();
    const spans = await traceOf(incoming![1]!, (span) => span.kind === CONSUMER);
    const job = spans.find((span) => span.kind === CONSUMER)!;
    expect(job.name).toBe('webhook_deliver process');
    expect(job.attributes).toMatchObject({ 'webhook.attempt': 1, 'webhook.delivery.state': 'succeeded', 'webhook.ok': true, 'http.response.status_code': 204 });
    const post = spans.find((span) => span.kind === CLIENT && span.spanId === incoming![2])!;
    expect(post.parentSpanId).toBe(job.spanId);
    expect(post.attributes['url.full']).toBe(new URL(receiver.url).origin);
    expect(spans.some((span) => span.scope === '@opentelemetry/instrumentation-pg' && descendsFrom(span, job, spans))).toBe(true);
    for (const span of spans) {
      for (const forbidden of [participant.name, participant.email.split('@')[0]!, webhookSecret.replace(/^whsec_/, ''), 'receiver-secret-0123', 'hook-path-4711', String(delivery.headers['webhook-signature'])]) {
        expect(exported(span).includes(forbidden), `${span.name} holds ${forbidden}`).toBe(false);
      }
    }
  });

  it('internal GraphQL requests are traced by the GraphQL instrumentation without the values in their documents', async () => {
    const internalUrl = /Internal GraphQL: (http:\/\/\S+)\/graphql/.exec(server.output())![1]!;
    const { header, traceId } = traceparent();
    const response = await rawRequest(internalUrl, '/graphql', {
      method: 'POST',
      headers: [['Authorization', `Bearer ${INTERNAL_TOKEN}`], ['Content-Type', 'application/json'], ['traceparent', header]],
      body: JSON.stringify({ query: `{ workspace(id: "${ws.workspaceId}") { name } }` }),
    });
    expect(response.status).toBe(200);
    const spans = await traceOf(traceId, (span) => span.kind === SERVER);
    const execute = spans.find((span) => span.scope === '@opentelemetry/instrumentation-graphql' && span.attributes['graphql.source'] !== undefined);
    expect(execute?.attributes['graphql.source']).toMatch(/workspace\(id:\s*"?\*"?\)/);
    for (const span of spans) {
      expect(exported(span)).not.toContain(ws.workspaceId);
      expect(exported(span)).not.toContain(INTERNAL_TOKEN);
    }
  });
});

describe('tracing without an endpoint', () => {
  let deployment: SharedDatabase;
  let server: ServerProcess;

  beforeAll(async () => {
    deployment = await openSharedDatabase('embedded');
    // The probe reports every OpenTelemetry package the process's modules import.
    server = await startServerProcess({ ...deployment.env, NODE_OPTIONS: `--import=${new URL('../support/loaded-modules-probe.mjs', import.meta.url).pathname}` });
  });
  afterAll(async () => {
    await server?.stop();
    await deployment?.close();
  });

  it('loads neither the SDK, nor an instrumentation, nor the module hook: only the API, whose spans do nothing', async () => {
    const ws = await seedWorkspace(deployment.db, contractFixture('Untraced', 3));
    expect((await rawRequest(server.url, '/api/public/v1/courses', { headers: [['Authorization', `Bearer ${ws.fullKey}`]] })).status).toBe(200);
    const loaded = [...server.output().matchAll(/^loaded-module \S*\/node_modules\/((?:@opentelemetry\/)?[^/]+)\//gm)].map((match) => match[1]);
    expect(new Set(loaded)).toEqual(new Set(['@opentelemetry/api']));
  });
});
