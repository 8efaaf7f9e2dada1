/**
 * The ip-address-manager allocator (spec/ipam-spec.md §3), pure: given a pool spec, the addresses
 * already taken and a claim, the address the claim gets (or the exact upstream error message).
 *
 * Ranges are never materialised: each pool entry is an inclusive BigInt interval and the taken
 * addresses are hash sets of values, so finding the lowest free address costs O(taken) at worst.
 */
import { randomBytes } from 'node:crypto';
import type { IPPoolSpec } from '../api/index.ts';
import { IPAM_MESSAGES, IpamError } from './errors.ts';
import { formatIp, type Ip, type IpFamily, maxValue, parseCidr, parseIpv4Number, tryParseIp } from './ip.ts';

export type { IPPoolSpec };

export interface AllocatedAddress {
  /** Canonical text of the address. */
  address: string;
  prefix: number;
  gateway?: string;
  dnsServers: string[];
}

export interface AddressClaim {
  /** IPClaim (or CAPI IPAddressClaim) name: the key of `preAllocations` and `status.indexes`. */
  name: string;
  /** The claim's `ipAddress` annotation, when set. */
  requestedIp?: string;
}

/** A uniformly random integer in [0, size). */
export type RandomIndex = (size: bigint) => bigint;

export interface AllocateOptions {
  /**
   * The pool's current allocations (`status.indexes`, claim name -> IP). A claim found here
   * gets its address again (spec vector 15): upstream only re-points the claim at the existing
   * IPAddress, it never allocates twice.
   */
  allocations?: Record<string, string>;
  /** Random source for `allocationStrategy: random` (tests inject a fixed one). */
  random?: RandomIndex;
}

/** One pool entry as an inclusive interval plus the attributes an address from it carries. */
interface EntryRange {
  family: IpFamily;
  lo: bigint;
  /** hi < lo means the entry yields nothing. */
  hi: bigint;
  prefix: number;
  gateway: string | undefined;
  dnsServers: string[];
}

type PoolEntry = NonNullable<IPPoolSpec['pools']>[number];

function invalidPool(index: number, detail: string): IpamError {
  return new IpamError('InvalidPool', `pools[${index}]: ${detail}`);
}

function parseEntryIp(text: string, index: number, field: string): Ip {
  const ip = tryParseIp(text);
  if (ip === undefined) throw invalidPool(index, `${field} "${text}" is not an IP address`);
  return ip;
}

/**
 * The candidates upstream's GetIPAddress yields for an entry, as an interval:
 * - `start` set: start, start+1, ... while <= end (if set) and inside subnet (if set);
 * - only `subnet`: from the literal address written in the CIDR + 1 (host bits NOT masked),
 *   while inside the subnet;
 * - neither: nothing.
 * No broadcast or gateway exclusion, on purpose (operators set ranges to avoid them).
 */
function entryRange(spec: IPPoolSpec, entry: PoolEntry, index: number): EntryRange {
  const defaults = {
    prefix: entry.prefix ? entry.prefix : (spec.prefix ?? 0),
    gateway: entry.gateway ?? spec.gateway ?? undefined,
    dnsServers: entry.dnsServers && entry.dnsServers.length > 0 ? entry.dnsServers : (spec.dnsServers ?? []),
  };
  const subnet = entry.subnet ? parseSubnet(entry.subnet, index) : undefined;
  if (entry.start) {
    const start = parseEntryIp(entry.start, index, 'start');
    let hi = maxValue(start.family);
    if (entry.end) {
      const end = parseEntryIp(entry.end, index, 'end');
      if (end.family !== start.family) throw invalidPool(index, 'start and end are of different IP families');
      if (end.value < hi) hi = end.value;
    }
    if (subnet) {
      if (subnet.address.family !== start.family) {
        throw invalidPool(index, 'start and subnet are of different IP families');
      }
      if (start.value < subnet.first) hi = start.value - 1n;
      else if (subnet.last < hi) hi = subnet.last;
    }
    return { family: start.family, lo: start.value, hi, ...defaults };
  }
  if (subnet) {
    return { family: subnet.address.family, lo: subnet.address.value + 1n, hi: subnet.last, ...defaults };
  }
  return { family: 4, lo: 1n, hi: 0n, ...defaults };
}

