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
