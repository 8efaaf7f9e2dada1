/**
 * IPv4/IPv6 addresses as BigInt values: parse, canonical text, compare, add, CIDR, netmask.
 * Everything IPAM and rendering compare goes through the canonical form, so `2001:db8::0:2`
 * and `2001:db8::2` are the same address (upstream compares raw strings in places; we don't).
 */
import { IpamError } from './errors.ts';

export type IpFamily = 4 | 6;

/** An address: its family and its value as an unsigned integer (32 or 128 bits). */
export interface Ip {
  readonly family: IpFamily;
  readonly value: bigint;
}

export interface Cidr {
  /** The address exactly as written before the slash (host bits kept: IPAM starts after it). */
  readonly address: Ip;
  readonly prefix: number;
  /** First and last address of the network (inclusive). */
  readonly first: bigint;
  readonly last: bigint;
}

export function familyBits(family: IpFamily): number {
  return family === 4 ? 32 : 128;
}

/** The largest value of a family: 2^32-1 or 2^128-1. */
export function maxValue(family: IpFamily): bigint {
  return (1n << BigInt(familyBits(family))) - 1n;
}

/**
 * IPv4 dotted quad to its 32-bit value, or -1. Hand-rolled over char codes because allocation
 * parses every used address of a pool (10,000+) on each call. Leading zeros are rejected, as Go
 * does since 1.17 (they were ambiguous octal).
 */
export function parseIpv4Number(text: string): number {
  const n = text.length;
  if (n < 7 || n > 15) return -1;
  let value = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 46) {
      if (digits === 0 || dots === 3) return -1;
      value = value * 256 + octet;
      dots++;
      octet = 0;
      digits = 0;
      continue;
    }
    if (c < 48 || c > 57) return -1;
    if (digits > 0 && octet === 0) return -1;
    octet = octet * 10 + (c - 48);
    digits++;
    if (octet > 255) return -1;
  }
  if (dots !== 3 || digits === 0) return -1;
  return value * 256 + octet;
}

function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/**
 * IPv6 text to its 128-bit value: 1-4 hex digits per group, at most one `::` standing for at
 * least one zero group, an optional dotted IPv4 tail counting as two groups. No zones.
 */
function parseIpv6Value(text: string): bigint | undefined {
  const n = text.length;
  if (n < 2) return undefined;
  const groups: number[] = [];
  let gapAt = -1;
  let i = 0;
  if (text.charCodeAt(0) === 58) {
    if (text.charCodeAt(1) !== 58) return undefined;
    gapAt = 0;
    i = 2;
  }
  while (i < n) {
    if (groups.length >= 8) return undefined;
    const start = i;
    let group = 0;
    for (let h = hexDigit(text.charCodeAt(i)); i < n && h >= 0; h = hexDigit(text.charCodeAt(++i))) {
      group = group * 16 + h;
    }
    if (i < n && text.charCodeAt(i) === 46) {
      const v4 = parseIpv4Number(text.slice(start));
      if (v4 < 0 || groups.length > 6) return undefined;
      groups.push(Math.floor(v4 / 65536), v4 % 65536);
      break;
    }
    const length = i - start;
    if (length === 0 || length > 4) return undefined;
    groups.push(group);
    if (i === n) break;
    if (text.charCodeAt(i) !== 58) return undefined;
    i++;
    if (i === n) return undefined;
    if (text.charCodeAt(i) === 58) {
      if (gapAt >= 0) return undefined;
      gapAt = groups.length;
      i++;
    }
  }
  if (gapAt < 0 ? groups.length !== 8 : groups.length > 7) return undefined;
  if (gapAt >= 0) groups.splice(gapAt, 0, ...ZERO_GROUPS.slice(0, 8 - groups.length));
  // Two exact 64-bit halves built from 32-bit words: far cheaper than 8 BigInt shifts.
  const high = (BigInt(groups[0]! * 65536 + groups[1]!) << 32n) | BigInt(groups[2]! * 65536 + groups[3]!);
  const low = (BigInt(groups[4]! * 65536 + groups[5]!) << 32n) | BigInt(groups[6]! * 65536 + groups[7]!);
  return high === 0n ? low : (high << 64n) | low;
}

const ZERO_GROUPS: readonly number[] = [0, 0, 0, 0, 0, 0, 0, 0];

