import { BlockList, isIP } from 'node:net';

/**
 * Which addresses an outbound fetch of keys, metadata or a status list may connect to (docs/decisions.md,
 * "Outbound fetches"): public unicast addresses, and the special ones below only where the operator's
 * `outboundFetch.allowedPrivateTargets` lists them (an address, a CIDR network, or a host name).
 */

/** The special-purpose ranges refused by default, each with the words an error uses for it (RFC 6890). */
const SPECIAL: [kind: string, network: string, prefix: number][] = [
  ['unspecified', '0.0.0.0', 8], // RFC 1122 §3.2.1.3 "this network": 0.0.0.0 reaches this host on Linux
  ['loopback', '127.0.0.0', 8],
  ['private', '10.0.0.0', 8], // RFC 1918
  ['private', '172.16.0.0', 12],
  ['private', '192.168.0.0', 16],
  ['shared (CGNAT)', '100.64.0.0', 10], // RFC 6598
  ['link-local', '169.254.0.0', 16], // RFC 3927: cloud metadata services live here
  ['special-purpose', '192.0.0.0', 24], // RFC 6890
  ['benchmarking', '198.18.0.0', 15], // RFC 2544
  ['multicast', '224.0.0.0', 4],
  ['reserved', '240.0.0.0', 4], // and the broadcast address
  ['unspecified', '::', 128],
  ['loopback', '::1', 128],
  ['IPv4-compatible', '::', 96], // RFC 4291 §2.5.5.1, deprecated
  ['unique local (private)', 'fc00::', 7], // RFC 4193
  ['link-local', 'fe80::', 10],
  ['site-local', 'fec0::', 10], // RFC 3879, deprecated
  ['multicast', 'ff00::', 8],
];

const RANGES = SPECIAL.map(([kind, network, prefix]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, isIP(network) === 6 ? 'ipv6' : 'ipv4');
  return { kind, list };
});

/** RFC 6052 NAT64: the IPv4 address in the last 32 bits is the one reached. */
const NAT64 = (() => {
  const list = new BlockList();
  list.addSubnet('64:ff9b::', 96, 'ipv6');
  return list;
})();

const familyOf = (address: string): 'ipv4' | 'ipv6' => (isIP(address) === 6 ? 'ipv6' : 'ipv4');

/** The IPv4 address a NAT64 address (64:ff9b::a.b.c.d) reaches, if it is one. */
function nat64Target(address: string): string | undefined {
  if (isIP(address) !== 6 || !NAT64.check(address, 'ipv6')) return undefined;
  const groups = new URL(`http://[${address}]/`).hostname.slice(1, -1).split(':');
  const [high, low] = groups.slice(-2).map((g) => parseInt(g || '0', 16));
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/**
 * What kind of special address `address` (an IP address, without brackets) is, in words; undefined for a
 * public unicast address. BlockList matches an IPv4-mapped IPv6 address (::ffff:127.0.0.1) as its IPv4 address.
 */
export function specialAddressKind(address: string): string | undefined {
  if (!isIP(address)) return 'not an IP address';
  const nat64 = nat64Target(address);
  if (nat64) return specialAddressKind(nat64);
  const family = familyOf(address);
  return RANGES.find((r) => r.list.check(address, family))?.kind;
}

/** An allow-list entry: an IP address, a CIDR network (10.0.0.0/8, fd00::/8), or a host name. */
export function isTargetEntry(entry: string): boolean {
  if (ipOrCidr(entry)) return true;
  return /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i.test(entry);
}

/** An IP address or CIDR network as [address, prefix]; undefined when it is neither. */
export function ipOrCidr(entry: string): [address: string, prefix: number] | undefined {
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (!family || rest.length) return undefined;
  const max = family === 4 ? 32 : 128;
  if (prefix === undefined) return [address, max];
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= max ? [address, Number(prefix)] : undefined;
}

/** A URL's host name as an address or a name: lower case, without IPv6 brackets or a trailing dot. */
export const bareHost = (hostname: string): string =>
  hostname
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');

/**
 * The operator's allowances: special addresses in listed networks may be connected to, and a listed host
 * name may be connected to whatever it resolves to (the operator vouches for that name's DNS).
 */
export class TargetRules {
  readonly #networks = new BlockList();
  readonly #names = new Set<string>();

  constructor(allowed: readonly string[]) {
    for (const entry of allowed) {
      const cidr = ipOrCidr(entry);
      if (cidr) this.#networks.addSubnet(cidr[0], cidr[1], familyOf(cidr[0]));
      else this.#names.add(bareHost(entry));
    }
  }

  /** Whether a URL's host is listed by name (its addresses are then not looked at). */
  allowsName(hostname: string): boolean {
    return this.#names.has(bareHost(hostname));
  }

  /** Why `address` may not be connected to, in words (its kind); undefined when it may. */
  refusal(address: string): string | undefined {
    const kind = specialAddressKind(address);
    if (kind === undefined) return undefined;
    if (isIP(address) && this.#networks.check(address, familyOf(address))) return undefined;
    return kind;
  }
}
