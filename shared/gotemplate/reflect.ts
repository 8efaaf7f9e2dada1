/**
 * Helpers that mirror Go's reflect and text/template exec helpers on GoValues: indirect,
 * truthiness, emptiness (sprig), deep equality, and typed accessors for function bodies.
 */
import { GoError } from './errors.ts';
import { type GoType, isFloatKind, isIntKind, isUintKind, STRING } from './types.ts';
import { compareStrings, GoValue, type RV } from './value.ts';

/** exec.indirect: follow pointers and interfaces; [value, isNil]. */
export function indirect(v: RV): [RV, boolean] {
  while (v !== null && (v.type.kind === 'ptr' || v.type.kind === 'interface')) {
    if (v.v === null) return [v, true];
    v = v.v as GoValue;
  }
  return [v, false];
}

/** exec.isTrue: [truth, ok]. */
export function isTrue(v: RV): [boolean, boolean] {
  if (v === null) return [false, true];
  switch (v.type.kind) {
    case 'array':
    case 'slice':
      return [v.v !== null && (v.v as unknown[]).length > 0, true];
    case 'map':
      return [v.v !== null && (v.v as Map<string, RV>).size > 0, true];
    case 'string':
      return [(v.v as string).length > 0, true];
    case 'bool':
      return [v.v as boolean, true];
    case 'complex64':
    case 'complex128':
      return [v.v.re !== 0 || v.v.im !== 0, true];
    case 'func':
    case 'ptr':
    case 'interface':
      return [v.v !== null, true];
    case 'struct':
      return [true, true];
    default:
      if (isIntKind(v.type.kind) || isUintKind(v.type.kind)) return [v.v !== 0n, true];
      if (isFloatKind(v.type.kind)) return [v.v !== 0, true];
      return [false, false];
  }
}

/** exec.truth: isTrue of the value inside an interface. */
export function truth(v: RV): boolean {
  return isTrue(v !== null && v.type.kind === 'interface' ? (v.v as RV) : v)[0];
}

/** sprig's empty (on the dynamic value of an interface {} argument). */
export function empty(v: RV): boolean {
  if (v === null) return true;
  if (v.type.kind === 'struct') return false;
  if (v.type.kind === 'func' || v.type.kind === 'ptr' || v.type.kind === 'interface') return v.v === null;
  return !isTrue(v)[0];
}

/** reflect.DeepEqual on interface {} values. */
export function deepEqual(a: RV, b: RV): boolean {
  if (a === null || b === null) return a === b;
  if (a.type !== b.type && a.type.name !== b.type.name) return false;
  switch (a.type.kind) {
    case 'slice':
    case 'array': {
      const x = a.v as RV[] | null;
      const y = b.v as RV[] | null;
      if (x === null || y === null) return x === y;
      return x.length === y.length && x.every((e, i) => deepEqual(e, y[i]!));
    }
    case 'map': {
      const x = a.v as Map<string, RV> | null;
      const y = b.v as Map<string, RV> | null;
      if (x === null || y === null) return x === y;
      if (x.size !== y.size) return false;
      for (const [k, e] of x) if (!y.has(k) || !deepEqual(e, y.get(k)!)) return false;
      return true;
    }
    case 'struct':
      return (a.v as RV[]).every((e, i) => deepEqual(e, (b.v as RV[])[i]!));
    case 'ptr':
    case 'interface':
      return a.v === b.v || (a.v !== null && b.v !== null && deepEqual(a.v as RV, b.v as RV));
    case 'complex64':
    case 'complex128':
      return a.v.re === b.v.re && a.v.im === b.v.im;
    case 'func':
      return false;
    default:
      return a.v === b.v;
  }
}

/** The string payload of a string-typed argument. */
export const str = (v: RV): string => (v as GoValue).v as string;
/** The integer payload (bigint) of an int-typed argument. */
export const int = (v: RV): bigint => (v as GoValue).v as bigint;
/** An int argument as a JS number (Go int is 64-bit; callers cap sizes before using it). */
export const num = (v: RV): number => Number((v as GoValue).v as bigint);

/** `reflect.TypeOf(x).Kind()` as sprig's error messages print it; panics on nil like Go. */
export function kindName(v: RV): string {
  if (v === null) throw new GoError('runtime error: invalid memory address or nil pointer dereference');
  return v.type.kind;
}

export const sortStrings = (xs: string[]) => xs.sort(compareStrings);

export const isString = (v: RV): v is GoValue => v !== null && v.type === STRING;

export function typeName(t: GoType | null): string {
  return t === null ? '<nil>' : t.name;
}

export { GoValue };
