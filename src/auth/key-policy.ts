import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { InputError } from '../input-error.ts';

/** The most networks one key's allow list may hold. */
export const MAX_ALLOWED_NETWORKS = 100;

const MINUTE_MS = 60_000;
const UNIT_MS = { m: MINUTE_MS, h: 60 * MINUTE_MS, d: 24 * 60 * MINUTE_MS, w: 7 * 24 * 60 * MINUTE_MS } as const;
/** A key lives at least a minute and at most ten years. */
const SHORTEST_MS = MINUTE_MS;
const LONGEST_MS = 3650 * UNIT_MS.d;

/**
 * `30d`, `12h`, `90m`, `2w`: a whole number and one unit, in milliseconds. A bare number is refused
 * rather than read in some unit the operator did not mean.
 */
export function parseDuration(label: string, text: string): number {
  const match = /^\s*(\d{1,7})\s*([mhdw])\s*$/.exec(text);
  if (!match) {
    throw new InputError(`${label} ${JSON.stringify(text)} is not a duration: give a whole number and a unit, m (minutes), h (hours), d (days) or w (weeks), e.g. 30d or 12h`, { field: label });
  }
  const ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  if (ms < SHORTEST_MS || ms > LONGEST_MS) throw new InputError(`${label} ${JSON.stringify(text)} is out of range: at least 1m, at most 3650d`, { field: label });
  return ms;
}

const isoInstant = z.iso.datetime({ offset: true });

/** An ISO 8601 time with its offset (`2026-12-31T23:00:00Z`, `…+01:00`); a time without one names no instant. */
export function parseInstant(label: string, text: string): Date {
  const trimmed = text.trim();
  if (!isoInstant.safeParse(trimmed).success) {
    throw new InputError(`${label} ${JSON.stringify(text)} is not an ISO 8601 time with a time zone, e.g. 2026-12-31T23:00:00Z or 2026-12-31T23:00:00+01:00`, { field: label });
  }
  return new Date(trimmed);
}

/** How a caller names the inputs of a key's policy: the CLI's options by default, GraphQL's fields otherwise. */
export interface PolicyLabels {
  expiresIn: string;
  expiresAt: string;
  allowedIps: string;
  /** How the caller removes an allow list, said where an empty one is refused. */
  anyAddress: string;
}

export const CLI_POLICY_LABELS: PolicyLabels = { expiresIn: '--expires-in', expiresAt: '--expires-at', allowedIps: '--allow-ip', anyAddress: '--allow-any-ip' };

/** When a key given `--expires-in` or `--expires-at` expires; refused unless it lies ahead by the shortest lifetime. */
export function expiryOf(input: { expiresIn?: string | undefined; expiresAt?: string | undefined }, now = Date.now(), labels: PolicyLabels = CLI_POLICY_LABELS): Date | null {
  if (input.expiresIn !== undefined && input.expiresAt !== undefined) throw new InputError(`Give ${labels.expiresIn} or ${labels.expiresAt}, not both`, { field: labels.expiresAt });
  if (input.expiresIn !== undefined) return new Date(now + parseDuration(labels.expiresIn, input.expiresIn));
  if (input.expiresAt === undefined) return null;
  const at = parseInstant(labels.expiresAt, input.expiresAt);
  if (at.getTime() - now < SHORTEST_MS) throw new InputError(`${labels.expiresAt} ${JSON.stringify(input.expiresAt)} is not at least a minute from now`, { field: labels.expiresAt });
  if (at.getTime() - now > LONGEST_MS) throw new InputError(`${labels.expiresAt} ${JSON.stringify(input.expiresAt)} is more than 3650 days from now`, { field: labels.expiresAt });
  return at;
}

/** One network of an allow list: the parsed address and its prefix length. */
type Network = [ipaddr.IPv4 | ipaddr.IPv6, number];

