/**
 * The Go types a template can meet: what JSON decodes to (map[string]interface {}, []interface {},
 * float64, string, bool), what the builtins and sprig return (int, int64, []string, ...), and
 * struct-like values built by callers (NodeClaim, time.Time). Their names are what Go's `%T`,
 * sprig's typeOf and the error messages print.
 */
import type { GoValue } from './value.ts';

export type Kind =
  | 'bool'
  | 'int'
  | 'int8'
  | 'int16'
  | 'int32'
  | 'int64'
  | 'uint'
  | 'uint8'
  | 'uint16'
  | 'uint32'
  | 'uint64'
  | 'uintptr'
  | 'float32'
  | 'float64'
  | 'complex64'
  | 'complex128'
  | 'string'
  | 'slice'
  | 'array'
  | 'map'
  | 'struct'
  | 'ptr'
  | 'interface'
  | 'func';

export interface StructField {
  name: string;
  type: GoType;
  /** An embedded field: its fields and methods are promoted (Go's ObjectMeta in NodeClaim). */
  embedded?: boolean;
  /** encoding/json name (from the Go struct tag); '-' skips the field. Default: the Go name. */
  json?: string;
  omitEmpty?: boolean;
}

/** A Go function or method as the template calls it (reflect.Type of a func). */
export interface FuncSig {
  params: GoType[];
  variadic: boolean;
  result: GoType;
  /** A second result of type error. */
  returnsError: boolean;
}

export interface GoFunc {
  sig: FuncSig;
  /** Args already converted to the parameter types; the variadic rest arrives as the last args. */
  call: (args: GoValue[]) => GoValue;
}

export interface GoType {
  kind: Kind;
  /** As reflect.Type.String() prints it. */
  name: string;
  elem?: GoType;
  key?: GoType;
  fields?: StructField[];
  /**
   * The method set, by name: a struct's value-receiver methods; a pointer's, all of them. A struct
   * reached through a pointer (addressable) gets its pointer type's set, as Go's evalField.
   */
  methods?: Map<string, (self: GoValue) => GoFunc>;
  /** The method set has String() string (fmt.Stringer) or Error(): printing uses it. */
  stringer?: (self: GoValue) => string;
  /** encoding/json for types with a MarshalJSON (time.Time, semver.Version). */
  marshalJSON?: (self: GoValue) => string;
  sig?: FuncSig;
}

const basic = (kind: Kind): GoType => ({ kind, name: kind });

export const BOOL = basic('bool');
export const INT = basic('int');
export const INT64 = basic('int64');
export const INT32 = basic('int32');
export const UINT8 = basic('uint8');
export const UINT32 = basic('uint32');
export const UINT64 = basic('uint64');
export const FLOAT64 = basic('float64');
export const COMPLEX128 = basic('complex128');
export const STRING = basic('string');
export const IFACE: GoType = { kind: 'interface', name: 'interface {}' };
/** reflect.Value: builtins taking it get the raw value, invalid included. */
export const REFLECT_VALUE: GoType = { kind: 'struct', name: 'reflect.Value', fields: [] };

const sliceCache = new Map<GoType, GoType>();
export function sliceOf(elem: GoType): GoType {
  let t = sliceCache.get(elem);
  if (!t) {
    t = { kind: 'slice', name: `[]${elem.name}`, elem };
    sliceCache.set(elem, t);
  }
  return t;
}

const mapCache = new Map<GoType, GoType>();
/** Only string-keyed maps exist here: JSON objects and sprig's dicts. */
export function mapOf(elem: GoType): GoType {
  let t = mapCache.get(elem);
  if (!t) {
    t = { kind: 'map', name: `map[string]${elem.name}`, key: STRING, elem };
    mapCache.set(elem, t);
  }
  return t;
}

const ptrCache = new Map<GoType, GoType>();
export function ptrTo(elem: GoType): GoType {
  let t = ptrCache.get(elem);
  if (!t) {
    // The pointer's String and MarshalJSON are the pointee's (value receivers), called on it.
    t = { kind: 'ptr', name: `*${elem.name}`, elem };
    const { stringer, marshalJSON } = elem;
    if (stringer) t.stringer = (self) => (self.v === null ? '<nil>' : stringer(self.v as GoValue));
    if (marshalJSON) t.marshalJSON = (self) => marshalJSON(self.v as GoValue);
    ptrCache.set(elem, t);
  }
  return t;
}

export const SLICE_IFACE = sliceOf(IFACE);
export const SLICE_STRING = sliceOf(STRING);
export const SLICE_INT = sliceOf(INT);
export const MAP_IFACE = mapOf(IFACE);
export const MAP_STRING = mapOf(STRING);

export function funcType(sig: FuncSig): GoType {
  const params = sig.params.map((p, i) =>
    sig.variadic && i === sig.params.length - 1 ? `...${p.elem!.name}` : p.name,
  );
  const res = sig.returnsError ? ` (${sig.result.name}, error)` : ` ${sig.result.name}`;
  return { kind: 'func', name: `func(${params.join(', ')})${res}`, sig };
}

export const isIntKind = (k: Kind) =>
  k === 'int' || k === 'int8' || k === 'int16' || k === 'int32' || k === 'int64';
export const isUintKind = (k: Kind) =>
  k === 'uint' || k === 'uint8' || k === 'uint16' || k === 'uint32' || k === 'uint64' || k === 'uintptr';
export const isFloatKind = (k: Kind) => k === 'float32' || k === 'float64';
export const isComplexKind = (k: Kind) => k === 'complex64' || k === 'complex128';

/** Types a nil can be converted to (reflect: chan, func, interface, map, pointer, slice). */
export function canBeNil(t: GoType): boolean {
  switch (t.kind) {
    case 'func':
    case 'interface':
    case 'map':
    case 'ptr':
    case 'slice':
      return true;
    case 'struct':
      return t === REFLECT_VALUE;
    default:
      return false;
  }
}

/** Go's assignability, for the types we have: identical types, or anything to interface {}. */
export function assignableTo(from: GoType, to: GoType): boolean {
  return from === to || to === IFACE || (from.name === to.name && from.kind === to.kind);
}
