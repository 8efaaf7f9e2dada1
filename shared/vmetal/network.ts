/**
 * Addresses (issue 19, Behaviour 3), pure: the network a claim's merged properties describe, the
 * IPPool of ours that serves it (deterministic name per provider and network), its overlap with
 * every other pool (a CAPM3 pool included), and the host annotations vMetal's DHCP proxy reads.
 *
 * - `metal3.vcluster.com/network-cidr` `10.0.0.1/24`: the host part is the gateway (a network
 *   address, `10.0.0.0/24`, means the first host); addresses come from the whole subnet except
 *   the network address, the gateway and (IPv4) the broadcast address.
 * - `metal3.vcluster.com/network-ip-range` `a-b,c-d` (or a single `a`): those addresses only, with
 *   prefix and gateway from `network-cidr` (required), each range inside its subnet, the same
 *   three addresses left out.
 */
import { createHash } from 'node:crypto';
import type { IPPoolSpec } from '../api/ipam.ts';
import { VMETAL_HOST_ANNOTATION } from '../api/wellknown.ts';
import { poolRanges } from '../ipam/allocate.ts';
import { type Cidr, formatIp, type Ip, type IpFamily, parseCidr, tryParseIp } from '../ipam/ip.ts';
import { propertyError, propertyField } from './errors.ts';
import { PROP } from './names.ts';

export interface AddressRange {
  start: string;
  end: string;
}

/** A claim's network, canonical: equal networks give equal objects. */
export interface VMetalNetwork {
  family: IpFamily;
  /** Network address and prefix: `10.0.0.0/24`. */
  subnet: string;
  prefix: number;
  gateway: string;
  /** What IPAM hands out: inclusive, ascending, disjoint, never network, gateway or broadcast. */
  ranges: AddressRange[];
}

interface Interval {
  lo: bigint;
  hi: bigint;
}

function parseCidrProperty(text: string): Cidr {
  try {
    return parseCidr(text.trim());
  } catch {
    throw propertyError(
      PROP.networkCidr,
      `${JSON.stringify(text)} is not a CIDR (e.g. 10.0.0.1/24: the gateway and the prefix)`,
    );
  }
}

/** Removes single addresses from an interval (at most three, so at most four pieces). */
function without(iv: Interval, excluded: readonly bigint[]): Interval[] {
  let pieces = [iv];
  for (const x of excluded) {
    pieces = pieces.flatMap((p) =>
      x < p.lo || x > p.hi
        ? [p]
        : [
            { lo: p.lo, hi: x - 1n },
            { lo: x + 1n, hi: p.hi },
          ].filter((q) => q.lo <= q.hi),
    );
  }
  return pieces;
}

/** The claim's network, or undefined when neither network property is set (no static address). */
export function parseNetwork(props: Readonly<Record<string, string>>): VMetalNetwork | undefined {
  const cidrText = props[PROP.networkCidr] ?? '';
  const rangeText = props[PROP.networkIpRange] ?? '';
  if (cidrText === '' && rangeText === '') return undefined;
  if (cidrText === '') {
    throw propertyError(
      PROP.networkIpRange,
      `needs ${propertyField(PROP.networkCidr)} for the prefix length and the gateway`,
    );
  }
  const cidr = parseCidrProperty(cidrText);
  const family = cidr.address.family;
  const v4 = family === 4;
  let gateway = cidr.address.value;
  if (gateway === cidr.first) gateway = cidr.first + 1n;
  if (gateway > cidr.last || (v4 && gateway === cidr.last)) {
    throw propertyError(PROP.networkCidr, `${JSON.stringify(cidrText)} leaves no address for a gateway`);
  }
  const excluded = v4 ? [cidr.first, gateway, cidr.last] : [cidr.first, gateway];
  const intervals = rangeText === '' ? [{ lo: cidr.first, hi: cidr.last }] : parseRanges(rangeText, cidr);
  const pieces = intervals.flatMap((iv) => without(iv, excluded)).sort((a, b) => (a.lo < b.lo ? -1 : 1));
  if (pieces.length === 0) {
    const key = rangeText === '' ? PROP.networkCidr : PROP.networkIpRange;
    throw propertyError(
      key,
      `${JSON.stringify(rangeText || cidrText)} leaves no address to allocate (network, gateway and broadcast addresses are never handed out)`,
    );
  }
  const text = (value: bigint) => formatIp({ family, value });
  return {
    family,
    subnet: `${text(cidr.first)}/${cidr.prefix}`,
    prefix: cidr.prefix,
    gateway: text(gateway),
    ranges: pieces.map((p) => ({ start: text(p.lo), end: text(p.hi) })),
  };
}

