import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';
import { INTERNAL_TOKEN, startTestApi, type TestApi } from '../support/public-api.ts';

const METRICS_TOKEN = 'metrics-test-token-0123456789';

// Metrics describe the process, not the data: one database is enough.
describe('/metrics on the internal listener', () => {
  let db: Database;
  let withMetricsToken: TestApi;
  let internalOnly: TestApi;

  const scrape = (api: TestApi, authorization?: string) =>
    fetch(`${api.server.internalUrl}/metrics`, authorization ? { headers: { authorization } } : {});

  beforeAll(async () => {
    db = await openTestDatabase('embedded');
    withMetricsToken = await startTestApi(db, { METRICS_TOKEN });
    internalOnly = await startTestApi(db);
  });
  afterAll(async () => {
    await withMetricsToken?.close();
    await internalOnly?.close();
    await db?.close();
  });

  it('refuses a scrape without a token, with a wrong one or another scheme: 401 in the error shape, no metric in it', async () => {
    for (const authorization of [undefined, 'Bearer wrong-token-0123456789', `Basic ${Buffer.from(`x:${INTERNAL_TOKEN}`).toString('base64')}`, `Bearer ${INTERNAL_TOKEN}x`]) {
      const response = await scrape(withMetricsToken, authorization);
      expect(response.status, authorization).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      const body = await response.text();
      expect(JSON.parse(body)).toEqual({ error: { code: 'invalid_api_key', message: expect.any(String) } });
      expect(body).not.toMatch(/http_requests_total|process_/);
    }
  });

  it('serves Prometheus text to METRICS_TOKEN and to the internal token', async () => {
    await withMetricsToken.call('/healthz');
    for (const token of [METRICS_TOKEN, INTERNAL_TOKEN]) {
      const response = await scrape(withMetricsToken, `Bearer ${token}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(await response.text()).toMatch(/http_requests_total\{route="\/healthz",method="GET",status="200"\} [1-9]/);
    }
  });

  it('the metrics token opens nothing else: /graphql refuses it', async () => {
    const response = await fetch(`${withMetricsToken.server.internalUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${METRICS_TOKEN}` },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(response.status).toBe(401);
  });

  it('without METRICS_TOKEN only the internal token scrapes', async () => {
    expect((await scrape(internalOnly, `Bearer ${METRICS_TOKEN}`)).status).toBe(401);
    expect((await scrape(internalOnly, `Bearer ${INTERNAL_TOKEN}`)).status).toBe(200);
  });
});
