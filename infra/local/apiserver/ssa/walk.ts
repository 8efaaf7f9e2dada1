/**
 * The typed walks of structured-merge-diff (typed/tofieldset.go, compare.go, merge.go,
 * remove.go, helpers.go) over plain JSON values: the field set a value sets, what changed between
 * two values, the merge of an applied configuration into a live object, and the removal of a set
 * of fields. `undefined` stands for an absent value, `null` for an explicit null, as Go's nil
 * Value and null Value.
 */
import { deepEqual } from '../patch.ts';
import { FieldSet, fieldPE, keyPE, type Path, type PathElement, pathString, valuePE } from './fieldpath.ts';
import { type Atom, DEDUCED, deduce, type ListType, type MapType } from './types.ts';

/** A value the schema cannot type (duplicate keys, a keyed item without its keys): upstream's ValidationError. */
export class TypedError extends Error {
  override readonly name = 'TypedError';
}

const isMap = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

function fieldType(t: MapType, key: string): Atom {
  const f = t.fields.get(key);
  if (f) return f();
  return t.elem ? t.elem() : DEDUCED;
}

/** The path element of a list item (listItemToPathElement); throws TypedError when it has none. */
export function listItemPE(t: ListType, item: unknown): PathElement {
  if (t.keys.length > 0) {
    if (item === null) throw new TypedError('associative list with keys may not have a null element');
    if (!isMap(item)) throw new TypedError('associative list with keys may not have non-map elements');
    const fields: [string, unknown][] = [];
    for (const k of t.keys) {
      if (item[k] !== undefined) fields.push([k, item[k]]);
      else if (t.keyDefaults[k] !== undefined) fields.push([k, t.keyDefaults[k]]);
    }
    if (fields.length === 0) {
      throw new TypedError(
        `associative list with keys has an element that omits all key fields ${JSON.stringify(t.keys)} (and doesn't have default values for any key fields)`,
      );
    }
    return keyPE(fields);
  }
  if (isMap(item)) throw new TypedError("associative list without keys has an element that's a map type");
  if (Array.isArray(item)) throw new TypedError('not supported: associative list with lists as elements');
  if (item === null)
    throw new TypedError("associative list without keys has an element that's an explicit null");
  return valuePE(item);
}

/** Which facet of an atom handles a value: map first, then scalar, then list (handleAtom). */
function facet(a: Atom): 'map' | 'scalar' | 'list' {
  if (a.map) return 'map';
  if (a.scalar) return 'scalar';
  if (a.list) return 'list';
  throw new TypedError('schema error: invalid atom');
}

const listOf = (v: unknown): unknown[] | undefined => (Array.isArray(v) ? v : undefined);
const mapOf = (v: unknown): Record<string, unknown> | undefined => (isMap(v) ? v : undefined);
const emptyMap = (v: unknown) => !isMap(v) || Object.keys(v).length === 0;

/**
 * Whether two values of a type are compared or merged as one leaf: scalars, atomic lists and
 * maps, and lists or maps empty on both sides (emptyPromoteToLeaf in compare.go and merge.go).
 */
function asLeaf(a: Atom, l: unknown, r: unknown): boolean {
  const f = facet(a);
  if (f === 'scalar') return true;
  if (f === 'list') return a.list!.atomic || (!listOf(l)?.length && !listOf(r)?.length);
  return a.map!.atomic || (emptyMap(l) && emptyMap(r));
}

// ---------------------------------------------------------------------------------------------
// Validate

/** Go's %v / %#v of a JSON value, for the messages below. */
function goValue(v: unknown, sharp: boolean): string {
  if (typeof v === 'string') return sharp ? JSON.stringify(v) : v;
  if (Array.isArray(v))
    return sharp ? '[]interface {}{...}' : `[${v.map((x) => goValue(x, false)).join(' ')}]`;
  if (isMap(v)) return sharp ? 'map[string]interface {}{...}' : `map[${Object.keys(v).sort().join(' ')}]`;
  return String(v);
}
const goType = (v: unknown) =>
  typeof v === 'string'
    ? 'string'
    : typeof v === 'boolean'
      ? 'bool'
      : Array.isArray(v)
        ? '[]interface {}'
        : isMap(v)
          ? 'map[string]interface {}'
          : 'float64';

/**
 * The errors of an applied configuration against its schema (typed/validate.go): scalar types,
 * undeclared fields, list items without keys, duplicate keys. Messages are path-prefixed as
 * upstream prints them.
 */
