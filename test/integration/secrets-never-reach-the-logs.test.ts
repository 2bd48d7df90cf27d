import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { cliOn } from '../support/cli.ts';
import { openTestDatabase } from '../support/databases.ts';
import { rawRequest } from '../support/http.ts';
import { INTERNAL_TOKEN, startTestApi, type TestApi } from '../support/public-api.ts';
import { OWNER_EMAIL, contractFixture, seedWorkspace } from '../support/seed.ts';
import { webhookEnv } from '../support/webhooks.ts';

const METRICS_TOKEN = 'metrics-token-for-log-test-0123456789';

/** Every character percent-encoded. */
const encodeAll = (text: string) => [...Buffer.from(text)].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');
/** Only the first character encoded, as in `%73vc_cal_…`. */
const encodeFirst = (text: string) => `%${text.charCodeAt(0).toString(16)}${text.slice(1)}`;
/** The first character encoded twice: `%2573vc_cal_…`. */
const encodeTwice = (text: string) => `%25${text.charCodeAt(0).toString(16)}${text.slice(1)}`;
const upperPrefix = (text: string) => text.replace(/^[a-z_]+_/, (prefix) => prefix.toUpperCase());

/** The spellings of a secret a client may send, by accident or to get around a filter. */
const spellings = (secret: string) => [secret, encodeAll(secret), encodeFirst(secret), encodeTwice(secret), upperPrefix(secret)];

/** Where a secret can be put in a request's path. */
const paths = (spelled: string) => [
  `/api/calendar/v1/${spelled}.ics`,
  `/API/calendar/v1/${spelled}.ics`,
  `//api/calendar/v1/${spelled}.ics`,
  `/api//calendar//v1//${spelled}.ics`,
  `/api/calendar/v1%2F${spelled}.ics`,
  `/api%2Fcalendar%2fv1%2F${spelled}`,
  `/api/public/v1/${spelled}`,
  `/${spelled}`,
  `/integrations/${spelled}`,
  `/integrations/api/session/${spelled}`,
];

/** Where a secret can be put in a query string. */
const queries = (spelled: string) => [`/integrations/api/graphql?session=${spelled}`, `/api/public/v1/courses?token=${spelled}`, `/api/calendar/v1/x.ics?key=${spelled}&a=1`, `/?${spelled}`, `/api/public/v1/bookings?a=1&api_key=${spelled}`];

/** Headers a secret can be put in (only X-Request-Id is ever logged, and only when it holds none). */
const headers = (spelled: string): Array<[string, string]> => [
  ['Authorization', `Bearer ${spelled}`],
  ['X-Request-Id', spelled],
  ['X-Api-Key', spelled],
  ['Cookie', `session=${spelled}`],
  ['Referer', `https://example.com/?k=${spelled}`],
  ['User-Agent', spelled],
];

