import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { cliOn } from '../support/cli.ts';
import { openTestDatabase } from '../support/databases.ts';

import { ADMIN_ARGUMENTS, ROOT } from '../support/service-commands.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

describeOnEachDatabase('operator CLI on %s', (target) => {
  let db: Database;
  let workspaceId: string;

  const cli = (...argv: string[]) => cliOn(db).run(...argv);
  const json = (...argv: string[]) => cliOn(db).json(...argv);
  const count = async (table: string) => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!.n;

  beforeAll(async () => {
    db = await openTestDatabase(target);
    workspaceId = (await json('workspace', 'create', '--name', 'CLI Academy')).id as string;
    await json('member', 'add', '--workspace', workspaceId, '--email', 'owner@cli.example', '--name', 'Olivia', '--role', 'owner');
    await json('member', 'add', '--workspace', workspaceId, '--email', 'admin@cli.example', '--name', 'Adam', '--role', 'admin');
    await json('member', 'add', '--workspace', workspaceId, '--email', 'member@cli.example', '--name', 'Mia', '--role', 'member');
  });
  afterAll(async () => {
    await db?.close();
  });

  it('creates a workspace and members, printing their opaque ids as JSON', async () => {
    expect(workspaceId).toMatch(/^ws_[0-9a-f]{32}$/);
    const member = await json('member', 'add', '--workspace', workspaceId, '--email', 'second@cli.example', '--name', 'Sam', '--role', 'member');
    expect(member).toEqual({ id: expect.stringMatching(/^mem_[0-9a-f]{32}$/) });
  });

  it('migrate reports nothing left to apply on a migrated database', async () => {
    expect(await json('migrate')).toEqual({ applied: [] });
  });

  it('refuses bad member input with a clear message, a non-zero exit and no write', async () => {
    const before = await count('members');
    for (const [argv, message] of [
      [['member', 'add', '--workspace', workspaceId, '--email', 'not-an-email', '--name', 'X', '--role', 'owner'], /not an e-mail address/],
      [['member', 'add', '--workspace', 'ws_missing', '--email', 'x@cli.example', '--name', 'X', '--role', 'owner'], /No workspace with id "ws_missing"/],
      [['member', 'add', '--workspace', workspaceId, '--email', 'OWNER@cli.example', '--name', 'X', '--role', 'owner'], /already exists/],
      [['member', 'add', '--workspace', workspaceId, '--email', 'y@cli.example', '--name', 'X', '--role', 'boss'], /Allowed choices are owner, admin, member/],
      [['member', 'add', '--workspace', workspaceId, '--email', 'y@cli.example', '--role', 'owner'], /required option '--name <name>'/],
    ] as const) {
      const result = await cli(...argv);
      expect(result.code, argv.join(' ')).not.toBe(0);
      expect(result.stderr).toMatch(/^error: /);
      expect(result.stderr).toMatch(message);
      expect(result.stdout).toBe('');
    }
    expect(await count('members')).toBe(before);
  });

  it('auth.who-creates-keys: key create works for owners and admins and prints the key once with its scopes', async () => {
    for (const email of ['owner@cli.example', 'admin@cli.example']) {
      const issued = await json('key', 'create', '--workspace', workspaceId, '--member', email, '--scopes', 'courses:read,bookings:read', '--name', `by ${email}`);
      expect(issued).toEqual({
        id: expect.stringMatching(/^key_/),
        key: expect.stringMatching(/^svc_api_[0-9A-Za-z]{38}$/),
        scopes: ['courses:read', 'bookings:read'],
        expiresAt: null,
        allowedIps: null,
      });
    }
  });

  it('auth.who-creates-keys: key create refuses a plain member, an unknown e-mail, unknown scopes and participants:read without bookings:read, writing nothing', async () => {
    const before = await count('api_keys');
    for (const [member, scopes, message] of [
      ['member@cli.example', 'courses:read', /only an owner or admin/],
      ['nobody@cli.example', 'courses:read', /No member with e-mail "nobody@cli.example"/],
      ['owner@cli.example', 'courses:read,everything', /Unknown scope "everything"/],
      ['owner@cli.example', 'courses:read,participants:read', /participants:read cannot be granted without bookings:read/],
    ] as const) {
      const result = await cli('key', 'create', '--workspace', workspaceId, '--member', member, '--scopes', scopes);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(message);
      expect(result.stdout).toBe('');
    }
    expect(await count('api_keys')).toBe(before);
  });

  it('auth.storage: key list shows id, name, scopes, last 4, created, last used and state, never the key or its hash', async () => {
    const issued = await json('key', 'create', '--workspace', workspaceId, '--member', 'owner@cli.example', '--scopes', 'bookings:read,participants:read', '--name', 'Listed');
    const listed = (await cli('key', 'list', '--workspace', workspaceId, '--json')).stdout;
    const keys = JSON.parse(listed) as Array<Record<string, unknown>>;
    const entry = keys.find((k) => k.id === issued.id)!;
    expect(entry).toEqual({
      id: issued.id,
      name: 'Listed',
      scopes: ['bookings:read', 'participants:read'],
      last4: String(issued.key).slice(-4),
      createdAt: expect.stringMatching(/Z$/),
      expiresAt: null,
      allowedIps: null,
      lastUsedAt: null,
      lastUsedNetwork: null,
      state: 'active',
      tagged: true,
    });
    expect(listed).not.toContain(String(issued.key));
    expect(listed).not.toContain(String(issued.key).slice(8, 40));
    const stored = await db.query<{ h: string }>("SELECT encode(key_hash, 'hex') AS h FROM api_keys WHERE id = $1", [issued.id]);
    expect(listed).not.toContain(stored.rows[0]!.h);
    const text = await cli('key', 'list', '--workspace', workspaceId);
    expect(text.stdout).toContain(`…${String(issued.key).slice(-4)}`);
    expect(text.stdout).not.toContain(String(issued.key));
  });

  it('auth.revocation: key rotate gives a new key with the same name and scopes and marks the old one rotated; revoke marks revoked', async () => {
    const issued = await json('key', 'create', '--workspace', workspaceId, '--member', 'admin@cli.example', '--scopes', 'courses:read', '--name', 'Rotating');
    const rotated = await json('key', 'rotate', '--id', String(issued.id));
    expect(rotated).toEqual({ id: expect.stringMatching(/^key_/), key: expect.stringMatching(/^svc_api_/), expiresAt: null });
    expect(rotated.key).not.toBe(issued.key);
    const keys = JSON.parse((await cli('key', 'list', '--workspace', workspaceId, '--json')).stdout) as Array<Record<string, unknown>>;
    expect(keys.find((k) => k.id === issued.id)!.state).toBe('rotated');
    expect(keys.find((k) => k.id === rotated.id)).toMatchObject({ name: 'Rotating', scopes: ['courses:read'], state: 'active' });
    expect(await json('key', 'revoke', '--id', String(rotated.id))).toEqual({ id: rotated.id, state: 'revoked' });
    const again = await cli('key', 'rotate', '--id', String(rotated.id));
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already revoked or rotated/);
    expect((await cli('key', 'revoke', '--id', 'key_missing')).stderr).toMatch(/No API key with id "key_missing"/);
  });

  it('feed create, list and revoke manage calendar feed tokens without showing them again', async () => {
    const issued = await json('feed', 'create', '--workspace', workspaceId, '--member', 'owner@cli.example', '--name', 'Team');
    expect(issued).toEqual({ id: expect.stringMatching(/^feed_/), token: expect.stringMatching(/^svc_cal_[0-9A-Za-z]{32}$/), path: `/api/calendar/v1/${String(issued.token)}.ics` });
    const listed = (await cli('feed', 'list', '--workspace', workspaceId, '--json')).stdout;
    expect(listed).not.toContain(String(issued.token));
    expect(JSON.parse(listed)).toContainEqual({ id: issued.id, name: 'Team', last4: String(issued.token).slice(-4), createdAt: expect.any(String), state: 'active' });
    expect(await json('feed', 'revoke', '--id', String(issued.id))).toEqual({ id: issued.id, state: 'revoked' });
    expect((await cli('feed', 'create', '--workspace', workspaceId, '--member', 'member@cli.example')).stderr).toMatch(/only an owner or admin/);
  });

  it('import reads a fixture file and demo imports the bundled workspace', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cli-'));
    try {
      const file = join(dir, 'fixture.json');
      await writeFile(file, JSON.stringify({ workspace: { name: 'From file' }, courseTemplates: [{ ref: 't', title: 'T', description: '' }] }));
      const imported = await json('import', '--file', file);
      expect(imported).toEqual({ workspaceId: expect.stringMatching(/^ws_/), ids: { t: expect.stringMatching(/^tpl_/) } });
      const missing = await cli('import', '--file', join(dir, 'nope.json'));
      expect(missing).toMatchObject({ code: 1, stdout: '' });
      expect(missing.stderr).toMatch(/^error: Cannot read .*nope\.json: ENOENT/);
      await writeFile(file, '{ not json');
      expect((await cli('import', '--file', file)).stderr).toMatch(/is not valid JSON/);
      const demo = await json('demo');
      const bookings = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM bookings WHERE workspace_id = $1', [demo.workspaceId]);
      expect(bookings.rows[0]!.n).toBeGreaterThanOrEqual(150);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('every command has --help, exiting 0', async () => {
    for (const argv of [
      [], ['migrate'], ['workspace', 'create'], ['member', 'add'], ['import'], ['demo'],
      ['key', 'create'], ['key', 'list'], ['key', 'update'], ['key', 'revoke'], ['key', 'rotate'], ['key', 'log'], ['key', 'usage'],
      ['feed', 'create'], ['feed', 'list'], ['feed', 'revoke'],
    ]) {
      const result = await cli(...argv, '--help');
      expect(result.code, argv.join(' ')).toBe(0);
      expect(result.stdout).toMatch(/^Usage: admin/);
    }
  });

  it('an unknown command or option exits 2 with error: on stderr', async () => {
    const unknownCommand = await cli('launch');
    expect(unknownCommand.code).toBe(2);
    expect(unknownCommand.stderr).toMatch(/^error: unknown command 'launch'/);
    const unknownOption = await cli('workspace', 'create', '--name', 'X', '--colour', 'red');
    expect(unknownOption.code).toBe(2);
    expect(unknownOption.stderr).toMatch(/^error: unknown option '--colour'/);
  });
});

describe('the CLI as a process', () => {
  it('runs on the embedded database in DATA_DIR and prints JSON', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cli-process-'));
    try {
      const env = { PATH: process.env.PATH, DATA_DIR: dir };
      const run = (...argv: string[]) => promisify(execFile)(process.execPath, [...ADMIN_ARGUMENTS, ...argv], { cwd: ROOT, env });
      const created = JSON.parse((await run('workspace', 'create', '--name', 'Process', '--json')).stdout) as { id: string };
      expect(created.id).toMatch(/^ws_/);
      const failure = await run('member', 'add', '--workspace', created.id, '--email', 'x', '--name', 'X', '--role', 'owner').catch((error: { code: number; stderr: string }) => error);
      expect(failure).toMatchObject({ code: 1, stderr: expect.stringMatching(/^error: --email "x" is not an e-mail address/) });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
