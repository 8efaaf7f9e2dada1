/**
 * text/template's builtin functions (funcs.go): and or not len index print printf println html
 * js urlquery call eq ne lt le gt ge. (`slice` is sprig's, which replaces Go's in the func map.)
 */
import { GoError } from './errors.ts';
import { sprint, sprintf, sprintln } from './fmt.ts';
import { deepEqual, indirect, truth } from './reflect.ts';
import { isPrint } from './strconv.ts';
import {
  BOOL,
  type GoFunc,
  type GoType,
  IFACE,
  INT,
  isComplexKind,
  isFloatKind,
  isIntKind,
  isUintKind,
  REFLECT_VALUE,
  SLICE_IFACE,
  STRING,
  sliceOf,
  UINT8,
} from './types.ts';
import { compareStrings, concrete, GoValue, mapIndex, type RV, sliceIndex, zeroValue } from './value.ts';

/** A Go function: parameter types (the variadic one as a slice type), result, error result. */
export function goFunc(
  params: GoType[],
  result: GoType,
  call: (args: any[]) => RV,
  opts: { variadic?: boolean; returnsError?: boolean } = {},
): GoFunc {
  return {
    sig: { params, result, variadic: opts.variadic ?? false, returnsError: opts.returnsError ?? false },
    call: call as (args: GoValue[]) => GoValue,
  };
}

const SLICE_RV = sliceOf(REFLECT_VALUE);
const b = (x: boolean) => new GoValue(BOOL, x);
const s = (x: string) => new GoValue(STRING, x);

/** A Go string's bytes, refusing results that would split a UTF-8 sequence. */
export function byteAt(str: string, i: number): number {
  return Buffer.from(str, 'utf8')[i]!;
}

function indexArg(index: RV, cap: number): number {
  let x: bigint;
  if (index === null) throw new GoError('cannot index slice/array with nil');
  if (isIntKind(index.type.kind) || isUintKind(index.type.kind)) x = index.v as bigint;
  else throw new GoError(`cannot index slice/array with type ${index.type.name}`);
  if (x < 0n || x > BigInt(cap)) throw new GoError(`index out of range: ${x}`);
  return Number(x);
}

function index(item: RV, indexes: RV[]): RV {
  item = concrete(item);
  if (item === null) throw new GoError('index of untyped nil');
  for (let ix of indexes) {
    ix = concrete(ix);
    const [it, isNil] = indirect(item);
    if (isNil) throw new GoError('index of nil pointer');
    item = it!;
    switch (item.type.kind) {
      case 'array':
      case 'slice': {
        const n = item.v === null ? 0 : (item.v as RV[]).length;
        const x = indexArg(ix, n);
        if (x === n) throw new GoError('reflect: slice index out of range');
        item = sliceIndex(item, x);
        break;
      }
      case 'string': {
        const bytes = Buffer.from(item.v as string, 'utf8');
        const x = indexArg(ix, bytes.length);
        if (x === bytes.length) throw new GoError('reflect: string index out of range');
        item = new GoValue(UINT8, BigInt(bytes[x]!));
        break;
      }
      case 'map': {
        if (ix === null) throw new GoError(`value is nil; should be of type ${item.type.key!.name}`);
        if (ix.type !== item.type.key) {
          throw new GoError(`value has type ${ix.type.name}; should be ${item.type.key!.name}`);
        }
        item = mapIndex(item, ix.v as string) ?? zeroValue(item.type.elem!);
        break;
      }
      default:
        throw new GoError(`can't index item of type ${item.type.name}`);
    }
    if (item === null) {
      // A nil element of []interface {} indexed further: reflect would hold an interface value.
      item = new GoValue(IFACE, null);
    }
  }
  return item;
}

function length(item: RV): RV {
  const [v, isNil] = indirect(item);
  if (isNil) throw new GoError('len of nil pointer');
  if (v === null) throw new GoError('reflect: call of reflect.Value.Type on zero Value');
  switch (v.type.kind) {
    case 'array':
    case 'slice':
      return new GoValue(INT, BigInt(v.v === null ? 0 : (v.v as RV[]).length));
    case 'map':
      return new GoValue(INT, BigInt(v.v === null ? 0 : (v.v as Map<string, RV>).size));
    case 'string':
      return new GoValue(INT, BigInt(Buffer.byteLength(v.v as string, 'utf8')));
  }
  throw new GoError(`len of type ${v.type.name}`);
}