export function validate(v: unknown, atom: Atom): string[] {
  const errs: string[] = [];
  const path: PathElement[] = [];
  const err = (msg: string) => errs.push(path.length ? `${pathString(path)}: ${msg}` : msg);
  const walk = (val: unknown, a: Atom): void => {
    const d = deduce(a, val);
    const f = facet(d);
    if (f === 'scalar') {
      if (val === null || val === undefined) return;
      const k = d.scalar!;
      const scalar = typeof val === 'number' || typeof val === 'string' || typeof val === 'boolean';
      if (k === 'numeric' && typeof val !== 'number')
        err(`expected numeric (int or float), got ${goType(val)}`);
      else if (k === 'string' && typeof val !== 'string')
        err(`expected string, got &value.valueUnstructured{Value:${goValue(val, true)}}`);
      else if (k === 'boolean' && typeof val !== 'boolean')
        err(`expected boolean, got &{${goValue(val, false)}}`);
      else if (k === 'untyped' && !scalar) err(`expected any scalar, got &{${goValue(val, false)}}`);
      return;
    }
    if (f === 'list') {
      if (val === null) return;
      if (!Array.isArray(val)) return void err(`expected list, got &{${goValue(val, false)}}`);
      const t = d.list!;
      const seen = new Set<string>();
      for (let i = 0; i < val.length; i++) {
        let pe: PathElement;
        if (t.atomic) pe = { t: 'i', index: i, s: `i:${i}` };
        else {
          try {
            pe = listItemPE(t, val[i]);
          } catch (e) {
            err(`element ${i}: ${(e as Error).message}`);
            return;
          }
          if (seen.has(pe.s)) err(`duplicate entries for key ${pathString([pe])}`);
          seen.add(pe.s);
        }
        path.push(pe);
        walk(val[i], t.elem());
        path.pop();
      }
      return;
    }
    if (val === null) return;
    if (!isMap(val)) return void err(`expected map, got &{${goValue(val, false)}}`);
    const t = d.map!;
    for (const [k, x] of Object.entries(val)) {
      if (x === undefined) continue;
      path.push(fieldPE(k));
      if (!t.fields.has(k) && !t.elem) {
        err('field not declared in schema');
        path.pop();
        return;
      }
      walk(x, fieldType(t, k));
      path.pop();
    }
  };
  walk(v, atom);
  return errs;
}

// ---------------------------------------------------------------------------------------------
// ToFieldSet

