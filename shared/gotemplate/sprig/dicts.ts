/** sprig v3.2.3 dict functions (dict.go), with mergo v0.3.12's Merge rules for merge/mergeOverwrite. */
import { goFunc } from '../builtins.ts';
import { GoError } from '../errors.ts';
import { str } from '../reflect.ts';
import { BOOL, type GoFunc, IFACE, MAP_IFACE, SLICE_IFACE, SLICE_STRING, STRING, sliceOf } from '../types.ts';
import { deepCopy, GoValue, goDict, goList, goString, type RV } from '../value.ts';
import { strval } from './cast.ts';

type M = Map<string, RV>;
const SLICE_MAP = sliceOf(MAP_IFACE);
const mapOfArg = (v: RV): M | null => (v as GoValue).v as M | null;
const nilMapWrite = () => new GoError('assignment to entry in nil map');

/** mergo's isEmptyValue on an interface element (its dynamic value). */
function mergoEmpty(v: RV): boolean {
  if (v === null) return true;
  switch (v.type.kind) {
    case 'array':
    case 'slice':
      return v.v === null || (v.v as RV[]).length === 0;
    case 'map':
      return v.v === null || (v.v as M).size === 0;
    case 'string':
      return v.v === '';
    case 'bool':
      return !v.v;
    case 'interface':
    case 'ptr':
      return v.v === null || mergoEmpty(v.v as RV);
    case 'func':
      return v.v === null;
    case 'struct':
      return false;
    default:
      return v.v === 0 || v.v === 0n;
  }
}

/** mergo.Merge / MergeWithOverwrite of map[string]interface {} src into dst, in place. */
function mergeInto(dst: M, src: M, overwrite: boolean) {
  for (const [key, se] of src) {
    const has = dst.has(key);
    const de = has ? dst.get(key)! : null;
    if (se === null) {
      if (overwrite) dst.set(key, null);
      continue;
    }
    const sk = se.type.kind;
    if (sk === 'map' && de !== null && de.type.kind === 'map' && de.v !== null && se.v !== null) {
      if (de.type !== MAP_IFACE || se.type !== MAP_IFACE) {
        throw new GoError(`merging ${se.type.name} into ${de.type.name} is not supported`);
      }
      mergeInto(de.v as M, se.v as M, overwrite);
    }
    if (has && !mergoEmpty(de) && (sk === 'map' || sk === 'slice')) {
      if (sk === 'slice' && overwrite) dst.set(key, se);
      continue;
    }
    if (overwrite || !has || mergoEmpty(de)) dst.set(key, se);
  }
}

function merge(args: RV[], overwrite: boolean): RV {
  const [d, ...srcs] = args;
  let dst = mapOfArg(d!);
  for (const s of srcs) {
    const src = mapOfArg(s);
    if (src === null || src.size === 0) continue;
    if (dst === null) dst = new Map();
    mergeInto(dst, src, overwrite);
  }
  return goDict(dst);
}

function typeAssert(v: RV, want: string, kind: string): never {
  throw new GoError(
    `interface conversion: interface {} is ${v === null ? 'nil' : v.type.name}, not ${want}${kind}`,
  );
}

function dig(ps: RV[]): RV {
  if (ps.length < 3) throw new GoError('dig needs at least three arguments');
  const last = ps[ps.length - 1]!;
  if (last === null || last.type !== MAP_IFACE) typeAssert(last, 'map[string]interface {}', '');
  const def = ps[ps.length - 2]!;
  const ks = ps.slice(0, -2).map((k) => {
    if (k === null || k.type !== STRING) typeAssert(k, 'string', '');
    return k.v as string;
  });
  let dict = last.v as M | null;
  for (let i = 0; ; i++) {
    if (dict === null || !dict.has(ks[i]!)) return def;
    const step = dict.get(ks[i]!)!;
    if (i === ks.length - 1) return step;
    if (step === null || step.type !== MAP_IFACE) typeAssert(step, 'map[string]interface {}', '');
    dict = step.v as M | null;
  }
}

