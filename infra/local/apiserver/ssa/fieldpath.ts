/**
 * Field sets as sigs.k8s.io/structured-merge-diff's fieldpath package defines them: trees of path
 * elements (a field name, the key fields of an associative-list item, a set item's value, a list
 * index), each node either a member (the path itself is in the set) or only a parent. Serialized
 * to `fieldsV1` exactly as upstream (fieldpath/serialize.go): `f:<name>`, `k:<json of key fields,
 * sorted by name>`, `v:<json value>`, `i:<index>`, and `.` for a member that also has children;
 * elements in PathElement.Compare order.
 */

import { LruCache } from '../lru.ts';
import { deepEqual } from '../patch.ts';

export type PathElement =
  | { readonly t: 'f'; readonly name: string; readonly s: string }
  | { readonly t: 'k'; readonly fields: readonly (readonly [string, unknown])[]; readonly s: string }
  | { readonly t: 'v'; readonly value: unknown; readonly s: string }
  | { readonly t: 'i'; readonly index: number; readonly s: string };

export type Path = readonly PathElement[];

/** JSON as Go's encoding (jsoniter, standard-library compatible) writes it: HTML characters escaped. */
export function goJson(v: unknown): string {
  return JSON.stringify(v).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

const fieldCache = new Map<string, PathElement>();

export function fieldPE(name: string): PathElement {
  let pe = fieldCache.get(name);
  if (!pe) {
    pe = { t: 'f', name, s: `f:${name}` };
    if (fieldCache.size < 10_000) fieldCache.set(name, pe);
  }
  return pe;
}

export function keyPE(fields: [string, unknown][]): PathElement {
  fields.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const body = fields.map(([k, v]) => `${goJson(k)}:${goJson(v)}`).join(',');
  return { t: 'k', fields, s: `k:{${body}}` };
}

export const valuePE = (value: unknown): PathElement => ({ t: 'v', value, s: `v:${goJson(value)}` });

export const indexPE = (index: number): PathElement => ({ t: 'i', index, s: `i:${index}` });

/** Parses one fieldsV1 key; undefined for an unknown element type (skipped, as upstream does). */
export function parsePE(key: string): PathElement | undefined {
  if (key.length < 2 || key[1] !== ':') throw new Error(`key must be 2 characters long: ${key}`);
  const rest = key.slice(2);
  switch (key[0]) {
    case 'f':
      return fieldPE(rest);
    case 'v':
      return valuePE(JSON.parse(rest));
    case 'k': {
      const obj = JSON.parse(rest);
      if (!obj || typeof obj !== 'object' || Array.isArray(obj)) throw new Error(`invalid key: ${key}`);
      return keyPE(Object.entries(obj));
    }
    case 'i': {
      if (!/^-?\d+$/.test(rest)) throw new Error(`invalid index: ${key}`);
      return indexPE(Number(rest));
    }
    default:
      return undefined;
  }
}

const RANK = { f: 0, k: 1, v: 2, i: 3 } as const;

/** The total order of structured-merge-diff's value.Compare: numbers, strings, bools, lists, maps, null. */
export function compareValues(a: unknown, b: unknown): number {
  const rank = (v: unknown) =>
    typeof v === 'number'
      ? 0
      : typeof v === 'string'
        ? 1
        : typeof v === 'boolean'
          ? 2
          : Array.isArray(v)
            ? 3
            : v !== null && typeof v === 'object'
              ? 4
              : 5;
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 0:
      return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
    case 1:
      return (a as string) < (b as string) ? -1 : (a as string) > (b as string) ? 1 : 0;
    case 2:
      return a === b ? 0 : a ? 1 : -1;
    case 3: {
      const la = a as unknown[];
      const lb = b as unknown[];
      for (let i = 0; i < Math.min(la.length, lb.length); i++) {
        const c = compareValues(la[i], lb[i]);
        if (c !== 0) return c;
      }
      return la.length - lb.length < 0 ? -1 : la.length > lb.length ? 1 : 0;
    }
    case 4: {
      const ka = Object.keys(a as object).sort();
      const kb = Object.keys(b as object).sort();
      for (let i = 0; i < Math.min(ka.length, kb.length); i++) {
        if (ka[i] !== kb[i]) return ka[i]! < kb[i]! ? -1 : 1;
        const c = compareValues((a as any)[ka[i]!], (b as any)[kb[i]!]);
        if (c !== 0) return c;
      }
      return ka.length < kb.length ? -1 : ka.length > kb.length ? 1 : 0;
    }
    default:
      return 0;
  }
}

