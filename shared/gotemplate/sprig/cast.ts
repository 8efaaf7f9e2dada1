/**
 * The conversions sprig's functions share: spf13/cast (ToInt64, ToInt, ToFloat64, v1.5.0, errors
 * ignored as sprig ignores them), sprig's strval and strslice, and list access by reflection.
 */
import { GoError } from '../errors.ts';
import { sprintf } from '../fmt.ts';
import { parseFloat64, parseInt0 } from '../numbers.ts';
import { indirect } from '../reflect.ts';
import { isFloatKind, isIntKind, isUintKind } from '../types.ts';
import { concrete, type GoValue, type RV, sliceIndex } from '../value.ts';

const I64_MIN = -(2n ** 63n);

/** Go's float64 → int64 conversion on amd64: truncation; NaN and out of range give MinInt64. */
export function floatToInt64(f: number): bigint {
  if (Number.isNaN(f) || f >= 2 ** 63 || f < -(2 ** 63)) return I64_MIN;
  return BigInt(Math.trunc(f));
}

/** cast's trimZeroDecimal: "3.0" → "3", "3.50" unchanged. */
function trimZeroDecimal(s: string): string {
  let foundZero = false;
  for (let i = s.length; i > 0; i--) {
    const c = s[i - 1];
    if (c === '.') {
      if (foundZero) return s.slice(0, i - 1);
    } else if (c === '0') foundZero = true;
    else return s;
  }
  return s;
}

/** cast.ToInt64 (errors → 0). */
export function toInt64(v: RV): bigint {
  const [x] = indirect(concrete(v));
  if (x === null) return 0n;
  const k = x.type.kind;
  if (isIntKind(k)) return x.v as bigint;
  if (isUintKind(k)) return BigInt.asIntN(64, x.v as bigint);
  if (isFloatKind(k)) return floatToInt64(x.v as number);
  if (k === 'string') return parseInt0(trimZeroDecimal(x.v as string)) ?? 0n;
  if (k === 'bool') return x.v ? 1n : 0n;
  return 0n;
}

/** cast.ToInt: the same on a 64-bit int. */
export const toInt = toInt64;

/** strconv.ParseFloat as cast uses it (also inf, infinity, nan). */
function parseFloatCast(s: string): number | null {
  const m = /^([+-]?)(inf|infinity|nan)$/i.exec(s);
  if (m) return m[2]!.toLowerCase() === 'nan' ? Number.NaN : m[1] === '-' ? -Infinity : Infinity;
  return parseFloat64(s);
}

/** cast.ToFloat64 (errors → 0). */
export function toFloat64(v: RV): number {
  const [x] = indirect(concrete(v));
  if (x === null) return 0;
  const k = x.type.kind;
  if (isIntKind(k) || isUintKind(k)) return Number(x.v as bigint);
  if (isFloatKind(k)) return x.v as number;
  if (k === 'string') return parseFloatCast(x.v as string) ?? 0;
  if (k === 'bool') return x.v ? 1 : 0;
  return 0;
}

/** sprig's strval: strings as is, Stringers through String(), the rest as %v. */
export function strval(v: RV): string {
  v = concrete(v);
  if (v !== null && v.type.kind === 'string') return v.v as string;
  if (v?.type.stringer && !(v.type.kind === 'ptr' && v.v === null)) return v.type.stringer(v);
  return sprintf('%v', [v]);
}

/** The elements of a slice or array value as interface values (l2.Index(i).Interface()). */
export function listItems(v: GoValue): RV[] {
  const n = v.v === null ? 0 : (v.v as RV[]).length;
  const out: RV[] = [];
  for (let i = 0; i < n; i++) out.push(concrete(sliceIndex(v, i)));
  return out;
}

export const isList = (v: RV): v is GoValue =>
  v !== null && (v.type.kind === 'slice' || v.type.kind === 'array');

/** sprig's strslice. */
export function strslice(v: RV): string[] {
  v = concrete(v);
  if (v === null) return [];
  if (v.type.kind === 'slice' && v.type.elem!.kind === 'string') {
    return v.v === null ? [] : (v.v as GoValue[]).map((x) => x.v as string);
  }
  if (isList(v))
    return listItems(v)
      .filter((x) => x !== null)
      .map(strval);
  return [strval(v)];
}

/** `reflect.TypeOf(list).Kind()` for sprig's "Cannot … on type %s" errors (nil panics in Go). */
export function kindOf(v: RV): string {
  if (v === null) throw new GoError('runtime error: invalid memory address or nil pointer dereference');
  return v.type.kind;
}
