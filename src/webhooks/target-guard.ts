import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, isIPv6, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { InputError } from '../input-error.ts';

/**
 * Only addresses in the public unicast range may be reached (docs/contract-rules.md, webhooks.targets).
 * ipaddr.js names every special-purpose range (private, loopback, link-local, unique-local,
 * carrier-grade NAT, multicast, reserved, 6to4, Teredo, …); `unicast` is what remains. IPv4-mapped
 * IPv6 addresses are judged as the IPv4 address they carry.
 */
export function isPublicAddress(address: string): boolean {
  const canonical = isIPv6(address) ? canonicalIPv6(address) : address;
  if (canonical === null || !ipaddr.isValid(canonical)) return false;
  const parsed = ipaddr.process(canonical);
  if (parsed.range() !== 'unicast') return false;
  // An IPv6 address must also be global unicast (2000::/3): `::7f00:1` (IPv4-compatible,
  // `[::127.0.0.1]`) and every other unassigned range count as "unicast" for ipaddr.js.
  return parsed.kind() === 'ipv4' || parsed.match(GLOBAL_UNICAST);
}

const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');

/**
 * The address as the URL standard writes it: ipaddr.js reads `::8.8.8.8` (IPv4-compatible) as
 * `::ffff:8.8.8.8` (IPv4-mapped), where the URL parser, like the network, reads `::808:808`.
 */
function canonicalIPv6(address: string): string | null {
  try {
    return new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
}

/** The connection was about to reach a non-public address. */
export class TargetRefusedError extends Error {
  readonly code = 'ERR_WEBHOOK_TARGET_REFUSED';

  constructor(host: string) {
    super(`${host} resolves only to non-public addresses`);
    this.name = 'TargetRefusedError';
  }
}

/**
 * A DNS lookup for the HTTPS agent that drops non-public addresses. The socket connects to the
 * address this function returns, so the check and the connection see the same answer: a name that
 * changes its answer between the two (DNS rebinding) gains nothing.
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return ((hostname: string, options: { all?: boolean; family?: number | string }, callback: (...args: unknown[]) => void) => {
    dnsLookup(hostname, { ...options, all: true } as never, (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => {
      if (error) return callback(error);
      const usable = allowPrivate ? addresses : addresses.filter((entry) => isPublicAddress(entry.address));
      if (usable.length === 0) return callback(new TargetRefusedError(hostname));
      if (options.all) return callback(null, usable);
      return callback(null, usable[0]!.address, usable[0]!.family);
    });
  }) as unknown as LookupFunction;
}

/** A literal address in the URL never goes through DNS, so it is checked on its own. */
export function assertLiteralHostAllowed(url: URL, allowPrivate: boolean): void {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && isIP(host) && !isPublicAddress(host)) throw new TargetRefusedError(host);
}

/**
 * The checks made when an endpoint is registered (and again before every attempt): an absolute
 * `https://` URL without credentials; a literal non-public address is refused at once unless
 * private targets are allowed. Names are resolved only when connecting.
 */
export function parseTargetUrl(text: string, allowPrivate: boolean, label = '--url'): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InputError(`${label} ${JSON.stringify(text)} is not an absolute URL`, { field: label });
  }
  if (url.protocol !== 'https:') throw new InputError(`${label} must use https:// (got ${url.protocol}//); plain http is never allowed`, { field: label });
  if (url.username || url.password) throw new InputError(`${label} must not contain a user name or password`, { field: label });
  if (text.length > 2048) throw new InputError(`${label} is longer than 2048 characters`, { field: label });
  try {
    assertLiteralHostAllowed(url, allowPrivate);
  } catch (error) {
    if (error instanceof TargetRefusedError) {
      throw new InputError(`${label} points at a non-public address (${url.hostname}); set WEBHOOK_ALLOW_PRIVATE_TARGETS=true for local development`, { field: label });
    }
    throw error;
  }
  return url;
}
