import ipaddr from 'ipaddr.js';

/**
 * What the per-address limits count under. An IPv4 client is its address; an IPv6 client is its
 * /64, the smallest network a subscriber is given, in which one host can take any address it
 * likes. IPv4-mapped IPv6 addresses (`::ffff:192.0.2.1`, a dual-stack socket) count as the IPv4
 * address they carry.
 */
export function addressKey(address: string | undefined): string {
  if (!address || !ipaddr.isValid(address)) return 'unknown';
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const network = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${new ipaddr.IPv6([...network, 0, 0, 0, 0]).toString()}/64`;
}

/**
 * Where a client is, without who: its address truncated to the /24 (IPv4) or /48 (IPv6) network,
 * as a CIDR range (`203.0.113.0/24`, `2001:db8:1::/48`); null for an address that is not one.
 * What a key's last use and request log keep of the client.
 */
export function clientNetwork(address: string | undefined): string | null {
  if (!address || !ipaddr.isValid(address)) return null;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') {
    const [a, b, c] = (parsed as ipaddr.IPv4).octets;
    return `${a}.${b}.${c}.0/24`;
  }
  const network = (parsed as ipaddr.IPv6).parts.slice(0, 3);
  return `${new ipaddr.IPv6([...network, 0, 0, 0, 0, 0]).toString()}/48`;
}
