import { z } from 'zod';
import { compareIp, tryParseIp } from '../ipam/ip.ts';

/** `^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$`: the MAC form the reference renders (colon or dash). */
export const MAC_PATTERN = '^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$';
const MAC_RE = new RegExp(MAC_PATTERN);

export const MacAddressSchema = z.lazy(() =>
  z
    .string()
    .regex(MAC_RE, { message: 'must be a MAC address like 00:1a:2b:3c:4d:5e (six hex pairs, ":" or "-")' }),
);

/** IP syntax is the allocator's and renderer's own parser (shared/ipam/ip.ts), so what admission
 * accepts is exactly what they can use (no zones, no IPv4 leading zeros). */
export function isIPAddress(value: string): boolean {
  return tryParseIp(value) !== undefined;
}

/** Both addresses parse, are of one family, and `start <= end`. */
export function isOrderedRange(start: string, end: string): boolean {
  const a = tryParseIp(start);
  const b = tryParseIp(end);
  return a !== undefined && b !== undefined && a.family === b.family && compareIp(a, b) <= 0;
}

/** `<ip>/<prefix>` with the prefix within the family's bit length; the host bits may be set (IPAM uses them). */
export function isCIDR(value: string): boolean {
  const slash = value.indexOf('/');
  if (slash < 0) return false;
  const ip = tryParseIp(value.slice(0, slash));
  const bits = value.slice(slash + 1);
  if (ip === undefined || !/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (ip.family === 4 ? 32 : 128);
}

/** An IPv4 or IPv6 address. The message names what was wrong, zod prefixes the field path. */
export const IPAddressStringSchema = z.lazy(() =>
  z
    .string()
    .refine(isIPAddress, { message: 'must be an IPv4 or IPv6 address (e.g. 192.168.0.1 or 2001:db8::1)' }),
);

export const CIDRSchema = z.lazy(() =>
  z.string().refine(isCIDR, {
    message: 'must be a CIDR: an IPv4 or IPv6 address, "/", a prefix length (e.g. 192.168.0.0/24)',
  }),
);

/** A prefix length (0..128; the family is not known here). */
export const PrefixLengthSchema = z.lazy(() => z.int().min(0).max(128));
