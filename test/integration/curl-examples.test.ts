import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/auth/api-key-store.ts';
import { createFeedToken } from '../../src/calendar/feed-token-store.ts';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { errorCodes } from '../../src/errors.ts';
import { openTestDatabase } from '../support/databases.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { contractFixture, OWNER_EMAIL, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { describeWhere } from '../support/variants.ts';

const run = promisify(execFile);
const MARKDOWN = readFileSync(new URL('../../examples/curl/README.md', import.meta.url), 'utf8');

function hasCurl(): boolean {
  try {
    execFileSync('curl', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const curlAvailable = hasCurl();
if (!curlAvailable) console.warn('curl examples not run: no curl on the PATH (apt-get install curl)');

interface Example {
  status: number;
  code: string | null;
  needsUnreachableDatabase: boolean;
  script: string;
}

/** Each `sh` block with the `<!-- expect: … -->` or `<!-- setup: … -->` line right above it. */
function parseExamples(markdown: string): { examples: Example[]; unmarked: string[] } {
  const examples: Example[] = [];
  const unmarked: string[] = [];
  for (const match of markdown.matchAll(/(?:<!-- (expect|setup): ([^\n]*?) -->\n)?```sh\n([\s\S]*?)```/g)) {
    const [, kind, claim, script] = match;
    if (kind === 'setup') continue;
    if (kind !== 'expect') {
      unmarked.push(script!);
      continue;
    }
    const [, status, code, note] = /^(\d{3})(?: ([a-z_]+))?(?: \((.*)\))?$/.exec(claim!) ?? [];
    examples.push({ status: Number(status), code: code ?? null, needsUnreachableDatabase: note === 'database unreachable', script: script! });
  }
  return { examples, unmarked };
}

/** `curl -i` output: the last status line and its headers, then the body. */
function parseCurlOutput(stdout: string): { status: number; body: string } {
  const blocks = stdout.split(/\r\n\r\n/);
  let headerIndex = -1;
  blocks.forEach((block, index) => {
    if (/^HTTP\/[\d.]+ \d{3}/.test(block)) headerIndex = index;
  });
  const status = Number(/^HTTP\/[\d.]+ (\d{3})/.exec(blocks[headerIndex] ?? '')?.[1]);
  return { status, body: blocks.slice(headerIndex + 1).join('\r\n\r\n') };
}

const { examples, unmarked } = parseExamples(MARKDOWN);

describe('the curl examples', () => {
  it('mark every sh block with the status it claims, and claim every error code of the catalogue', () => {
    expect(unmarked).toEqual([]);
    const runnable = new Set(examples.map((example) => example.code));
    // No request can provoke internal_error on purpose; the page shows its body instead.
    expect(errorCodes.filter((code) => !runnable.has(code))).toEqual(['internal_error']);
    expect(MARKDOWN).toContain('{ "error": { "code": "internal_error", "message": "An unexpected error occurred." } }');
    for (const path of ['/api/public/v1/courses', '/api/public/v1/bookings', '/api/calendar/v1/', '/openapi/public-v1.yaml', '/docs', '/healthz', '/readyz']) {
      expect(examples.some((example) => example.status === 200 && example.script.includes(`$API_URL${path}`)), path).toBe(true);
    }
  });
});

describeWhere(curlAvailable ? null : 'no curl on this machine', 'the curl examples against a running server', () => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;
  let unreachableDb: Database;
  let unreachableApi: TestApi;

  beforeAll(async () => {
    db = await openTestDatabase('embedded');
    ws = await seedWorkspace(db, contractFixture('Curl', 3));
    // A short header timeout, so that the 408 example is answered in a second.
    api = await startTestApi(db, { HEADERS_TIMEOUT_MS: '1000' });
    unreachableDb = await openDatabase({ url: 'postgresql://postgres@127.0.0.1:9/none', connectionTimeoutMs: 500 });
    unreachableApi = await startTestApi(unreachableDb);
  });
  afterAll(async () => {
    await api?.close();
    await db?.close();
    await unreachableApi?.close();
    await unreachableDb?.close();
  });

  /** The variables of the setup block, with keys of the example's own so that no example spends another's rate limit. */
  async function variables(example: Example): Promise<Record<string, string>> {
    const key = (scopes: string[], allowedIps: string[] | null = null) =>
      createApiKey(db, { workspaceId: ws.workspaceId, memberEmail: OWNER_EMAIL, scopes, allowedIps }).then((issued) => issued.key);
    return {
      API_URL: (example.needsUnreachableDatabase ? unreachableApi : api).url,
      WORKSPACE: ws.workspaceId,
      API_KEY: await key(['courses:read', 'bookings:read', 'participants:read']),
      COURSES_KEY: await key(['courses:read']),
      FENCED_KEY: await key(['courses:read'], ['192.0.2.0/24']),
      FEED_TOKEN: (await createFeedToken(db, { workspaceId: ws.workspaceId, memberEmail: OWNER_EMAIL })).token,
    };
  }

  it.each(examples.map((example) => [`${example.status}${example.code ? ` ${example.code}` : ''}`, example.script.trim().split('\n').at(-1), example] as const))(
    'answers %s to: %s',
    async (_claim, _line, example) => {
      const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', example.script], {
        env: { PATH: process.env.PATH ?? '', ...(await variables(example)) },
        timeout: 30_000,
        maxBuffer: 10 * 1024 * 1024,
      });
      const { status, body } = parseCurlOutput(stdout);
      expect(status).toBe(example.status);
      if (example.code) expect(JSON.parse(body)).toEqual({ error: { code: example.code, message: expect.any(String) } });
    },
  );
});