describe('secrets sent in every part of a request, however spelled', () => {
  let db: Database;
  let api: TestApi;
  const secrets: Record<string, string> = {};

  beforeAll(async () => {
    db = await openTestDatabase('embedded');
    const ws = await seedWorkspace(db, contractFixture('Logged', 1));
    const env = webhookEnv({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' });
    secrets.apiKey = ws.fullKey;
    secrets.feedToken = (await cliOn(db).json<{ token: string }>('feed', 'create', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL)).token;
    secrets.webhookSecret = (await cliOn(db, env).json<{ secret: string }>('webhook', 'add', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--url', 'https://hooks.example.com/in')).secret;
    secrets.internalToken = INTERNAL_TOKEN;
    secrets.namedInternalToken = (await cliOn(db).json<{ token: string }>('internal-token', 'create', '--name', 'reporting')).token;
    secrets.metricsToken = METRICS_TOKEN;
    const link = new URL((await cliOn(db).json<{ url: string }>('portal', 'link', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL)).url).hash.slice(1);
    const spare = new URL((await cliOn(db).json<{ url: string }>('portal', 'link', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL)).url).hash.slice(1);
    api = await startTestApi(db, { ...env, WEBHOOK_WORKER: 'false', METRICS_TOKEN, AUTH_FAILURE_LIMIT: '100000', FEED_RATE_LIMIT_MAX: '100000', PORTAL_RATE_LIMIT_MAX: '100000' });
    // A link opened (its secret a client may still send) and its session's token; a link not opened.
    const opened = await fetch(`${api.url}/integrations/api/session`, { method: 'POST', headers: { 'Portal-Link': link } });
    secrets.portalLink = link;
    secrets.portalSession = ((await opened.json()) as { session: string }).session;
    secrets.unopenedPortalLink = spare;
  });
  afterAll(async () => {
    await api?.close();
    await db?.close();
  });

  it('no log line holds an API key, a feed token, a webhook secret, an internal or the metrics token, in any spelling', async () => {
    expect(secrets.webhookSecret).toMatch(/^whsec_/);
    expect(secrets.namedInternalToken).toMatch(/^svc_int_/);
    expect(secrets.portalSession).toMatch(/^svc_ps_/);
    let sent = 1;
    for (const secret of Object.values(secrets)) {
      for (const spelled of spellings(secret)) {
        for (const target of [...paths(spelled), ...queries(spelled)]) {
          await rawRequest(api.url, target);
          sent += 1;
        }
        for (const header of headers(spelled)) {
          const response = await rawRequest(api.url, '/api/public/v1/courses', { headers: [header] });
          expect(response.headers['x-request-id']).not.toContain(spelled);
          sent += 1;
        }
        // The page's endpoints, with the secret where they read one and elsewhere.
        for (const header of [...headers(spelled), ['Portal-Link', spelled] as [string, string]]) {
          for (const path of ['/integrations/api/session', '/integrations/api/graphql']) {
            await rawRequest(api.url, path, { method: 'POST', headers: [header, ['Content-Type', 'application/json'], ['Content-Length', '2']], body: '{}' });
            sent += 1;
          }
        }
      }
    }
    const logs = api.logs.join('\n');
    expect(api.logs.filter((line) => line.includes('"msg":"request"'))).toHaveLength(sent);
    for (const [kind, secret] of Object.entries(secrets)) {
      // The random part of a secret is what makes it one: it appears in no spelling at all.
      const random = secret.replace(/^(svc_api_|svc_cal_|svc_int_|svc_pl_|svc_ps_|whsec_)/, '');
      for (const spelled of [...spellings(random), random.slice(0, 16), random.slice(-16)]) {
        expect(logs.includes(spelled), `${kind} as ${spelled}`).toBe(false);
      }
    }
  });

  it('a request line logs the matched route, or unmatched, and the decoded path and query with secrets redacted', async () => {
    const before = api.logs.length;
    await rawRequest(api.url, `/api/calendar/v1/${secrets.feedToken}.ics`);
    await rawRequest(api.url, `/API/calendar/v1/${encodeFirst(secrets.feedToken!)}.ics`);
    await rawRequest(api.url, `/api/public/v1/courses?token=${encodeAll(secrets.apiKey!)}&page=2`, { headers: [['Authorization', `Bearer ${secrets.apiKey}`]] });
    await rawRequest(api.url, `/caf%C3%A9/%E0%A4%A/${encodeTwice(secrets.webhookSecret!)}`);
    const lines = api.logs.slice(before).map((line) => JSON.parse(line) as { route: string; path: string; query: string | null; status: number });
    expect(lines.map(({ route, path, query, status }) => ({ route, path, query, status }))).toEqual([
      { route: '/api/calendar/v1/{token}.ics', path: '/api/calendar/v1/[redacted].ics', query: null, status: 200 },
      { route: 'unmatched', path: '/API/calendar/v1/[redacted].ics', query: null, status: 404 },
      { route: '/api/public/v1/courses', path: '/api/public/v1/courses', query: 'token=svc_api_[redacted]&page=2', status: 400 },
      { route: 'unmatched', path: '/café/\ufffd%A/whsec_[redacted]', query: null, status: 404 },
    ]);
  });
});
