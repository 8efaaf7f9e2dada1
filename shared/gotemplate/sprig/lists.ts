/** sprig v3.2.3 list functions (list.go) and until/untilStep/seq (numeric.go). */
import { goFunc } from '../builtins.ts';
import { CapError, GoError } from '../errors.ts';
import { trimSpace } from '../gostrings.ts';
import { deepEqual, empty, num } from '../reflect.ts';
import { BOOL, type GoFunc, IFACE, INT, SLICE_IFACE, SLICE_INT, STRING, sliceOf } from '../types.ts';
import { compareStrings, GoValue, goInt, goList, goString, type RV } from '../value.ts';
import { isList, kindOf, listItems, strslice, strval, toInt } from './cast.ts';

let listCap = Number.POSITIVE_INFINITY;
/** Lists built from a count (until, seq) are capped like the output. */
export function setListCap(n: number) {
  listCap = n;
}

/** The mustX form returns the error; the plain form panics with it (same text for the template). */
function onList<T>(what: string, list: RV, f: (items: RV[]) => T): T {
  if (!isList(list)) throw new GoError(`Cannot ${what} on type ${kindOf(list)}`);
  return f(listItems(list));
}

/** chunk's message lacks the "on" of the others. */
function onChunk<T>(list: RV, f: (items: RV[]) => T): T {
  if (!isList(list)) throw new GoError(`Cannot chunk type ${kindOf(list)}`);
  return f(listItems(list));
}

const L = (items: RV[] | null) => goList(items);
const listFn = (what: string, f: (items: RV[]) => RV[] | null) =>
  goFunc([IFACE], SLICE_IFACE, ([l]) => L(onList(what, l, f)), { returnsError: true });

function untilStep(start: number, stop: number, step: number): number[] {
  const v: number[] = [];
  const push = (i: number) => {
    if (v.length >= listCap) throw new CapError(`a list of more than ${listCap} elements exceeds the cap`);
    v.push(i);
  };
  if (stop < start) {
    if (step >= 0) return v;
    for (let i = start; i > stop; i += step) push(i);
    return v;
  }
  if (step <= 0) return v;
  for (let i = start; i < stop; i += step) push(i);
  return v;
}

const ints = (xs: number[]) =>
  new GoValue(
    SLICE_INT,
    xs.map((x) => goInt(x)),
  );

function seq(params: number[]): string {
  let inc = 1;
  const join = (xs: number[]) => trimSpace(xs.join(' '));
  switch (params.length) {
    case 0:
      return '';
    case 1: {
      const end = params[0]!;
      if (end < 1) inc = -1;
      return join(untilStep(1, end + inc, inc));
    }
    case 2: {
      const [start, end] = params as [number, number];
      const step = end < start ? -1 : 1;
      return join(untilStep(start, end + step, step));
    }
    case 3: {
      const [start, step, end] = params as [number, number, number];
      if (end < start) {
        inc = -1;
        if (step > 0) return '';
      }
      return join(untilStep(start, end + inc, step));
    }
    default:
      return '';
  }
}

function chunk(size: number, items: RV[]): GoValue {
  // Go computes a non-positive chunk count or size here and make() panics.
  if (size <= 0) throw new GoError('runtime error: makeslice: len out of range');
  const l = items.length;
  const cs = Math.floor((l - 1) / size) + 1;
  const out: RV[] = [];
  for (let i = 0; i < cs; i++) {
    let clen = size;
    if (i === cs - 1) {
      clen = Math.floor(l % size);
      if (clen === 0) clen = size;
    }
    out.push(goList(items.slice(i * size, i * size + clen)));
  }
  return new GoValue(sliceOf(SLICE_IFACE), out);
}

function sliceFn(list: RV, indices: RV[]): RV {
  if (!isList(list)) throw new GoError(`list should be type of slice or array but ${kindOf(list)}`);
  const raw = (list.v ?? []) as RV[];
  if (raw.length === 0) return null;
  const start = indices.length > 0 ? Number(toInt(indices[0]!)) : 0;
  const end = indices.length < 2 ? raw.length : Number(toInt(indices[1]!));
  if (start < 0 || end > raw.length || start > end) {
    throw new GoError('reflect.Value.Slice: slice index out of bounds');
  }
  return new GoValue(list.type, raw.slice(start, end));
}

const without = (items: RV[], omit: RV[]) => items.filter((x) => !omit.some((o) => deepEqual(x, o)));

