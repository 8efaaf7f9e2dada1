/**
 * GoValue: a Go value with its type, as reflect.Value sees it. `null` stands for the zero
 * reflect.Value (Go's "invalid" value: an untyped nil). Payloads: bool → boolean, string → string
 * (Unicode; byte-wise operations convert), integers → bigint (64-bit wrap-around is Go's), floats →
 * number, slices → array or null (a nil slice), maps → Map or null (a nil map), pointers → the
 * pointee or null, structs → the field values, interface {} → the concrete value or null (nil).
 * Elements of []interface {} / map[string]interface {} are stored concrete (or null) and wrapped in
 * an interface value when read, as reflect's Index/MapIndex do.
 */
import {
  BOOL,
  COMPLEX128,
  FLOAT64,
  type GoType,
  IFACE,
  INT,
  INT64,
  MAP_IFACE,
  SLICE_IFACE,
  SLICE_STRING,
  STRING,
} from './types.ts';

export class GoValue {
  readonly type: GoType;
  readonly v: any;
  constructor(type: GoType, v: any) {
    this.type = type;
    this.v = v;
  }
  get kind() {
    return this.type.kind;
  }
}

/** The zero reflect.Value (invalid), or a nil interface {} element. */
export type RV = GoValue | null;

export const goString = (s: string) => new GoValue(STRING, s);
export const goBool = (b: boolean) => new GoValue(BOOL, b);
export const goInt = (n: bigint | number) => new GoValue(INT, BigInt.asIntN(64, BigInt(n)));
export const goInt64 = (n: bigint | number) => new GoValue(INT64, BigInt.asIntN(64, BigInt(n)));
export const goFloat = (f: number) => new GoValue(FLOAT64, f);
export const goComplex = (re: number, im: number) => new GoValue(COMPLEX128, { re, im });
/** []interface {} of concrete elements (null = nil element). */
export const goList = (items: RV[] | null) => new GoValue(SLICE_IFACE, items);
export const goStrings = (items: string[] | null) =>
  new GoValue(SLICE_STRING, items === null ? null : items.map(goString));
export const goDict = (m: Map<string, RV> | null) => new GoValue(MAP_IFACE, m);
export const goIface = (inner: RV) => new GoValue(IFACE, inner);

/** reflect.Value.Interface() then reflect.ValueOf: the concrete value inside an interface. */
export function concrete(v: RV): RV {
  return v !== null && v.type.kind === 'interface' ? (v.v as RV) : v;
}

/** Wrap an element read from a container of `elem` type, as reflect's Index/MapIndex would. */
export function elemValue(elem: GoType, item: RV): RV {
  return elem.kind === 'interface' ? new GoValue(elem, item) : item;
}

export function sliceLen(v: GoValue): number {
  return v.v === null ? 0 : (v.v as RV[]).length;
}

/** reflect.Value.Index for a slice. */
export function sliceIndex(v: GoValue, i: number): RV {
  return elemValue(v.type.elem!, (v.v as RV[])[i]!);
}

export function mapLen(v: GoValue): number {
  return v.v === null ? 0 : (v.v as Map<string, RV>).size;
}

/** reflect.Value.MapIndex: undefined when absent. */
export function mapIndex(v: GoValue, key: string): RV | undefined {
  const m = v.v as Map<string, RV> | null;
  if (m === null || !m.has(key)) return undefined;
  return elemValue(v.type.elem!, m.get(key)!);
}

/** Go string ordering is byte order of UTF-8, which is code point order (not UTF-16's). */
export function compareStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (astral code points) sort after every BMP unit in code point order.
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

/** Map keys in fmtsort order (strings: byte order). */
export function sortedKeys(m: Map<string, RV>): string[] {
  return [...m.keys()].sort(compareStrings);
}

/** Go's zero value of a type (reflect.Zero). */
export function zeroValue(t: GoType): GoValue {
  switch (t.kind) {
    case 'bool':
      return new GoValue(t, false);
    case 'string':
      return new GoValue(t, '');
    case 'float32':
    case 'float64':
      return new GoValue(t, 0);
    case 'complex64':
    case 'complex128':
      return new GoValue(t, { re: 0, im: 0 });
    case 'struct':
      return new GoValue(
        t,
        (t.fields ?? []).map((f) => (f.type.kind === 'interface' ? null : zeroValue(f.type))),
      );
    case 'slice':
    case 'map':
    case 'ptr':
    case 'interface':
    case 'func':
      return new GoValue(t, null);
    default:
      return new GoValue(t, 0n);
  }
}

/**
 * A value decoded from JSON as Go's encoding/json decodes into interface {}: objects →
 * map[string]interface {}, arrays → []interface {}, numbers → float64, null → nil. `x` is what
 * JSON.parse produced (see json.ts for the number and string checks done before).
 */
export function fromJSON(x: unknown): RV {
  if (x === null || x === undefined) return null;
  switch (typeof x) {
    case 'string':
      return goString(x);
    case 'number':
      return goFloat(x);
    case 'boolean':
      return goBool(x);
    case 'object': {
      if (Array.isArray(x)) return goList(x.map(fromJSON));
      const m = new Map<string, RV>();
      for (const [k, v] of Object.entries(x as Record<string, unknown>)) m.set(k, fromJSON(v));
      return goDict(m);
    }
    default:
      throw new TypeError(`no Go value for a JS ${typeof x}`);
  }
}

/** Deep copy of maps and slices (sprig's deepCopy, copystructure). */
export function deepCopy(v: RV): RV {
  if (v === null) return null;
  switch (v.type.kind) {
    case 'map':
      return v.v === null
        ? v
        : new GoValue(v.type, new Map([...(v.v as Map<string, RV>)].map(([k, x]) => [k, deepCopy(x)])));
    case 'slice':
      return v.v === null ? v : new GoValue(v.type, (v.v as RV[]).map(deepCopy));
    case 'interface':
      return new GoValue(v.type, deepCopy(v.v as RV));
    default:
      return v;
  }
}
