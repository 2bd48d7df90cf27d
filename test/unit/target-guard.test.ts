import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { InputError, isInputError } from '../../src/input-error.ts';
import { TargetRefusedError, assertLiteralHostAllowed, guardedLookup, isPublicAddress, parseTargetUrl } from '../../src/webhooks/target-guard.ts';

function expectPublic(addresses: string[]): void {
  for (const address of addresses) expect(isPublicAddress(address), address).toBe(true);
}

function expectNotPublic(addresses: string[]): void {
  for (const address of addresses) expect(isPublicAddress(address), address).toBe(false);
}

describe('isPublicAddress: IPv4', () => {
  it('accepts public unicast addresses, up to the edges of the ranges around them', () => {
    expectPublic(['8.8.8.8', '1.1.1.1', '1.0.0.0', '93.184.216.34', '223.255.255.255', '126.255.255.255', '128.0.0.0']);
    expectPublic(['9.255.255.255', '11.0.0.0', '172.15.255.255', '172.32.0.0', '192.167.255.255', '192.169.0.0']);
    expectPublic(['100.63.255.255', '100.128.0.0', '169.253.255.255', '169.255.0.0', '198.17.255.255', '198.20.0.0']);
  });

  it('refuses the private ranges 10/8, 172.16/12 and 192.168/16', () => {
    expectNotPublic(['10.0.0.0', '10.0.0.1', '10.255.255.255', '172.16.0.0', '172.20.1.1', '172.31.255.255', '192.168.0.0', '192.168.1.1', '192.168.255.255']);
  });

  it('refuses loopback 127/8, not only 127.0.0.1', () => {
    expectNotPublic(['127.0.0.1', '127.0.0.0', '127.1.2.3', '127.255.255.254']);
  });

  it('refuses link-local 169.254/16, the cloud metadata address included', () => {
    expectNotPublic(['169.254.0.1', '169.254.169.254', '169.254.255.255']);
  });

  it('refuses carrier-grade NAT 100.64/10', () => {
    expectNotPublic(['100.64.0.0', '100.64.0.1', '100.100.100.200', '100.127.255.255']);
  });

  it('refuses multicast 224/4, the broadcast address and the unspecified range 0/8', () => {
    expectNotPublic(['224.0.0.0', '224.0.0.1', '239.255.255.255']);
    expectNotPublic(['255.255.255.255']);
    expectNotPublic(['0.0.0.0', '0.1.2.3']);
  });

  it('refuses the reserved 240/4, the documentation ranges, benchmarking 198.18/15 and the IETF protocol block', () => {
    expectNotPublic(['240.0.0.0', '240.0.0.1', '255.255.255.254']);
    expectNotPublic(['192.0.2.0', '192.0.2.1', '192.0.2.255', '198.51.100.1', '203.0.113.1']);
    expectNotPublic(['198.18.0.0', '198.18.0.1', '198.19.255.255']);
    expectNotPublic(['192.0.0.1', '192.88.99.1']);
  });
});