function call(fn: RV): RV {
  fn = concrete(fn);
  if (fn === null) throw new GoError('call of nil');
  throw new GoError(`non-function of type ${fn.type.name}`);
}

type BasicKind = 'invalid' | 'bool' | 'complex' | 'int' | 'float' | 'string' | 'uint';

function basicKind(v: RV): BasicKind {
  if (v === null) return 'invalid';
  const k = v.type.kind;
  if (k === 'bool') return 'bool';
  if (isIntKind(k)) return 'int';
  if (isUintKind(k)) return 'uint';
  if (isFloatKind(k)) return 'float';
  if (isComplexKind(k)) return 'complex';
  if (k === 'string') return 'string';
  return 'invalid';
}

const BAD_TYPE = 'invalid type for comparison';
const BAD_CMP = 'incompatible types for comparison';

const isNilValue = (v: RV) =>
  v === null ||
  ((v.type.kind === 'func' ||
    v.type.kind === 'interface' ||
    v.type.kind === 'map' ||
    v.type.kind === 'ptr' ||
    v.type.kind === 'slice') &&
    v.v === null);

function eq(arg1: RV, rest: RV[]): boolean {
  arg1 = concrete(arg1);
  if (rest.length === 0) throw new GoError('missing argument for comparison');
  const k1 = basicKind(arg1);
  for (let arg of rest) {
    arg = concrete(arg);
    const k2 = basicKind(arg);
    let t = false;
    if (k1 !== k2) {
      if (k1 === 'int' && k2 === 'uint') t = (arg1!.v as bigint) >= 0n && arg1!.v === arg!.v;
      else if (k1 === 'uint' && k2 === 'int') t = (arg!.v as bigint) >= 0n && arg1!.v === arg!.v;
      else if (arg1 !== null && arg !== null) throw new GoError(BAD_CMP);
    } else {
      switch (k1) {
        case 'bool':
        case 'float':
        case 'int':
        case 'uint':
        case 'string':
          t = arg1!.v === arg!.v;
          break;
        case 'complex':
          t = arg1!.v.re === arg!.v.re && arg1!.v.im === arg!.v.im;
          break;
        default: {
          const kk1 = arg1 === null ? 'invalid' : arg1.type.kind;
          const kk2 = arg === null ? 'invalid' : arg.type.kind;
          if (kk1 !== kk2 && kk1 !== 'invalid' && kk2 !== 'invalid') {
            throw new GoError(
              `non-comparable types ${sprintf('%s', [arg1])}: ${arg1!.type.name}, ${arg!.type.name}: ${sprintf('%v', [arg])}`,
            );
          }
          if (isNilValue(arg1) || isNilValue(arg)) t = isNilValue(arg) === isNilValue(arg1);
          else {
            const k = arg!.type.kind;
            if (k === 'map' || k === 'slice' || k === 'func') {
              throw new GoError(`non-comparable type ${sprintf('%s', [arg])}: ${arg!.type.name}`);
            }
            t = k === 'ptr' ? arg1!.v === arg!.v : deepEqual(arg1, arg);
          }
        }
      }
    }
    if (t) return true;
  }
  return false;
}

function lt(a: RV, c: RV): boolean {
  a = concrete(a);
  const k1 = basicKind(a);
  if (k1 === 'invalid') throw new GoError(BAD_TYPE);
  c = concrete(c);
  const k2 = basicKind(c);
  if (k2 === 'invalid') throw new GoError(BAD_TYPE);
  if (k1 !== k2) {
    if (k1 === 'int' && k2 === 'uint') return (a!.v as bigint) < 0n || (a!.v as bigint) < (c!.v as bigint);
    if (k1 === 'uint' && k2 === 'int') return (c!.v as bigint) >= 0n && (a!.v as bigint) < (c!.v as bigint);
    throw new GoError(BAD_CMP);
  }
  switch (k1) {
    case 'bool':
    case 'complex':
      throw new GoError(BAD_TYPE);
    case 'string':
      return compareStrings(a!.v as string, c!.v as string) < 0;
    default:
      return a!.v < c!.v;
  }
}

const le = (a: RV, c: RV) => lt(a, c) || eq(a, [c]);

/** The text of html/js/urlquery's arguments (evalArgs). */
function evalArgs(args: RV[]): string {
  const a0 = args[0];
  if (args.length === 1 && a0 !== undefined && a0 !== null && a0.type === STRING) return a0.v as string;
  // printableValue: pointers are followed and a nil is "<no value>", as when a template prints it.
  return sprint(
    args.map((a) => {
      const v = a !== null && a.type.kind === 'ptr' ? indirect(a)[0] : a;
      return v === null ? s('<no value>') : v;
    }),
  );
}

