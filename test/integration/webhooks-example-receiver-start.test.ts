import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listen, settingsFrom, type ReceiverSettings } from '../../examples/webhook-receiver/receiver.ts';
import { selfSignedCertificate } from '../support/webhook-receiver.ts';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const settings = (env: Record<string, string>) => settingsFrom({ WEBHOOK_SECRET: SECRET, ...env });
const problemOf = (env: Record<string, string>) => {
  const found = settingsFrom(env);
  return 'problem' in found ? found.problem : null;
};

/**
 * examples/webhook-receiver started by hand, as its README says: what is wrong in its environment
 * or with its port is said in one sentence that names what to change, never a stack trace; and it
 * listens on the loopback address unless told otherwise.
 */
describe('starting the example webhook receiver', () => {
  const open: Server[] = [];
  const dirs: string[] = [];
  afterAll(async () => {
    for (const server of open) await new Promise((resolve) => server.close(resolve));
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('with the secret `webhook add` printed and nothing else, listens on 127.0.0.1:8443 over plain HTTP', () => {
    expect(settings({})).toEqual({ secret: SECRET, host: '127.0.0.1', port: 8443 });
    expect(settings({ RECEIVER_HOST: '0.0.0.0', RECEIVER_PORT: '9443' })).toMatchObject({ host: '0.0.0.0', port: 9443 });
  });

  it('a missing or malformed secret is named, without echoing it', () => {
    expect(problemOf({})).toBe('Set WEBHOOK_SECRET to the whsec_… secret that `webhook add` printed.');
    expect(problemOf({ WEBHOOK_SECRET: 'not-a-secret' })).toBe('Set WEBHOOK_SECRET to the whsec_… secret that `webhook add` printed.');
    for (const malformed of ['whsec_', 'whsec_abc', 'whsec_!!!!']) {
      const problem = problemOf({ WEBHOOK_SECRET: malformed });
      expect(problem).toBe('WEBHOOK_SECRET is not a whole whsec_… secret (whsec_ and base64): copy it again from what `webhook add` printed.');
    }
  });

  it('a port that is no port, half a TLS pair or an unreadable file is named', () => {
    expect(problemOf({ WEBHOOK_SECRET: SECRET, RECEIVER_PORT: 'https' })).toBe('RECEIVER_PORT must be a port number from 1 to 65535, not "https".');
    expect(problemOf({ WEBHOOK_SECRET: SECRET, RECEIVER_PORT: '70000' })).toContain('RECEIVER_PORT must be a port number');
    expect(problemOf({ WEBHOOK_SECRET: SECRET, TLS_CERT: 'cert.pem' })).toBe('Set both TLS_CERT and TLS_KEY (PEM files) to serve HTTPS, or neither to serve plain HTTP behind a proxy.');
    expect(problemOf({ WEBHOOK_SECRET: SECRET, TLS_CERT: '/nowhere/cert.pem', TLS_KEY: '/nowhere/key.pem' })).toBe('TLS_CERT or TLS_KEY cannot be read: no such file.');
  });

  it('listens on the loopback address only by default', async () => {
    const found = settings({ RECEIVER_PORT: '1' }) as ReceiverSettings;
    const server = await listen({ ...found, port: 0 }, () => {});
    open.push(server);
    expect((server.address() as AddressInfo).address).toBe('127.0.0.1');
  });

  it('a port in use is named with the setting that moves it', async () => {
    const busy = createServer();
    open.push(busy);
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as AddressInfo).port;
    await expect(listen({ secret: SECRET, host: '127.0.0.1', port }, () => {})).rejects.toThrow(`127.0.0.1:${port} is in use by another program: set RECEIVER_PORT to a free port.`);
  });

  it('TLS files that are not a certificate and its key are named; a real pair serves HTTPS', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'receiver-tls-'));
    dirs.push(dir);
    await writeFile(join(dir, 'cert.pem'), 'not a certificate');
    await writeFile(join(dir, 'key.pem'), 'not a key');
    const wrong = settings({ TLS_CERT: join(dir, 'cert.pem'), TLS_KEY: join(dir, 'key.pem') }) as ReceiverSettings;
    await expect(listen({ ...wrong, port: 0 }, () => {})).rejects.toThrow('TLS_CERT and TLS_KEY are not a PEM certificate and its private key.');
    const pair = await selfSignedCertificate();
    await writeFile(join(dir, 'cert.pem'), pair.cert);
    await writeFile(join(dir, 'key.pem'), pair.key);
    const right = settings({ TLS_CERT: join(dir, 'cert.pem'), TLS_KEY: join(dir, 'key.pem') }) as ReceiverSettings;
    const server = await listen({ ...right, port: 0 }, () => {});
    open.push(server);
    expect(server.listening).toBe(true);
  });
});
