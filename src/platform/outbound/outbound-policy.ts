/**
 * Which addresses the service may call. Every URL the service fetches is user
 * input (webhook targets, product feeds, product images) aimed at our own
 * network, so by default only public unicast addresses over https are
 * reachable: loopback, private, link-local (169.254.169.254, the cloud
 * metadata service), multicast, carrier-grade NAT and reserved ranges are
 * refused, in IPv4, IPv6 and IPv4-mapped IPv6 forms alike.
 *
 * The operator's allow-list (OUTBOUND_ALLOWED_HOSTS: host names, addresses or
 * CIDR ranges) admits what it names, over plain http too: a receiver on the
 * same machine for local testing, or an internal feed server.
 *
 * Address classification is ipaddr.js's (MIT), not hand-written parsing.
 */
import dns from 'node:dns/promises';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

export type OutboundRefusal = 'scheme' | 'credentials' | 'malformed' | 'address' | 'unresolvable';

/** A URL or address the policy does not admit. `reason` is stable; `message` says what to change. */
export class OutboundRefusedError extends Error {
  override name = 'OutboundRefusedError';
  readonly reason: OutboundRefusal;
  constructor(reason: OutboundRefusal, message: string) {
    super(message);
    this.reason = reason;
  }
}

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** IPv4-mapped IPv6 (::ffff:127.0.0.1) is judged as the IPv4 address it carries. */
function normalise(address: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  return address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() ? (address as ipaddr.IPv6).toIPv4Address() : address;
}

function stripBrackets(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

export class OutboundPolicy {
  private readonly hosts = new Set<string>();
  private readonly ranges: Range[] = [];

  /** `allowedHosts`: OUTBOUND_ALLOWED_HOSTS, comma-separated host names, addresses or CIDR ranges. */
  constructor(allowedHosts = '') {
    for (const raw of allowedHosts.split(',').map((s) => s.trim()).filter(Boolean)) {
      const entry = stripBrackets(raw.toLowerCase());
      if (entry.includes('/')) {
        const [address, bits] = ipaddr.parseCIDR(entry);
        this.ranges.push([normalise(address), address.kind() === 'ipv6' && normalise(address).kind() === 'ipv4' ? bits - 96 : bits]);
      } else if (ipaddr.isValid(entry)) {
        const address = normalise(ipaddr.parse(entry));
        this.ranges.push([address, address.kind() === 'ipv4' ? 32 : 128]);
      } else {
        this.hosts.add(entry.replace(/\.$/, ''));
      }
    }
  }

  /** Parses OUTBOUND_ALLOWED_HOSTS without building a policy: the configuration check at start. */
  static problems(allowedHosts: string): string[] {
    const problems: string[] = [];
    for (const entry of allowedHosts.split(',').map((s) => s.trim()).filter(Boolean)) {
      const bare = stripBrackets(entry);
      if (bare.includes('/')) {
        try {
          ipaddr.parseCIDR(bare);
        } catch {
          problems.push(`"${entry}" is not a CIDR range`);
        }
      } else if (!ipaddr.isValid(bare) && !/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/i.test(bare)) {
        problems.push(`"${entry}" is neither a host name, an address nor a CIDR range`);
      }
    }
    return problems;
  }

  /** True when the operator's allow-list names this host (by name or address). */
  isHostAllowListed(hostname: string): boolean {
    const host = stripBrackets(hostname.toLowerCase()).replace(/\.$/, '');
    if (this.hosts.has(host)) return true;
    return ipaddr.isValid(host) && this.inAllowedRange(normalise(ipaddr.parse(host)));
  }

  private inAllowedRange(address: ipaddr.IPv4 | ipaddr.IPv6): boolean {
    return this.ranges.some(([base, bits]) => base.kind() === address.kind() && address.match(base as never, bits));
  }

  /**
   * May the service open a connection to `address` (resolved from `hostname`)?
   * Public unicast addresses always; anything else only when allow-listed.
   */
  isAddressAllowed(address: string, hostname?: string): boolean {
    if (hostname && this.hosts.has(stripBrackets(hostname.toLowerCase()).replace(/\.$/, ''))) return true;
    if (!ipaddr.isValid(address)) return false;
    const parsed = normalise(ipaddr.parse(address));
    if (this.inAllowedRange(parsed)) return true;
    return parsed.range() === 'unicast';
  }

  /**
   * The checks that need no network: http(s) only, https unless the host is
   * allow-listed, no credentials in the URL, and a literal address must be
   * admitted. Returns the parsed URL.
   */
  checkUrl(input: string): URL {
    let url: URL;
    try {
      url = new URL(input);
    } catch {
      throw new OutboundRefusedError('malformed', 'The URL is not a valid absolute URL.');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw new OutboundRefusedError('scheme', `Only https URLs are allowed (got ${url.protocol.replace(/:$/, '')}).`);
    }
    if (url.protocol === 'http:' && !this.isHostAllowListed(url.hostname)) {
      throw new OutboundRefusedError('scheme', 'Only https URLs are allowed; plain http is admitted only for hosts in the operator allow-list (OUTBOUND_ALLOWED_HOSTS).');
    }
    if (url.username || url.password) {
      throw new OutboundRefusedError('credentials', 'The URL must not carry credentials (user:password@); use headers or a signing secret instead.');
    }
    const host = stripBrackets(url.hostname);
    if (net.isIP(host) && !this.isAddressAllowed(host)) {
      throw new OutboundRefusedError('address', 'The URL points to a private, loopback, link-local or reserved address, which the service does not call.');
    }
    return url;
  }

  /**
   * checkUrl, then resolves the host and checks every address it names, as a
   * subscription or feed is saved. Connections are checked again when made
   * (the name may resolve elsewhere by then).
   */
  async checkTarget(input: string): Promise<URL> {
    const url = this.checkUrl(input);
    const host = stripBrackets(url.hostname);
    if (net.isIP(host) || this.isHostAllowListed(host)) return url;
    let addresses: { address: string }[];
    try {
      addresses = await dns.lookup(host, { all: true, verbatim: true });
    } catch {
      throw new OutboundRefusedError('unresolvable', `The host ${host} could not be resolved.`);
    }
    if (addresses.length === 0 || addresses.some((a) => !this.isAddressAllowed(a.address, host))) {
      throw new OutboundRefusedError('address', `The host ${host} resolves to a private, loopback, link-local or reserved address, which the service does not call.`);
    }
    return url;
  }
}