function parseSubnet(text: string, index: number) {
  try {
    return parseCidr(text);
  } catch {
    throw invalidPool(index, `subnet "${text}" is not a CIDR`);
  }
}

/** Every entry of the pool as an interval, in declaration order. */
export function poolRanges(spec: IPPoolSpec): readonly EntryRange[] {
  return (spec.pools ?? []).map((entry, index) => entryRange(spec, entry, index));
}

/**
 * Taken addresses as hash sets of values: IPv4 as numbers (exact below 2^53, and much cheaper
 * than BigInt keys), IPv6 as BigInt. Unparseable strings can never match a candidate.
 */
export class UsedAddresses {
  readonly v4 = new Set<number>();
  readonly v6 = new Set<bigint>();
  constructor(used: Iterable<string> = []) {
    for (const text of used) this.add(text);
  }
  add(text: string): void {
    const v4 = parseIpv4Number(text);
    if (v4 >= 0) {
      this.v4.add(v4);
      return;
    }
    const ip = tryParseIp(text);
    if (ip?.family === 6) this.v6.add(ip.value);
  }
  has(family: IpFamily, value: bigint): boolean {
    return family === 4 ? this.v4.has(Number(value)) : this.v6.has(value);
  }
}

function contains(range: EntryRange, ip: Ip): boolean {
  return ip.family === range.family && ip.value >= range.lo && ip.value <= range.hi;
}

function result(range: EntryRange, value: bigint): AllocatedAddress {
  const out: AllocatedAddress = {
    address: formatIp({ family: range.family, value }),
    prefix: range.prefix,
    dnsServers: [...range.dnsServers],
  };
  if (range.gateway !== undefined) out.gateway = range.gateway;
  return out;
}

/** What a candidate must not be: the existing addresses and the pool's pre-allocated IPs. */
interface Taken {
  used: UsedAddresses;
  reserved: UsedAddresses;
}

function isTaken(taken: Taken, ip: Ip): boolean {
  return taken.used.has(ip.family, ip.value) || taken.reserved.has(ip.family, ip.value);
}

/** Lowest value in [from, to] that is not taken, or undefined. */
function firstFree(range: EntryRange, taken: Taken, from: bigint, to: bigint): bigint | undefined {
  if (range.family === 4) {
    const { used, reserved } = taken;
    const last = Number(to);
    for (let value = Number(from); value <= last; value++) {
      if (!used.v4.has(value) && !reserved.v4.has(value)) return BigInt(value);
    }
    return undefined;
  }
  for (let value = from; value <= to; value++) {
    if (!taken.used.v6.has(value) && !taken.reserved.v6.has(value)) return value;
  }
  return undefined;
}

export function defaultRandomIndex(size: bigint): bigint {
  // 64 bits more than needed keeps the modulo bias negligible.
  const bytes = Math.ceil(size.toString(16).length / 2) + 8;
  return BigInt(`0x${randomBytes(bytes).toString('hex')}`) % size;
}

function freeInEntry(
  range: EntryRange,
  used: Taken,
  strategy: IPPoolSpec['allocationStrategy'],
  random: RandomIndex,
): bigint | undefined {
  if (range.hi < range.lo) return undefined;
  if (strategy !== 'random') return firstFree(range, used, range.lo, range.hi);
  // Random start, scan forward, wrap once.
  const size = range.hi - range.lo + 1n;
  // Reduced modulo size so a sloppy random source cannot leave the entry.
  const offset = ((random(size) % size) + size) % size;
  const start = range.lo + offset;
  return firstFree(range, used, start, range.hi) ?? firstFree(range, used, range.lo, start - 1n);
}

/** The address of `target` inside the first entry that yields it, ignoring `used`. */
function locate(ranges: readonly EntryRange[], target: Ip): AllocatedAddress | undefined {
  const range = ranges.find((r) => contains(r, target));
  return range ? result(range, target.value) : undefined;
}