/** PathElement.Compare: field names, then keys, then values, then indexes. */
export function comparePE(a: PathElement, b: PathElement): number {
  if (a.t !== b.t) return RANK[a.t] < RANK[b.t] ? -1 : 1;
  switch (a.t) {
    case 'f': {
      const bn = (b as typeof a).name;
      return a.name < bn ? -1 : a.name > bn ? 1 : 0;
    }
    case 'k': {
      const bf = (b as typeof a).fields;
      for (let i = 0; i < Math.min(a.fields.length, bf.length); i++) {
        const [an, av] = a.fields[i]!;
        const [bn, bv] = bf[i]!;
        if (an !== bn) return an < bn ? -1 : 1;
        const c = compareValues(av, bv);
        if (c !== 0) return c;
      }
      return a.fields.length < bf.length ? -1 : a.fields.length > bf.length ? 1 : 0;
    }
    case 'v':
      return compareValues(a.value, (b as typeof a).value);
    default: {
      const bi = (b as typeof a).index;
      return a.index < bi ? -1 : a.index > bi ? 1 : 0;
    }
  }
}

/** Go's %v of a value in a path string (value.ToString). */
function valueString(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(valueString).join(',')}]`;
  if (typeof v === 'object')
    return Object.entries(v)
      .map(([k, x]) => `${k}=${valueString(x)}`)
      .join('');
  return String(v);
}

/** A path as upstream prints it in conflicts: `.spec.ports[port=80,protocol="TCP"].name`, `.finalizers[="x"]`. */
export function pathString(p: Path): string {
  return p
    .map((pe) => {
      switch (pe.t) {
        case 'f':
          return `.${pe.name}`;
        case 'k':
          return `[${pe.fields.map(([k, v]) => `${k}=${valueString(v)}`).join(',')}]`;
        case 'v':
          return `[=${valueString(pe.value)}]`;
        default:
          return `[${pe.index}]`;
      }
    })
    .join('');
}

export const peEquals = (a: PathElement, b: PathElement): boolean =>
  a.s === b.s || (a.t === 'v' && b.t === 'v' && deepEqual(a.value, b.value));

/** A set of paths: a tree whose nodes are members, parents, or both. Immutable once built by the operations below. */
export class FieldSet {
  /** Direct members: the paths <this node>.<pe>. */
  readonly members = new Map<string, PathElement>();
  /** Children with members below them. */
  readonly children = new Map<string, { pe: PathElement; set: FieldSet }>();
  /** fieldsV1 of this node, without and with "." (sets are immutable once built: the operations make new ones). */
  private json: [Record<string, unknown> | undefined, Record<string, unknown> | undefined] = [
    undefined,
    undefined,
  ];

  static of(...paths: Path[]): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.insert(p);
    return s;
  }

  empty(): boolean {
    return this.members.size === 0 && this.children.size === 0;
  }

  insert(p: Path): void {
    if (p.length === 0) return;
    this.json = [undefined, undefined];
    let node: FieldSet = this;
    for (let i = 0; i < p.length - 1; i++) node = node.descend(p[i]!);
    const last = p[p.length - 1]!;
    node.members.set(last.s, last);
  }

  /** The child set under `pe`, created if missing. */
  descend(pe: PathElement): FieldSet {
    this.json = [undefined, undefined];
    let c = this.children.get(pe.s);
    if (!c) {
      c = { pe, set: new FieldSet() };
      this.children.set(pe.s, c);
    }
    return c.set;
  }

  has(p: Path): boolean {
    if (p.length === 0) return false;
    let node: FieldSet | undefined = this;
    for (let i = 0; i < p.length - 1; i++) {
      node = node.children.get(p[i]!.s)?.set;
      if (!node) return false;
    }
    return node.members.has(p[p.length - 1]!.s);
  }

  /** The paths below `pe`, relative to it. */
  withPrefix(pe: PathElement): FieldSet {
    return this.children.get(pe.s)?.set ?? EMPTY;
  }

  union(o: FieldSet): FieldSet {
    if (o.empty()) return this;
    if (this.empty()) return o;
    // Copied with forEach, which makes no entry arrays (a set of a map with an entry per machine
    // has ~10,000 members).
    const out = new FieldSet();
    const m = out.members;
    this.members.forEach((pe, k) => {
      m.set(k, pe);
    });
    o.members.forEach((pe, k) => {
      m.set(k, pe);
    });
    this.children.forEach((c, k) => {
      out.children.set(k, c);
    });
    for (const [k, c] of o.children) {
      const mine = out.children.get(k);
      out.children.set(k, mine ? { pe: c.pe, set: mine.set.union(c.set) } : c);
    }
    return out;
  }

  intersection(o: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [k, pe] of this.members) if (o.members.has(k)) out.members.set(k, pe);
    for (const [k, c] of this.children) {
      const theirs = o.children.get(k);
      if (!theirs) continue;
      const r = c.set.intersection(theirs.set);
      if (!r.empty()) out.children.set(k, { pe: c.pe, set: r });
    }
    return out;
  }

  /** Paths of this set not in `o` (a member of `o` does not remove the paths below it). */
  difference(o: FieldSet): FieldSet {
    return this.diff(o, false);
  }

  /** Like difference, but a member of `o` also removes every path below it. */
  recursiveDifference(o: FieldSet): FieldSet {
    return this.diff(o, true);
  }

  private diff(o: FieldSet, recursive: boolean): FieldSet {
    if (o.empty() || this.empty()) return this;
    const out = new FieldSet();
    // forEach: no entry arrays (see union).
    this.members.forEach((pe, k) => {
      if (!o.members.has(k)) out.members.set(k, pe);
    });
    for (const [k, c] of this.children) {
      if (recursive && o.members.has(k)) continue;
      const theirs = o.children.get(k);
      if (!theirs) out.children.set(k, c);
      else {
        const d = c.set.diff(theirs.set, recursive);
        if (!d.empty()) out.children.set(k, { pe: c.pe, set: d });
      }
    }
    return out;
  }

  /** Every member path, in order. */
  iterate(f: (p: Path) => void, prefix: PathElement[] = []): void {
    for (const pe of this.sortedElements()) {
      prefix.push(pe);
      if (this.members.has(pe.s)) f([...prefix]);
      this.children.get(pe.s)?.set.iterate(f, prefix);
      prefix.pop();
    }
  }

  /**
   * The elements directly below this node, members and parents (a member that is also a parent
   * once), in PathElement.Compare order; equal ones in the order members, then parents, were added.
   */
  private sortedElements(): PathElement[] {
    const pes = [...this.members.values()];
    for (const [k, c] of this.children) if (!this.members.has(k)) pes.push(c.pe);
    return pes.sort(comparePE);
  }

  equals(o: FieldSet): boolean {
    return goJson(this.toJSON()) === goJson(o.toJSON());
  }

  /** The fieldsV1 object (serialize.go emitContentsV1). */
  toJSON(): Record<string, unknown> {
    const j = this.emit(false);
    parsed.set(j, this);
    return j;
  }

  private emit(includeSelf: boolean): Record<string, unknown> {
    const i = includeSelf ? 1 : 0;
    const cached = this.json[i];
    if (cached) return cached;
    const out: Record<string, unknown> = {};
    if (includeSelf && !this.empty()) out['.'] = LEAF;
    for (const pe of this.sortedElements()) {
      const child = this.children.get(pe.s);
      out[pe.s] = child ? child.set.emit(this.members.has(pe.s)) : LEAF;
    }
    const shared = canonicalTree(out);
    this.json[i] = shared;
    return shared;
  }

  /** Parses a fieldsV1 object (serialize.go readIterV1); throws on a malformed one. */
  static fromJSON(v: unknown): FieldSet {
    if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('fieldsV1 must be a JSON object');
    // Stored fieldsV1 objects are frozen and shared between versions: parsed once while in use.
    let s = parsed.get(v);
    if (!s) {
      s = FieldSet.read(v as Record<string, unknown>).children ?? new FieldSet();
      parsed.set(v, s);
    }
    return s;
  }

  private static read(obj: Record<string, unknown>): { children?: FieldSet; member: boolean } {
    let children: FieldSet | undefined;
    let member = false;
    for (const [key, val] of Object.entries(obj)) {
      if (key === '.') {
        member = true;
        continue;
      }
      const pe = parsePE(key);
      if (!pe) continue;
      if (!val || typeof val !== 'object' || Array.isArray(val))
        throw new Error(`fieldsV1 entry ${key} must be an object`);
      const sub = FieldSet.read(val as Record<string, unknown>);
      children ??= new FieldSet();
      if (sub.member) children.members.set(pe.s, pe);
      if (sub.children) children.children.set(pe.s, { pe, set: sub.children });
    }
    return children ? { children, member } : { member: true };
  }
}

const EMPTY = new FieldSet();
/**
 * Every `{}` of an emitted fieldsV1 (a member, and "."): one frozen object. Most of a fieldsV1
 * tree is these leaves, and a fresh one each cost more than the key naming it; managedFields were
 * the largest part of the server's heap at 10,000 machines (docs/benchmarks.md, "Fleet end state").
 * Stored objects are frozen and shared anyway (store.ts), so nothing writes to it.
 */
const LEAF: Record<string, unknown> = Object.freeze({});

/** Ids of the canonical trees (children are made canonical before their parent: a parent's key is its children's ids). */
const treeIds = new WeakMap<object, number>([[LEAF, 0]]);
let nextTreeId = 1;
/** A tree with more keys than this is kept as it is (a status map with an entry per machine: unique). */
const CANONICAL_MAX_KEYS = 32;
/** Most trees the table holds; it starts over when full, as share.ts intern does. */
const MAX_CANONICAL_TREES = 50_000;
const canonicalTrees = new Map<string, Record<string, unknown>>();

/**
 * One frozen instance of each emitted fieldsV1 tree, across objects: the objects of a kind written
 * by the same manager own the same fields, so their trees are equal but for the few keys naming
 * something of their own (an owner reference's uid): those parents differ, their subtrees are
 * shared. Emitted bottom-up, so a tree's key is its keys and its children's ids, not its text.
 */
function canonicalTree(out: Record<string, unknown>): Record<string, unknown> {
  Object.freeze(out);
  const keys = Object.keys(out);
  if (keys.length > CANONICAL_MAX_KEYS) return out;
  let key = '';
  for (const k of keys) {
    const id = treeIds.get(out[k] as object);
    // A child that is not shared (too large): neither is this tree, nor is it kept in the table.
    if (id === undefined) return out;
    key += `${k}\u0000${id}\u0001`;
  }
  const c = canonicalTrees.get(key);
  if (c) return c;
  if (canonicalTrees.size >= MAX_CANONICAL_TREES) canonicalTrees.clear();
  canonicalTrees.set(key, out);
  treeIds.set(out, nextTreeId++);
  return out;
}
/** Path elements in a set, all the way down (sets are immutable, and share subsets: memoized). */
const weights = new WeakMap<FieldSet, number>();
function weight(s: FieldSet): number {
  let w = weights.get(s);
  if (w === undefined) {
    w = s.members.size;
    for (const { set } of s.children.values()) w += 1 + weight(set);
    weights.set(s, w);
  }
  return w;
}

/** Most path elements the parsed sets kept may hold together (~30 MB). */
export const MAX_PARSED_ELEMENTS = 100_000;
/**
 * The largest set kept (path elements): a node with more members holds a Map larger than V8's
 * largest regular object (lru.ts LruCache), the status maps' sets at ~4,600 entries.
 */
export const LARGEST_PARSED_SET = 4096;
/**
 * fieldsV1 object → its parsed set, for the objects updated lately (a stored fieldsV1 is frozen and
 * shared between versions). Bounded: kept for every version in the history window, the parsed sets
 * were a fifth of the server's live heap during a scale-down. Bounded by path elements, not by
 * count: a set of an object with an entry per machine grows with the fleet, and 10,000 of them
 * (the count bound it had) would have held O(fleet²).
 */
const parsed = new LruCache<FieldSet>(MAX_PARSED_ELEMENTS, weight, LARGEST_PARSED_SET);

/**
 * Drops the parsed set of a fieldsV1 object that a write replaced: only live managedFields are
 * decoded (a request's own are parsed from its text), so a superseded version's set only takes the
 * room of live ones. Kept, the three ~20,000-element sets of the map objects' superseded versions
 * evicted their live ones, and every map write parsed its ~330 KB fieldsV1 again (~7 MB of
 * allocation a write). Trees shared across objects (canonicalTree) may be live elsewhere: kept.
 */
export function forgetParsed(fieldsV1: unknown): void {
  if (fieldsV1 && typeof fieldsV1 === 'object' && !treeIds.has(fieldsV1)) parsed.delete(fieldsV1);
}