const D = MAP_IFACE;

export const DICT_FUNCS: Record<string, GoFunc> = {
  dict: goFunc(
    [SLICE_IFACE],
    D,
    (v: RV[]) => {
      const m: M = new Map();
      for (let i = 0; i < v.length; i += 2)
        m.set(strval(v[i]!), i + 1 >= v.length ? goString('') : v[i + 1]!);
      return goDict(m);
    },
    { variadic: true },
  ),
  get: goFunc([D, STRING], IFACE, ([d, k]) => {
    const m = mapOfArg(d);
    return m?.has(str(k)) ? m.get(str(k))! : goString('');
  }),
  set: goFunc([D, STRING, IFACE], D, ([d, k, v]) => {
    const m = mapOfArg(d);
    if (m === null) throw nilMapWrite();
    m.set(str(k), v);
    return d;
  }),
  unset: goFunc([D, STRING], D, ([d, k]) => {
    mapOfArg(d)?.delete(str(k));
    return d;
  }),
  hasKey: goFunc([D, STRING], BOOL, ([d, k]) => new GoValue(BOOL, mapOfArg(d)?.has(str(k)) ?? false)),
  pluck: goFunc(
    [STRING, SLICE_MAP],
    SLICE_IFACE,
    (args: RV[]) => {
      const [k, ...ds] = args as [RV, ...RV[]];
      const res: RV[] = [];
      for (const d of ds) {
        const m = mapOfArg(d);
        if (m?.has(str(k))) res.push(m.get(str(k))!);
      }
      return goList(res);
    },
    { variadic: true },
  ),
  keys: goFunc(
    [SLICE_MAP],
    SLICE_STRING,
    (ds: RV[]) =>
      new GoValue(
        SLICE_STRING,
        ds.flatMap((d) => [...(mapOfArg(d)?.keys() ?? [])].map(goString)),
      ),
    { variadic: true },
  ),
  values: goFunc([D], SLICE_IFACE, ([d]) => goList([...(mapOfArg(d)?.values() ?? [])])),
  pick: goFunc(
    [D, SLICE_STRING],
    D,
    (args: RV[]) => {
      const [d, ...ks] = args as [RV, ...RV[]];
      const m = mapOfArg(d);
      const res: M = new Map();
      for (const k of ks) if (m?.has(str(k))) res.set(str(k), m.get(str(k))!);
      return goDict(res);
    },
    { variadic: true },
  ),
  omit: goFunc(
    [D, SLICE_STRING],
    D,
    (args: RV[]) => {
      const [d, ...ks] = args as [RV, ...RV[]];
      const omit = new Set(ks.map(str));
      const res: M = new Map();
      for (const [k, v] of mapOfArg(d) ?? []) if (!omit.has(k)) res.set(k, v);
      return goDict(res);
    },
    { variadic: true },
  ),
  merge: goFunc([D, SLICE_MAP], IFACE, (a: RV[]) => merge(a, false), { variadic: true }),
  mergeOverwrite: goFunc([D, SLICE_MAP], IFACE, (a: RV[]) => merge(a, true), { variadic: true }),
  mustMerge: goFunc([D, SLICE_MAP], IFACE, (a: RV[]) => merge(a, false), {
    variadic: true,
    returnsError: true,
  }),
  mustMergeOverwrite: goFunc([D, SLICE_MAP], IFACE, (a: RV[]) => merge(a, true), {
    variadic: true,
    returnsError: true,
  }),
  deepCopy: goFunc([IFACE], IFACE, ([v]) => deepCopy(v)),
  mustDeepCopy: goFunc([IFACE], IFACE, ([v]) => deepCopy(v), { returnsError: true }),
  dig: goFunc([SLICE_IFACE], IFACE, (ps: RV[]) => dig(ps), { variadic: true, returnsError: true }),
};