function parseRanges(text: string, cidr: Cidr): Interval[] {
  const family = cidr.address.family;
  const ip = (s: string): Ip => {
    const parsed = tryParseIp(s.trim());
    if (!parsed) throw propertyError(PROP.networkIpRange, `${JSON.stringify(s.trim())} is not an IP address`);
    if (parsed.family !== family) {
      throw propertyError(
        PROP.networkIpRange,
        `${s.trim()} is not of the family of ${propertyField(PROP.networkCidr)}`,
      );
    }
    return parsed;
  };
  const out: Interval[] = [];
  for (const entry of text.split(',')) {
    if (entry.trim() === '') continue;
    const dash = entry.indexOf('-');
    const lo = ip(dash < 0 ? entry : entry.slice(0, dash)).value;
    const hi = ip(dash < 0 ? entry : entry.slice(dash + 1)).value;
    if (hi < lo)
      throw propertyError(PROP.networkIpRange, `range ${entry.trim()}: the end is before the start`);
    if (lo < cidr.first || hi > cidr.last) {
      throw propertyError(
        PROP.networkIpRange,
        `range ${entry.trim()} is not inside ${formatIp({ family, value: cidr.first })}/${cidr.prefix} (${propertyField(PROP.networkCidr)})`,
      );
    }
    const clash = out.find((o) => lo <= o.hi && o.lo <= hi);
    if (clash) {
      throw propertyError(
        PROP.networkIpRange,
        `range ${entry.trim()} overlaps ${formatIp({ family, value: clash.lo })}-${formatIp({ family, value: clash.hi })}`,
      );
    }
    out.push({ lo, hi });
  }
  if (out.length === 0) throw propertyError(PROP.networkIpRange, 'no range given (write a-b,c-d)');
  return out;
}

/** One text per distinct network (what "the same network" means for pools). */
export const networkKey = (n: VMetalNetwork): string =>
  `${n.subnet} gw ${n.gateway} ${n.ranges.map((r) => `${r.start}-${r.end}`).join(',')}`;

/**
 * The IPPool name of a provider's network: `<provider>-<10 hex of sha256(provider, network)>`,
 * the provider part cut so the name stays a 63-character DNS label-sized name.
 */
export function poolNameFor(providerName: string, n: VMetalNetwork): string {
  const hash = createHash('sha256')
    .update(`${providerName}\n${networkKey(n)}`)
    .digest('hex')
    .slice(0, 10);
  const head = providerName.slice(0, 52).replace(/[^a-z0-9]+$/, '');
  return head ? `${head}-${hash}` : `vmetal-${hash}`;
}

/**
 * The IPPool spec (ip-address-manager shape, our IPAM): the ranges as start/end entries, the
 * pool's prefix and gateway. No DNS servers: they are properties a claim may override, so they
 * go to the host annotations and network data, not to the shared pool.
 */
export function poolSpecFor(n: VMetalNetwork, poolName: string): IPPoolSpec {
  return {
    namePrefix: poolName,
    pools: n.ranges.map((r) => ({ start: r.start, end: r.end })),
    prefix: n.prefix,
    gateway: n.gateway,
  };
}

export interface PoolLike {
  namespace?: string | undefined;
  name: string;
  spec: IPPoolSpec;
}

export interface Overlap {
  /** `<namespace>/<name>` of the other pool. */
  pool: string;
  /** `range`: some address both could hand out; `gateway`: the other pool could hand out our gateway. */
  what: 'range' | 'gateway';
  /** Ours, `a-b` or the gateway address. */
  ours: string;
  /** The other pool's range, `a-b`. */
  theirs: string;
}

/**
 * Where `n` collides with other pools (any model's): an address both could hand out, or our
 * gateway inside their range. `self` (the pool serving `n`) is skipped; a pool whose spec IPAM
 * cannot use is skipped too (it hands out nothing).
 */