/** The set of fields a value sets (TypedValue.ToFieldSet). */
export function toFieldSet(v: unknown, atom: Atom): FieldSet {
  const out = new FieldSet();
  const path: PathElement[] = [];
  const walk = (val: unknown, a: Atom): void => {
    const d = deduce(a, val);
    const f = facet(d);
    // Scalars, atomic lists and atomic maps are leaves.
    if (f === 'scalar' || (f === 'list' ? d.list!.atomic : d.map!.atomic)) {
      out.insert(path);
      return;
    }
    if (f === 'list') {
      const t = d.list!;
      const list = listOf(val);
      if (!list) return;
      const seen = new Set<string>();
      const dup = new Map<string, PathElement>();
      const pes: (PathElement | undefined)[] = list.map((item) => {
        try {
          return listItemPE(t, item);
        } catch {
          return undefined;
        }
      });
      for (const pe of pes) {
        if (!pe) continue;
        if (seen.has(pe.s)) {
          if (!dup.has(pe.s)) {
            dup.set(pe.s, pe);
            out.insert([...path, pe]);
          }
        } else seen.add(pe.s);
      }
      list.forEach((item, i) => {
        const pe = pes[i];
        if (!pe || dup.has(pe.s)) return;
        path.push(pe);
        walk(item, t.elem());
        out.insert(path);
        path.pop();
      });
      return;
    }
    const t = d.map!;
    const m = mapOf(val);
    if (!m) return;
    for (const [k, x] of Object.entries(m)) {
      if (x === undefined) continue;
      path.push(fieldPE(k));
      walk(x, fieldType(t, k));
      if (x === null || (isMap(x) && Object.keys(x).length === 0) || !t.fields.has(k)) out.insert(path);
      path.pop();
    }
  };
  walk(v, atom);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Compare

export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

/** What differs between two values of one type (TypedValue.Compare). */
export function compare(lhs: unknown, rhs: unknown, atom: Atom): Comparison {
  const c: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  const path: PathElement[] = [];
  const errors: string[] = [];

  const walk = (l: unknown, r: unknown, a: Atom): void => {
    // The same (immutable, shared) value on both sides: nothing below it changed.
    if (l === r && l !== undefined) return;
    const al = deduce(a, l);
    const ar = deduce(a, r);
    const state = { inLeaf: false };
    if (r === undefined) handle(l, r, al, state);
    else if (l === undefined || facet(al) === facet(ar)) handle(l, r, ar, state);
    else {
      handle(l, r, al, { inLeaf: false });
      handle(l, r, ar, state);
    }
    if (!state.inLeaf) {
      if (l === undefined) c.added.insert(path);
      else if (r === undefined) c.removed.insert(path);
    }
  };

  const leaf = (l: unknown, r: unknown, state: { inLeaf: boolean }) => {
    if (state.inLeaf) return;
    state.inLeaf = true;
    if (l === undefined) c.added.insert(path);
    else if (r === undefined) c.removed.insert(path);
    else if (!deepEqual(l, r)) c.modified.insert(path);
  };

  const handle = (l: unknown, r: unknown, a: Atom, state: { inLeaf: boolean }) => {
    if (asLeaf(a, l, r)) return leaf(l, r, state);
    if (facet(a) === 'list') {
      const t = a.list!;
      const ll = listOf(l);
      const rl = listOf(r);
      const lv = new Map<string, { pe: PathElement; items: unknown[] }>();
      const rv = new Map<string, { pe: PathElement; items: unknown[] }>();
      const order: PathElement[] = [];
      const index = (list: unknown[] | undefined, into: typeof lv, other?: typeof lv) => {
        (list ?? []).forEach((item, i) => {
          let pe: PathElement;
          try {
            pe = listItemPE(t, item);
          } catch (e) {
            errors.push(`${pathString(path)}: element ${i}: ${(e as Error).message}`);
            return;
          }
          const got = into.get(pe.s);
          if (got) got.items.push(item);
          else {
            into.set(pe.s, { pe, items: [item] });
            if (!other?.has(pe.s)) order.push(pe);
          }
        });
      };
      index(ll, lv);
      index(rl, rv, lv);
      for (const pe of order) {
        const lItems = lv.get(pe.s)?.items ?? [];
        const rItems = rv.get(pe.s)?.items ?? [];
        path.push(pe);
        if (lItems.length <= 1 && rItems.length <= 1) walk(lItems[0], rItems[0], t.elem());
        else if (lItems.length >= 2 && rItems.length >= 2) {
          if (!deepEqual(lItems, rItems)) c.modified.insert(path);
        } else if (lItems.length >= 2) {
          if (rItems.length) walk(undefined, rItems[0], t.elem());
          c.removed.insert(path);
        } else {
          if (lItems.length) walk(lItems[0], undefined, t.elem());
          c.added.insert(path);
        }
        path.pop();
      }
      return;
    }
    const t = a.map!;
    const lm = mapOf(l);
    const rm = mapOf(r);
    // The keys of both sides, left's first; a value both share is skipped before its path
    // element is made (walk would return at once): a status map with an entry per machine
    // changes an entry or two a write.
    const field = (k: string): void => {
      const lx = lm?.[k];
      const rx = rm?.[k];
      if ((lx === undefined && rx === undefined) || lx === rx) return;
      path.push(fieldPE(k));
      walk(lx, rx, fieldType(t, k));
      path.pop();
    };
    if (lm) for (const k of Object.keys(lm)) field(k);
    if (rm) for (const k of Object.keys(rm)) if (!lm || !Object.hasOwn(lm, k)) field(k);
  };

  walk(lhs, rhs, atom);
  if (errors.length) throw new TypedError(errors.join('\n'));
  return c;
}

// ---------------------------------------------------------------------------------------------
// Merge

/** The configuration `rhs` merged into `lhs` (TypedValue.Merge with ruleKeepRHS). */
export function merge(lhs: unknown, rhs: unknown, atom: Atom): unknown {
  const path: PathElement[] = [];
  const walk = (l: unknown, r: unknown, a: Atom): unknown => {
    const al = deduce(a, l);
    const ar = deduce(a, r);
    const state = { inLeaf: false };
    if (r === undefined) return handle(l, r, al, state);
    if (l === undefined || facet(al) === facet(ar)) return handle(l, r, ar, state);
    handle(l, r, al, { inLeaf: false });
    return handle(l, r, ar, state);
  };
  const leaf = (l: unknown, r: unknown, state: { inLeaf: boolean }) => {
    state.inLeaf = true;
    return r !== undefined ? r : l;
  };
  const handle = (l: unknown, r: unknown, a: Atom, state: { inLeaf: boolean }): unknown => {
    if (asLeaf(a, l, r)) return leaf(l, r, state);
    if (facet(a) === 'list') return mergeList(a.list!, listOf(l) ?? [], listOf(r) ?? []);
    const t = a.map!;
    const lm = mapOf(l);
    const rm = mapOf(r);
    const out: Record<string, unknown> = {};
    for (const k of new Set([...Object.keys(lm ?? {}), ...Object.keys(rm ?? {})])) {
      const lx = lm?.[k];
      const rx = rm?.[k];
      if (lx === undefined && rx === undefined) continue;
      path.push(fieldPE(k));
      const m = walk(lx, rx, fieldType(t, k));
      path.pop();
      if (m !== undefined) out[k] = m;
    }
    return Object.keys(out).length > 0 ? out : undefined;
  };

  /** Associative lists keep the live order, with the applied items in the applied order (merge.go visitListItems). */
  const mergeList = (t: ListType, lhsList: unknown[], rhsList: unknown[]): unknown => {
    const index = (list: unknown[], allowDup: boolean) => {
      const pes: PathElement[] = [];
      const observed = new Map<string, unknown>();
      list.forEach((item, i) => {
        let pe: PathElement;
        try {
          pe = listItemPE(t, item);
        } catch (e) {
          throw new TypedError(`${pathString(path)}: element ${i}: ${(e as Error).message}`);
        }
        if (observed.has(pe.s)) {
          if (!allowDup)
            throw new TypedError(`${pathString(path)}: duplicate entries for key ${pathString([pe])}`);
          observed.set(pe.s, null);
        } else observed.set(pe.s, item);
        pes.push(pe);
      });
      return { pes, observed };
    };
    const R = index(rhsList, false);
    const L = index(lhsList, true);
    const out: unknown[] = [];
    const shared = R.pes.filter((pe) => L.observed.has(pe.s));
    let nextShared: PathElement | undefined = shared.shift();
    const merged = new Set<string>();
    const item = (pe: PathElement, l: unknown, r: unknown) => {
      path.push(pe);
      const m = walk(l, r, t.elem());
      path.pop();
      if (m !== undefined) out.push(m);
    };
    let lI = 0;
    let rI = 0;
    while (lI < L.pes.length || rI < R.pes.length) {
      if (lI < L.pes.length && rI < R.pes.length) {
        const pe = L.pes[lI]!;
        if (pe.s === R.pes[rI]!.s) {
          merged.add(pe.s);
          item(pe, L.observed.get(pe.s), R.observed.get(pe.s));
          lI++;
          rI++;
          nextShared = shared.shift();
          continue;
        }
        if (R.observed.has(pe.s) && nextShared && nextShared.s !== pe.s) {
          lI++;
          continue;
        }
      }
      if (lI < L.pes.length) {
        const pe = L.pes[lI]!;
        if (!R.observed.has(pe.s)) {
          item(pe, lhsList[lI], undefined);
          lI++;
          continue;
        }
        if (merged.has(pe.s)) lI++;
      }
      if (rI < R.pes.length) {
        const pe = R.pes[rI]!;
        merged.add(pe.s);
        item(pe, L.observed.get(pe.s), R.observed.get(pe.s));
        rI++;
        if (nextShared && nextShared.s === pe.s) nextShared = shared.shift();
      }
    }
    return out.length > 0 ? out : undefined;
  };
  return walk(lhs, rhs, atom);
}

// ---------------------------------------------------------------------------------------------
// RemoveItems

/** The value without the fields of `toRemove` (TypedValue.RemoveItems); emptied containers become null, as upstream. */
export function removeItems(v: unknown, toRemove: FieldSet, atom: Atom): unknown {
  const d = deduce(atom, v);
  const f = facet(d);
  if (f === 'scalar') return v;
  if (f === 'list') {
    const t = d.list!;
    const list = listOf(v);
    if (!list) return undefined;
    if (list.length === 0 || t.atomic) return null;
    const out: unknown[] = [];
    for (const item of list) {
      let pe: PathElement;
      try {
        pe = listItemPE(t, item);
      } catch {
        out.push(item);
        continue;
      }
      if (toRemove.has([pe])) continue;
      const sub = toRemove.withPrefix(pe);
      out.push(sub.empty() ? item : removeItems(item, sub, t.elem()));
    }
    return out.length > 0 ? out : null;
  }
  const t = d.map!;
  const m = mapOf(v);
  if (!m) return undefined;
  if (Object.keys(m).length === 0 || t.atomic) return null;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(m)) {
    if (x === undefined) continue;
    const pe = fieldPE(k);
    if (toRemove.has([pe])) continue;
    const sub = toRemove.withPrefix(pe);
    const nv = sub.empty() ? x : removeItems(x, sub, fieldType(t, k));
    out[k] = nv === undefined ? null : nv;
  }
  return Object.keys(out).length > 0 ? out : null;
}

/** Adds each named (struct) field that has children as a member too (Set.EnsureNamedFieldsAreMembers). */
export function ensureNamedFieldsAreMembers(s: FieldSet, atom: Atom): FieldSet {
  const out = new FieldSet();
  for (const [k, pe] of s.members) out.members.set(k, pe);
  const map = atom.map;
  for (const [k, c] of s.children) {
    let sub: Atom = {};
    if (c.pe.t === 'f' && map) {
      sub = fieldType(map, c.pe.name);
      if (map.fields.has(c.pe.name)) out.members.set(k, c.pe);
    } else if (c.pe.t === 'k' && atom.list) sub = atom.list.elem();
    out.children.set(k, { pe: c.pe, set: ensureNamedFieldsAreMembers(c.set, sub) });
  }
  return out;
}

export type { Path };