/** Parses an IP address; undefined when the text is not one (no zones, no brackets, no spaces). */
export function tryParseIp(text: string): Ip | undefined {
  if (typeof text !== 'string' || text.length === 0 || text.length > 45) return undefined;
  if (text.includes(':')) {
    const value = parseIpv6Value(text);
    return value === undefined ? undefined : { family: 6, value };
  }
  const value = parseIpv4Number(text);
  return value < 0 ? undefined : { family: 4, value: BigInt(value) };
}

export function parseIp(text: string): Ip {
  const ip = tryParseIp(text);
  if (ip === undefined) throw new IpamError('InvalidAddress', `invalid IP address: "${text}"`);
  return ip;
}

function formatIpv4(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join('.');
}

/**
 * RFC 5952 text, which is also Go's: lower-case hex, no leading zeros, the longest run (>= 2)
 * of zero groups replaced by `::` (the first one on a tie). IPv4-mapped addresses print their
 * IPv4 tail dotted (`::ffff:192.0.2.1`), as Go's netip does.
 */
function formatIpv6(value: bigint): string {
  if (value >> 32n === 0xffffn) return `::ffff:${formatIpv4(value & 0xffffffffn)}`;
  const groups: number[] = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n) groups.push(Number((value >> shift) & 0xffffn));
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = (list: number[]) => list.map((g) => g.toString(16)).join(':');
  if (bestStart < 0) return hex(groups);
  return `${hex(groups.slice(0, bestStart))}::${hex(groups.slice(bestStart + bestLength))}`;
}

export function formatIp(ip: Ip): string {
  return ip.family === 4 ? formatIpv4(ip.value) : formatIpv6(ip.value);
}

/** The canonical text of an address; throws IpamError('InvalidAddress') when it is not one. */
export function canonicalIp(text: string): string {
  return formatIp(parseIp(text));
}

export function ipFamily(text: string): IpFamily {
  return parseIp(text).family;
}

/** Total order: IPv4 before IPv6, then by value. */
export function compareIp(a: Ip, b: Ip): number {
  if (a.family !== b.family) return a.family - b.family;
  return a.value < b.value ? -1 : a.value > b.value ? 1 : 0;
}

export function ipEquals(a: Ip, b: Ip): boolean {
  return a.family === b.family && a.value === b.value;
}

/** `ip + n`; undefined when the result leaves the family's address space. */
export function addIp(ip: Ip, n: bigint | number): Ip | undefined {
  const value = ip.value + BigInt(n);
  if (value < 0n || value > maxValue(ip.family)) return undefined;
  return { family: ip.family, value };
}

/** Parses `<ip>/<prefix>`; the prefix must be a decimal integer within the family's width. */
export function parseCidr(text: string): Cidr {
  const slash = typeof text === 'string' ? text.indexOf('/') : -1;
  const address = slash > 0 ? tryParseIp(text.slice(0, slash)) : undefined;
  const prefixText = slash > 0 ? text.slice(slash + 1) : '';
  if (address === undefined || !/^(0|[1-9][0-9]{0,2})$/.test(prefixText)) {
    throw new IpamError('InvalidCidr', `invalid CIDR: "${text}"`);
  }
  const prefix = Number(prefixText);
  const bits = familyBits(address.family);
  if (prefix > bits) throw new IpamError('InvalidCidr', `invalid CIDR: "${text}" (prefix > ${bits})`);
  const hostMask = (1n << BigInt(bits - prefix)) - 1n;
  const first = address.value & ~hostMask & maxValue(address.family);
  return { address, prefix, first, last: first | hostMask };
}

export function cidrContains(cidr: Cidr, ip: Ip): boolean {
  return ip.family === cidr.address.family && ip.value >= cidr.first && ip.value <= cidr.last;
}

/**
 * The netmask of a prefix length in the text form network_data.json carries: dotted for IPv4
 * (24 -> 255.255.255.0), Go's IPv6 text for IPv6 (64 -> ffff:ffff:ffff:ffff::).
 */
export function prefixToNetmask(prefix: number, family: IpFamily): string {
  const bits = familyBits(family);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > bits) {
    throw new IpamError('InvalidPrefix', `invalid prefix length ${prefix} for IPv${family} (0-${bits})`);
  }
  const value = maxValue(family) ^ ((1n << BigInt(bits - prefix)) - 1n);

  return family === 4 ? formatIpv4(value) : formatIpv6(value);
}