/**
 * Allocates an address of `pool` for `claim`, upstream semantics:
 * 1. a claim already in `options.allocations` keeps its address;
 * 2. a requested IP (annotation) must be an IP, and must agree with a pre-allocation if any;
 * 3. a pre-allocated claim gets its IP (whether or not it is in `used`) if some entry yields it;
 * 4. a requested IP is taken if free in the first entry that yields it;
 * 5. otherwise the lowest free candidate of the first entry that has one (entry order matters).
 * "Free" means neither in `used` nor pre-allocated to some claim (the pool's preAllocations are
 * reserved whether or not the caller lists them in `used`).
 * Prefix, gateway and DNS servers are the pool's, overridden by the entry the address came from.
 */
export function allocateAddress(
  pool: IPPoolSpec,
  used: Iterable<string> | UsedAddresses,
  claim: AddressClaim,
  options: AllocateOptions = {},
): AllocatedAddress {
  const ranges = poolRanges(pool);
  const previous = options.allocations?.[claim.name];
  const previousIp = previous === undefined ? undefined : tryParseIp(previous);
  if (previousIp) {
    return locate(ranges, previousIp) ?? defaultsFor(pool, previousIp);
  }

  const requestedText = claim.requestedIp ?? '';
  const requested = requestedText === '' ? undefined : tryParseIp(requestedText);
  if (requestedText !== '' && requested === undefined) {
    throw new IpamError('InvalidRequestedAddress', `Invalid requested IP address: "${requestedText}"`);
  }

  const preText = pool.preAllocations?.[claim.name];
  if (preText !== undefined) {
    const pre = tryParseIp(preText);
    if (requested && (!pre || requested.family !== pre.family || requested.value !== pre.value)) {
      throw new IpamError('PreAllocationConflict', IPAM_MESSAGES.PreAllocationConflict);
    }
    const found = pre ? locate(ranges, pre) : undefined;
    if (!found) throw new IpamError('PreAllocationOutOfBounds', IPAM_MESSAGES.PreAllocationOutOfBounds);
    return found;
  }

  // Pre-allocated IPs are never handed to another claim (upstream puts them in `used`).
  const taken: Taken = {
    used: used instanceof UsedAddresses ? used : new UsedAddresses(used),
    reserved: new UsedAddresses(Object.values(pool.preAllocations ?? {})),
  };
  if (requested) {
    let inSomeEntry = false;
    for (const range of ranges) {
      if (!contains(range, requested)) continue;
      inSomeEntry = true;
      if (!isTaken(taken, requested)) return result(range, requested.value);
    }
    if (inSomeEntry) {
      throw new IpamError('RequestedAddressNotAvailable', IPAM_MESSAGES.RequestedAddressNotAvailable);
    }
    throw new IpamError('Exhausted', IPAM_MESSAGES.Exhausted);
  }

  const random = options.random ?? defaultRandomIndex;
  for (const range of ranges) {
    const value = freeInEntry(range, taken, pool.allocationStrategy, random);
    if (value !== undefined) return result(range, value);
  }
  throw new IpamError('Exhausted', IPAM_MESSAGES.Exhausted);
}

function defaultsFor(pool: IPPoolSpec, ip: Ip): AllocatedAddress {
  const out: AllocatedAddress = {
    address: formatIp(ip),
    prefix: pool.prefix ?? 0,
    dnsServers: [...(pool.dnsServers ?? [])],
  };
  if (pool.gateway !== undefined && pool.gateway !== null) out.gateway = pool.gateway;
  return out;
}

/**
 * The IPAddress object name: `<namePrefix>-<ip with '.' and ':' replaced by '-'>`, trailing '-'
 * trimmed (`p-2001-db8--2`, `p-2001-db8` for `2001:db8::`). Not the claim name.
 */
export function ipAddressName(namePrefix: string, ip: string): string {
  const parsed = tryParseIp(ip);
  const text = parsed ? formatIp(parsed) : ip;
  return `${namePrefix}-${text.replace(/[.:]/g, '-')}`.replace(/-+$/, '');
}