describe('isPublicAddress: IPv6', () => {
  it('accepts global unicast addresses, in any letter case', () => {
    expectPublic(['2606:4700:4700::1111', '2001:4860:4860::8888', '2a00:1450:4001:82a::200e', '2003::1', '2001:db7:ffff::1', '2001:db9::1']);
    expectPublic(['2606:4700:4700:0:0:0:0:1111', '2A00:1450:4001:82A::200E']);
  });

  it('refuses loopback ::1 and the unspecified address ::, however they are written', () => {
    expectNotPublic(['::1', '0:0:0:0:0:0:0:1', '::', '0000:0000:0000:0000:0000:0000:0000:0000']);
  });

  it('refuses link-local fe80::/10, with or without a zone index', () => {
    expectNotPublic(['fe80::1', 'FE80::1', 'febf:ffff::1', 'fe80::1%eth0']);
  });

  it('refuses unique-local fc00::/7 and the deprecated site-local fec0::/10', () => {
    expectNotPublic(['fc00::1', 'fd00::1', 'fd12:3456:789a::1', 'fdff:ffff::1', 'fec0::1']);
  });

  it('refuses multicast ff00::/8', () => {
    expectNotPublic(['ff00::1', 'ff02::1', 'ff05::1:3', 'ff0e::1']);
  });

  it('judges an IPv4-mapped address as the IPv4 address it carries', () => {
    expectNotPublic(['::ffff:127.0.0.1', '::FFFF:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '::ffff:192.168.0.1']);
    expectNotPublic(['::ffff:169.254.169.254', '::ffff:100.64.0.1', '::ffff:0.0.0.0', '::ffff:224.0.0.1', '::ffff:255.255.255.255']);
    expectPublic(['::ffff:8.8.8.8', '::ffff:808:808', '::ffff:1.1.1.1']);
  });

  it('refuses the tunnelling ranges 6to4 2002::/16 and Teredo 2001::/32, and NAT64 64:ff9b::/96', () => {
    expectNotPublic(['2002::', '2002:c000:0204::1', '2002:ffff::1']);
    expectNotPublic(['2001::', '2001::1', '2001:0:4136:e378::1', '2001:0:ffff::1']);
    expectNotPublic(['64:ff9b::8.8.8.8', '64:ff9b::808:808']);
  });

  it('refuses documentation 2001:db8::/32 and 3fff::/20, benchmarking 2001:2::/48, discard 100::/64 and ORCHID', () => {
    expectNotPublic(['2001:db8::', '2001:db8::1', '2001:DB8:ffff::1', '3fff::1']);
    expectNotPublic(['2001:2::1', '100::', '100::1', '2001:10::1', '2001:20::1']);
  });
});

describe('isPublicAddress: text that is not an address', () => {
  it('refuses empty, malformed, out-of-range, padded and bracketed text, and host names', () => {
    expectNotPublic(['', 'not an ip', 'localhost', 'example.com', '256.0.0.1', '1.2.3.4.5', '8.8.8.8/32', ' 8.8.8.8', '8.8.8.8 ', '8.8.8.8\n']);
    expectNotPublic(['gggg::1', '1:2:3:4:5:6:7:8:9', '2606:4700::1111::1', '::ffff:999.0.0.1', '[::1]', '[2606:4700:4700::1111]', ':::']);
  });

  it('refuses the short and numeric forms of a non-public IPv4 address, as a URL parser reads them', () => {
    expectNotPublic(['127.1', '0x7f.0.0.1', '0x7f000001', '2130706433', '0177.0.0.1', '10.1']);
  });
});

describe('parseTargetUrl', () => {
  const refusal = (text: string, allowPrivate = false): string => {
    try {
      parseTargetUrl(text, allowPrivate);
    } catch (error) {
      expect(error).toBeInstanceOf(InputError);
      expect(isInputError(error)).toBe(true);
      return (error as Error).message;
    }
    throw new Error(`${text} was accepted`);
  };
  const nonPublic = (host: string) => `--url points at a non-public address (${host}); set WEBHOOK_ALLOW_PRIVATE_TARGETS=true for local development`;

  it('returns the parsed URL of an absolute https address, normalised', () => {
    const url = parseTargetUrl('HTTPS://Hooks.Example.COM:8443/in?x=1#f', false);
    expect(url).toBeInstanceOf(URL);
    expect(url.href).toBe('https://hooks.example.com:8443/in?x=1#f');
    expect(parseTargetUrl('https://example.com', false).href).toBe('https://example.com/');
  });

  it('refuses text that is not an absolute URL, quoting it', () => {
    expect(refusal('')).toBe('--url "" is not an absolute URL');
    expect(refusal('/hooks/in')).toBe('--url "/hooks/in" is not an absolute URL');
    expect(refusal('example.com/hook')).toBe('--url "example.com/hook" is not an absolute URL');
    expect(refusal('https://exa mple.com/')).toBe('--url "https://exa mple.com/" is not an absolute URL');
    expect(refusal('https://')).toBe('--url "https://" is not an absolute URL');
  });

  it('refuses every scheme but https, naming it', () => {
    expect(refusal('http://example.com/hook')).toBe('--url must use https:// (got http://); plain http is never allowed');
    expect(refusal('http://example.com/hook', true)).toBe('--url must use https:// (got http://); plain http is never allowed');
    expect(refusal('ftp://example.com/')).toBe('--url must use https:// (got ftp://); plain http is never allowed');
    expect(refusal('wss://example.com/')).toBe('--url must use https:// (got wss://); plain http is never allowed');
    expect(refusal('javascript:alert(1)')).toBe('--url must use https:// (got javascript://); plain http is never allowed');
  });

  it('refuses a user name or a password, without repeating them', () => {
    for (const text of ['https://user:secret@example.com/', 'https://user@example.com/', 'https://:secret@example.com/']) {
      const message = refusal(text);
      expect(message, text).toBe('--url must not contain a user name or password');
      expect(message).not.toContain('secret');
    }
  });

  it('accepts a URL of 2048 characters and refuses one of 2049', () => {
    const base = 'https://example.com/';
    expect(parseTargetUrl(base + 'a'.repeat(2048 - base.length), false).href).toHaveLength(2048);
    expect(refusal(base + 'a'.repeat(2049 - base.length))).toBe('--url is longer than 2048 characters');
  });

  it('refuses a literal non-public address unless private targets are allowed, naming the host', () => {
    expect(refusal('https://127.0.0.1/hook')).toBe(nonPublic('127.0.0.1'));
    expect(refusal('https://10.0.0.1/hook')).toBe(nonPublic('10.0.0.1'));
    expect(refusal('https://169.254.169.254/latest/meta-data')).toBe(nonPublic('169.254.169.254'));
    expect(refusal('https://[::1]:8443/hook')).toBe(nonPublic('[::1]'));
    expect(refusal('https://[fd00::1]/')).toBe(nonPublic('[fd00::1]'));
    expect(refusal('https://[::ffff:127.0.0.1]/')).toBe(nonPublic('[::ffff:7f00:1]'));
    for (const text of ['https://127.0.0.1/hook', 'https://10.0.0.1/hook', 'https://[::1]:8443/hook', 'https://[::ffff:127.0.0.1]/']) {
      expect(parseTargetUrl(text, true).href, text).toBe(new URL(text).href);
    }
  });

  it('refuses the short, numeric and trailing-dot spellings of a loopback address, which the URL parser normalises', () => {
    for (const text of ['https://127.1/', 'https://0x7f.0.0.1/', 'https://2130706433/', 'https://0177.0.0.1/', 'https://127.0.0.1./']) {
      expect(refusal(text), text).toBe(nonPublic('127.0.0.1'));
    }
  });

  it('accepts a literal public address and leaves host names to be checked when connecting', () => {
    expect(parseTargetUrl('https://8.8.8.8/hook', false).hostname).toBe('8.8.8.8');
    expect(parseTargetUrl('https://[2606:4700:4700::1111]/hook', false).hostname).toBe('[2606:4700:4700::1111]');
    expect(parseTargetUrl('https://[::ffff:8.8.8.8]/hook', false).hostname).toBe('[::ffff:808:808]');
    expect(parseTargetUrl('https://localhost/hook', false).hostname).toBe('localhost');
    expect(parseTargetUrl('https://10.0.0.1.nip.io/hook', false).hostname).toBe('10.0.0.1.nip.io');
  });

  it('reports the scheme before the credentials and the credentials before the length', () => {
    expect(refusal(`http://user:pw@example.com/${'a'.repeat(3000)}`)).toBe('--url must use https:// (got http://); plain http is never allowed');
    expect(refusal(`https://user:pw@example.com/${'a'.repeat(3000)}`)).toBe('--url must not contain a user name or password');
    expect(refusal(`https://127.0.0.1/${'a'.repeat(3000)}`)).toBe('--url is longer than 2048 characters');
  });
});

describe('assertLiteralHostAllowed', () => {
  const refused = (text: string): TargetRefusedError => {
    try {
      assertLiteralHostAllowed(new URL(text), false);
    } catch (error) {
      expect(error).toBeInstanceOf(TargetRefusedError);
      return error as TargetRefusedError;
    }
    throw new Error(`${text} was allowed`);
  };

  it('refuses a bracketed non-public IPv6 host, naming the address without brackets', () => {
    const error = refused('https://[::1]:8443/hook');
    expect(error.message).toBe('::1 resolves only to non-public addresses');
    expect(error.code).toBe('ERR_WEBHOOK_TARGET_REFUSED');
    expect(error.name).toBe('TargetRefusedError');
    expect(refused('https://[fe80::1]/').message).toBe('fe80::1 resolves only to non-public addresses');
    expect(refused('https://[fc00::1]/').message).toBe('fc00::1 resolves only to non-public addresses');
    expect(refused('https://[ff02::1]/').message).toBe('ff02::1 resolves only to non-public addresses');
    expect(refused('https://[2001:db8::1]/').message).toBe('2001:db8::1 resolves only to non-public addresses');
    expect(refused('https://[::ffff:10.0.0.1]/').message).toBe('::ffff:a00:1 resolves only to non-public addresses');
  });

  it('refuses a non-public IPv4 host', () => {
    expect(refused('https://192.168.1.1/').message).toBe('192.168.1.1 resolves only to non-public addresses');
    expect(refused('https://0.0.0.0/').message).toBe('0.0.0.0 resolves only to non-public addresses');
  });

  it('allows a public literal host, any host name, and every host when private targets are allowed', () => {
    for (const text of ['https://[2606:4700:4700::1111]/', 'https://8.8.8.8/', 'https://localhost/', 'https://internal.example/']) {
      expect(() => assertLiteralHostAllowed(new URL(text), false), text).not.toThrow();
    }
    for (const text of ['https://[::1]/', 'https://127.0.0.1/', 'https://[fe80::1]/', 'https://169.254.169.254/']) {
      expect(() => assertLiteralHostAllowed(new URL(text), true), text).not.toThrow();
    }
  });
});

describe('guardedLookup', () => {
  type Answer = { error: Error | null; address?: string | LookupAddress[]; family?: number };

  /** Calls the lookup as a socket does; IP literals and localhost never leave the machine. */
  function lookUp(allowPrivate: boolean, hostname: string, options: { all?: boolean; family?: number } = {}): Promise<Answer> {
    const lookup = guardedLookup(allowPrivate) as unknown as (
      hostname: string,
      options: { all?: boolean; family?: number },
      callback: (error: Error | null, address?: string | LookupAddress[], family?: number) => void,
    ) => void;
    return new Promise((resolve) => lookup(hostname, options, (error, address, family) => resolve({ error, address, family })));
  }

  it('answers a public literal with its address and family, or the list of them when all are asked for', async () => {
    expect(await lookUp(false, '8.8.8.8')).toEqual({ error: null, address: '8.8.8.8', family: 4 });
    expect(await lookUp(false, '2606:4700:4700::1111')).toEqual({ error: null, address: '2606:4700:4700::1111', family: 6 });
    expect(await lookUp(false, '8.8.8.8', { all: true })).toEqual({ error: null, address: [{ address: '8.8.8.8', family: 4 }], family: undefined });
  });

  it('refuses a non-public literal with TargetRefusedError naming the host', async () => {
    for (const hostname of ['127.0.0.1', '10.0.0.1', '169.254.169.254', '::1', 'fe80::1', '::ffff:127.0.0.1']) {
      const { error, address } = await lookUp(false, hostname);
      expect(error, hostname).toBeInstanceOf(TargetRefusedError);
      expect(error!.message).toBe(`${hostname} resolves only to non-public addresses`);
      expect((error as TargetRefusedError).code).toBe('ERR_WEBHOOK_TARGET_REFUSED');
      expect(address).toBeUndefined();
    }
    expect((await lookUp(false, '127.0.0.1', { all: true })).error).toBeInstanceOf(TargetRefusedError);
  });

  it('refuses localhost, which resolves only to loopback, whether one address or all are asked for', async () => {
    for (const options of [{}, { all: true }]) {
      const { error } = await lookUp(false, 'localhost', options);
      expect(error).toBeInstanceOf(TargetRefusedError);
      expect(error!.message).toBe('localhost resolves only to non-public addresses');
    }
  });

  it('answers non-public addresses when private targets are allowed', async () => {
    expect(await lookUp(true, '127.0.0.1')).toEqual({ error: null, address: '127.0.0.1', family: 4 });
    expect(await lookUp(true, '::1')).toEqual({ error: null, address: '::1', family: 6 });
    const local = await lookUp(true, 'localhost');
    expect(local.error).toBeNull();
    expect(['127.0.0.1', '::1']).toContain(local.address);
    const all = await lookUp(true, 'localhost', { all: true });
    expect(all.error).toBeNull();
    expect((all.address as LookupAddress[]).length).toBeGreaterThan(0);
    for (const entry of all.address as LookupAddress[]) expect(isPublicAddress(entry.address)).toBe(false);
  });
});