export const LIST_FUNCS: Record<string, GoFunc> = {
  list: goFunc([SLICE_IFACE], SLICE_IFACE, (a: RV[]) => L(a), { variadic: true }),
  tuple: goFunc([SLICE_IFACE], SLICE_IFACE, (a: RV[]) => L(a), { variadic: true }),
  append: goFunc([IFACE, IFACE], SLICE_IFACE, ([l, v]) => L(onList('push', l, (xs) => [...xs, v]))),
  push: goFunc([IFACE, IFACE], SLICE_IFACE, ([l, v]) => L(onList('push', l, (xs) => [...xs, v]))),
  mustAppend: goFunc([IFACE, IFACE], SLICE_IFACE, ([l, v]) => L(onList('push', l, (xs) => [...xs, v])), {
    returnsError: true,
  }),
  mustPush: goFunc([IFACE, IFACE], SLICE_IFACE, ([l, v]) => L(onList('push', l, (xs) => [...xs, v])), {
    returnsError: true,
  }),
  prepend: goFunc([IFACE, IFACE], SLICE_IFACE, ([l, v]) => L(onList('prepend', l, (xs) => [v, ...xs]))),
  mustPrepend: goFunc([IFACE, IFACE], SLICE_IFACE, ([l, v]) => L(onList('prepend', l, (xs) => [v, ...xs])), {
    returnsError: true,
  }),
  first: goFunc([IFACE], IFACE, ([l]) => onList('find first', l, (xs) => (xs.length ? xs[0]! : null))),
  mustFirst: goFunc([IFACE], IFACE, ([l]) => onList('find first', l, (xs) => (xs.length ? xs[0]! : null)), {
    returnsError: true,
  }),
  last: goFunc([IFACE], IFACE, ([l]) =>
    onList('find last', l, (xs) => (xs.length ? xs[xs.length - 1]! : null)),
  ),
  mustLast: goFunc(
    [IFACE],
    IFACE,
    ([l]) => onList('find last', l, (xs) => (xs.length ? xs[xs.length - 1]! : null)),
    { returnsError: true },
  ),
  rest: listFn('find rest', (xs) => (xs.length ? xs.slice(1) : null)),
  mustRest: listFn('find rest', (xs) => (xs.length ? xs.slice(1) : null)),
  initial: listFn('find initial', (xs) => (xs.length ? xs.slice(0, -1) : null)),
  mustInitial: listFn('find initial', (xs) => (xs.length ? xs.slice(0, -1) : null)),
  reverse: listFn('find reverse', (xs) => [...xs].reverse()),
  mustReverse: listFn('find reverse', (xs) => [...xs].reverse()),
  compact: listFn('compact', (xs) => xs.filter((x) => !empty(x))),
  mustCompact: listFn('compact', (xs) => xs.filter((x) => !empty(x))),
  uniq: listFn('find uniq', (xs) => xs.filter((x, i) => !xs.slice(0, i).some((y) => deepEqual(x, y)))),
  mustUniq: listFn('find uniq', (xs) => xs.filter((x, i) => !xs.slice(0, i).some((y) => deepEqual(x, y)))),
  without: goFunc(
    [IFACE, SLICE_IFACE],
    SLICE_IFACE,
    ([l, ...o]) => L(onList('find without', l, (xs) => without(xs, o))),
    {
      variadic: true,
    },
  ),
  mustWithout: goFunc(
    [IFACE, SLICE_IFACE],
    SLICE_IFACE,
    ([l, ...o]) => L(onList('find without', l, (xs) => without(xs, o))),
    { variadic: true, returnsError: true },
  ),
  has: goFunc([IFACE, IFACE], BOOL, ([needle, hay]) => new GoValue(BOOL, hasFn(needle, hay))),
  mustHas: goFunc([IFACE, IFACE], BOOL, ([needle, hay]) => new GoValue(BOOL, hasFn(needle, hay)), {
    returnsError: true,
  }),
  slice: goFunc([IFACE, SLICE_IFACE], IFACE, ([l, ...ix]) => sliceFn(l, ix), { variadic: true }),
  mustSlice: goFunc([IFACE, SLICE_IFACE], IFACE, ([l, ...ix]) => sliceFn(l, ix), {
    variadic: true,
    returnsError: true,
  }),
  concat: goFunc(
    [SLICE_IFACE],
    IFACE,
    (lists: RV[]) => {
      const res: RV[] = [];
      for (const l of lists) {
        if (!isList(l)) throw new GoError(`Cannot concat type ${kindOf(l)} as list`);
        res.push(...listItems(l));
      }
      return L(res.length ? res : null);
    },
    { variadic: true },
  ),
  chunk: goFunc([INT, IFACE], sliceOf(SLICE_IFACE), ([n, l]) => onChunk(l, (xs) => chunk(num(n), xs))),
  mustChunk: goFunc([INT, IFACE], sliceOf(SLICE_IFACE), ([n, l]) => onChunk(l, (xs) => chunk(num(n), xs)), {
    returnsError: true,
  }),
  sortAlpha: goFunc([IFACE], sliceOf(STRING), ([l]) => {
    const items =
      isList(l) || (l !== null && l.type.kind === 'ptr' && isList(l.v as RV)) ? strslice(l) : [strval(l)];
    return new GoValue(sliceOf(STRING), sortBytes(items).map(goString));
  }),
  until: goFunc([INT], SLICE_INT, ([c]) => ints(untilStep(0, num(c), num(c) < 0 ? -1 : 1))),
  untilStep: goFunc([INT, INT, INT], SLICE_INT, ([a, b, c]) => ints(untilStep(num(a), num(b), num(c)))),
  seq: goFunc([SLICE_INT], STRING, (p: RV[]) => goString(seq(p.map((x) => num(x)))), { variadic: true }),
};

function hasFn(needle: RV, hay: RV): boolean {
  if (hay === null) return false;
  if (!isList(hay)) throw new GoError(`Cannot find has on type ${kindOf(hay)}`);
  return listItems(hay).some((x) => deepEqual(needle, x));
}

const sortBytes = (xs: string[]) => [...xs].sort(compareStrings);