export function networkOverlaps(
  n: VMetalNetwork,
  others: readonly PoolLike[],
  self?: { namespace?: string | undefined; name: string },
): Overlap[] {
  const family = n.family;
  const ours = n.ranges.map((r) => ({ lo: tryParseIp(r.start)!.value, hi: tryParseIp(r.end)!.value }));
  const gateway = tryParseIp(n.gateway)!.value;
  const text = (v: bigint) => formatIp({ family, value: v });
  const out: Overlap[] = [];
  for (const p of others) {
    if (self && p.name === self.name && (p.namespace ?? '') === (self.namespace ?? '')) continue;
    let theirs: ReturnType<typeof poolRanges>;
    try {
      theirs = poolRanges(p.spec);
    } catch {
      continue;
    }
    const pool = `${p.namespace ?? ''}/${p.name}`;
    for (const t of theirs) {
      if (t.family !== family || t.hi < t.lo) continue;
      const hi = t.hi;
      const theirText = `${text(t.lo)}-${text(hi)}`;
      for (const o of ours) {
        if (o.lo <= hi && t.lo <= o.hi)
          out.push({ pool, what: 'range', ours: `${text(o.lo)}-${text(o.hi)}`, theirs: theirText });
      }
      if (gateway >= t.lo && gateway <= hi)
        out.push({ pool, what: 'gateway', ours: n.gateway, theirs: theirText });
    }
  }
  return out;
}

/** The provider condition's message for overlaps. */
export function formatOverlaps(overlaps: readonly Overlap[]): string {
  return overlaps
    .map((o) =>
      o.what === 'range'
        ? `range ${o.ours} overlaps IPPool ${o.pool} (${o.theirs})`
        : `gateway ${o.ours} is inside IPPool ${o.pool} (${o.theirs})`,
    )
    .join('; ');
}

const HOSTNAME =
  /^(?=.{1,253}$)[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?(\.[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*$/;

/**
 * A comma-separated server list: `dns-servers` must be IP addresses (canonical text), while
 * `ntp-servers` may also be host names (`pool.ntp.org`).
 */
export function serverList(
  props: Readonly<Record<string, string>>,
  key: typeof PROP.dnsServers | typeof PROP.ntpServers,
): string[] {
  const text = props[key] ?? '';
  const out: string[] = [];
  for (const raw of text.split(',')) {
    const s = raw.trim();
    if (s === '') continue;
    const ip = tryParseIp(s);
    if (ip) out.push(formatIp(ip));
    else if (key === PROP.ntpServers && HOSTNAME.test(s) && !/^[0-9.]+$/.test(s)) out.push(s);
    else
      throw propertyError(
        key,
        `${JSON.stringify(s)} is not an IP address${key === PROP.ntpServers ? ' or a host name' : ''}`,
      );
  }
  return out;
}

/** The address a claim holds, as the host annotations and the network data carry it. */
export interface AddressAssignment {
  address: string;
  prefix: number;
  gateway?: string | undefined;
  dnsServers: readonly string[];
  ntpServers: readonly string[];
}

/** Every host annotation vMetal writes (and restores on release). */
export const HOST_NETWORK_ANNOTATIONS: readonly string[] = Object.values(VMETAL_HOST_ANNOTATION);

/** The annotations for a claim's address; a list that is empty (or no gateway) is left absent. */
export function hostNetworkAnnotations(a: AddressAssignment): Record<string, string> {
  const out: Record<string, string> = { [VMETAL_HOST_ANNOTATION.ipAddress]: `${a.address}/${a.prefix}` };
  if (a.gateway) out[VMETAL_HOST_ANNOTATION.gateway] = a.gateway;
  if (a.dnsServers.length > 0) out[VMETAL_HOST_ANNOTATION.dnsServers] = a.dnsServers.join(',');
  if (a.ntpServers.length > 0) out[VMETAL_HOST_ANNOTATION.ntpServers] = a.ntpServers.join(',');
  return out;
}

/**
 * The claim's IPClaim name (in the host's namespace, so the claim's namespace is in the hash):
 * `<claim name, at most 40>-<8 hex of sha256(namespace/name)>`.
 */
export function ipClaimName(claim: { namespace: string; name: string }): string {
  const hash = createHash('sha256').update(`${claim.namespace}/${claim.name}`).digest('hex').slice(0, 8);
  return `${claim.name.slice(0, 40).replace(/[^a-z0-9]+$/, '')}-${hash}`;
}