function htmlEscape(str: string): string {
  return str.replace(/[\0"'&<>]/g, (c) =>
    c === '\0'
      ? '\ufffd'
      : c === '"'
        ? '&#34;'
        : c === "'"
          ? '&#39;'
          : c === '&'
            ? '&amp;'
            : c === '<'
              ? '&lt;'
              : '&gt;',
  );
}

function jsEscape(str: string): string {
  let out = '';
  for (const ch of str) {
    const r = ch.codePointAt(0)!;
    switch (ch) {
      case '\\':
        out += '\\\\';
        continue;
      case "'":
        out += "\\'";
        continue;
      case '"':
        out += '\\"';
        continue;
      case '<':
        out += '\\u003C';
        continue;
      case '>':
        out += '\\u003E';
        continue;
      case '&':
        out += '\\u0026';
        continue;
      case '=':
        out += '\\u003D';
        continue;
    }
    if (r < 0x20) out += `\\u00${r.toString(16).toUpperCase().padStart(2, '0')}`;
    else if (r < 0x80 || isPrint(r)) out += ch;
    else out += `\\u${r.toString(16).toUpperCase().padStart(4, '0')}`;
  }
  return out;
}

/** url.QueryEscape. */
export function queryEscape(str: string): string {
  let out = '';
  for (const byte of Buffer.from(str, 'utf8')) {
    const c = String.fromCharCode(byte);
    if (/[A-Za-z0-9\-_.~]/.test(c)) out += c;
    else if (c === ' ') out += '+';
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

export const BUILTINS: Record<string, GoFunc> = {
  and: goFunc([REFLECT_VALUE, SLICE_RV], REFLECT_VALUE, () => null, { variadic: true }),
  or: goFunc([REFLECT_VALUE, SLICE_RV], REFLECT_VALUE, () => null, { variadic: true }),
  not: goFunc([REFLECT_VALUE], BOOL, ([a]) => b(!truth(a))),
  len: goFunc([REFLECT_VALUE], INT, ([a]) => length(a), { returnsError: true }),
  index: goFunc([REFLECT_VALUE, SLICE_RV], REFLECT_VALUE, ([item, ...ix]) => index(item, ix), {
    variadic: true,
    returnsError: true,
  }),
  call: goFunc([REFLECT_VALUE, SLICE_RV], REFLECT_VALUE, ([f]) => call(f), {
    variadic: true,
    returnsError: true,
  }),
  print: goFunc([SLICE_IFACE], STRING, (a) => s(sprint(a)), { variadic: true }),
  printf: goFunc([STRING, SLICE_IFACE], STRING, ([f, ...a]) => s(sprintf(f.v, a)), { variadic: true }),
  println: goFunc([SLICE_IFACE], STRING, (a) => s(sprintln(a)), { variadic: true }),
  html: goFunc([SLICE_IFACE], STRING, (a) => s(htmlEscape(evalArgs(a))), { variadic: true }),
  js: goFunc([SLICE_IFACE], STRING, (a) => s(jsEscape(evalArgs(a))), { variadic: true }),
  urlquery: goFunc([SLICE_IFACE], STRING, (a) => s(queryEscape(evalArgs(a))), { variadic: true }),
  eq: goFunc([REFLECT_VALUE, SLICE_RV], BOOL, ([a, ...r]) => b(eq(a, r)), {
    variadic: true,
    returnsError: true,
  }),
  ne: goFunc([REFLECT_VALUE, REFLECT_VALUE], BOOL, ([a, c]) => b(!eq(a, [c])), { returnsError: true }),
  lt: goFunc([REFLECT_VALUE, REFLECT_VALUE], BOOL, ([a, c]) => b(lt(a, c)), { returnsError: true }),
  le: goFunc([REFLECT_VALUE, REFLECT_VALUE], BOOL, ([a, c]) => b(le(a, c)), { returnsError: true }),
  gt: goFunc([REFLECT_VALUE, REFLECT_VALUE], BOOL, ([a, c]) => b(!le(a, c)), { returnsError: true }),
  ge: goFunc([REFLECT_VALUE, REFLECT_VALUE], BOOL, ([a, c]) => b(!lt(a, c)), { returnsError: true }),
};