function networkOf(entry: string): Network | string {
  const address = entry.split('/', 1)[0]!;
  // Only the dotted four-part form of IPv4: ipaddr.js would also read 127.1 or 0x7f000001.
  if (!address.includes(':') && !ipaddr.IPv4.isValidFourPartDecimal(address)) return `${JSON.stringify(entry)} is not an IPv4 or IPv6 address or CIDR range`;
  let parsed: Network;
  try {
    parsed = entry.includes('/') ? ipaddr.parseCIDR(entry) : (() => {
      const address = ipaddr.parse(entry);
      return [address, address.kind() === 'ipv4' ? 32 : 128] as Network;
    })();
  } catch {
    return `${JSON.stringify(entry)} is not an IPv4 or IPv6 address or CIDR range`;
  }
  let [start, bits] = parsed;
  // A zone (fe80::1%eth0) names an interface of the host that wrote it: clients' addresses carry none.
  const zone = start.kind() === 'ipv6' ? (start as ipaddr.IPv6).zoneId : undefined;
  if (zone !== undefined) {
    return `${JSON.stringify(entry)} has a zone id (%${zone}), which names a network interface, not addresses: clients are seen without one; give ${entry.replace(`%${zone}`, '')}`;
  }
  // An IPv4-mapped range (::ffff:192.0.2.0/120) is the IPv4 range it carries: clients are compared in their IPv4 form.
  if (start.kind() === 'ipv6' && (start as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
    start = (start as ipaddr.IPv6).toIPv4Address();
    bits -= 96;
    // ::ffff:0.0.0.0/96 would silently allow every IPv4 client: that is said as 0.0.0.0/0, or not at all.
    if (bits === 0) return `${JSON.stringify(entry)} is every IPv4 address (the IPv4-mapped range /96 is 0.0.0.0/0): give 0.0.0.0/0 if every IPv4 client is meant`;
  }
  const cidr = `${start.toString()}/${bits}`;
  const network = start.kind() === 'ipv4' ? ipaddr.IPv4.networkAddressFromCIDR(cidr) : ipaddr.IPv6.networkAddressFromCIDR(cidr);
  if (network.toString() !== start.toString()) {
    return `${JSON.stringify(entry)} has bits set past its /${bits} prefix: did you mean ${network.toString()}/${bits}?`;
  }
  return [start, bits];
}

/**
 * An allow list as given (`203.0.113.0/24, 2001:db8::/32, 198.51.100.7`, or those as a list): each
 * entry an address or a CIDR range, IPv4 or IPv6, at most 100, written back in canonical form,
 * repeats dropped. Every entry that is wrong is named in one message.
 */
export function parseAllowList(given: string | readonly string[], labels: PolicyLabels = CLI_POLICY_LABELS): string[] {
  const label = labels.allowedIps;
  const fail = (message: string) => new InputError(message, { field: label });
  const entries = (typeof given === 'string' ? given.split(',') : [...given]).map((entry) => entry.trim());
  if (entries.every((entry) => entry === '')) throw fail(`${label} needs at least one address or CIDR range (${labels.anyAddress} removes the list)`);
  if (entries.some((entry) => entry === '')) throw fail(`${label} ${JSON.stringify(typeof given === 'string' ? given : given.join(','))} has an empty entry`);
  const problems: string[] = [];
  const canonical: string[] = [];
  for (const entry of entries) {
    const network = networkOf(entry);
    if (typeof network === 'string') problems.push(network);
    else canonical.push(`${network[0].toString()}/${network[1]}`);
  }
  if (problems.length > 0) throw fail(`${label}: ${problems.join('; ')}`);
  const unique = [...new Set(canonical)];
  if (unique.length > MAX_ALLOWED_NETWORKS) throw fail(`${label} has ${unique.length} entries; at most ${MAX_ALLOWED_NETWORKS} are allowed`);
  return unique;
}

/** Whether a client address lies in one of a key's networks, the lists parsed once per key. */
export class AllowList {
  readonly #v4: Network[] = [];
  readonly #v6: Network[] = [];

  /** `networks` as the database holds them (canonical CIDR ranges). */
  constructor(networks: readonly string[]) {
    for (const entry of networks) {
      const network = ipaddr.parseCIDR(entry);
      (network[0].kind() === 'ipv4' ? this.#v4 : this.#v6).push(network);
    }
  }

  /** Whether the address (as `req.ip` gives it; IPv4-mapped IPv6 counts as IPv4) is allowed; an unknown address never is. */
  allows(address: string | undefined): boolean {
    if (!address || !ipaddr.isValid(address)) return false;
    const parsed = ipaddr.process(address);
    const networks = parsed.kind() === 'ipv4' ? this.#v4 : this.#v6;
    for (const network of networks) if (parsed.match(network as [typeof parsed, number])) return true;
    return false;
  }
}
