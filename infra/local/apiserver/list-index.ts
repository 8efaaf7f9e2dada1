/**
 * Indexes a list with a selector reads through instead of testing every object of the resource
 * (a scan per request grew with the fleet): label values, labels required absent, and field
 * values of the selectable fields clients ask for. The selector is still tested on each object
 * read (rest.ts): an index only narrows which objects are read.
 */
import { fieldValue } from './fields.ts';
import { SortedKeys } from './sorted-keys.ts';

/** A selector term an index can answer. */
export type Narrowing =
  /** `label in (values)` (`=` is one value). */
  | { label: string; values: string[] }
  /** `!label`. */
  | { label: string; absent: true }
  /** `field=value`. */
  | { field: string; value: string }
  /** `field!=value`. */
  | { field: string; except: string };

/** Keys of the objects a narrowing selects, in order. */
export interface KeySet {
  readonly size: number;
  from(start: string, prefix: string): Iterable<string>;
}

/** Most lazily built indexes per resource (`!label`s and fields): any client may ask for any, each holds a key per object. */
const LAZY_INDEXES = 16;
/** A `field!=value` is read through the other values' sets only when there are this few. */
const EXCEPT_VALUES = 8;

export class ListIndex {
  private readonly labelValues = new Map<string, SortedKeys>();
  private readonly absent = new Map<string, SortedKeys>();
  private readonly fields = new Map<string, Map<string, SortedKeys>>();

  /** Indexes (`add`) or unindexes one state of the object stored at `key`. */
  update(key: string, obj: any, add: boolean): void {
    const labels: Record<string, string> | undefined = obj.metadata.labels;
    for (const [k, v] of Object.entries(labels ?? {})) edit(this.labelValues, `${k}=${v}`, key, add);
    for (const [k, keys] of this.absent) {
      if (labels && Object.hasOwn(labels, k)) continue;
      if (add) keys.add(key);
      else keys.delete(key);
    }
    for (const [field, byValue] of this.fields) edit(byValue, fieldValue(obj, field), key, add);
  }

  /**
   * The keys `n` selects, building a lazy index from `objects` on first use; undefined when it
   * has no index (too many already, or a `!=` over too many values): the caller scans.
   */
  keys(n: Narrowing, objects: Map<string, any>): KeySet | undefined {
    if ('label' in n) {
      if ('absent' in n) return this.lazy(this.absent, n.label, objects, (o) => absentSet(o, n.label));
      return union(n.values.map((v) => this.labelValues.get(`${n.label}=${v}`)));
    }
    const byValue = this.lazy(this.fields, n.field, objects, (o) => valueSets(o, n.field));
    if (!byValue) return undefined;
    if ('value' in n) return union([byValue.get(n.value)]);
    if (byValue.size > EXCEPT_VALUES + 1) return undefined;
    return union([...byValue].filter(([v]) => v !== n.except).map(([, keys]) => keys));
  }

  private lazy<T>(
    built: Map<string, T>,
    name: string,
    objects: Map<string, any>,
    build: (objects: Map<string, any>) => T,
  ): T | undefined {
    let index = built.get(name);
    if (index === undefined) {
      if (this.absent.size + this.fields.size >= LAZY_INDEXES) return undefined;
      index = build(objects);
      built.set(name, index);
    }
    return index;
  }
}

function edit(sets: Map<string, SortedKeys>, value: string, key: string, add: boolean): void {
  let keys = sets.get(value);
  if (add) {
    if (!keys) {
      keys = new SortedKeys();
      sets.set(value, keys);
    }
    keys.add(key);
  } else if (keys) {
    keys.delete(key);
    if (keys.size === 0) sets.delete(value);
  }
}

function absentSet(objects: Map<string, any>, label: string): SortedKeys {
  const keys = new SortedKeys();
  for (const [k, o] of objects) if (!Object.hasOwn(o.metadata.labels ?? {}, label)) keys.add(k);
  return keys;
}

function valueSets(objects: Map<string, any>, field: string): Map<string, SortedKeys> {
  const byValue = new Map<string, SortedKeys>();
  for (const [k, o] of objects) edit(byValue, fieldValue(o, field), k, true);
  return byValue;
}

/** The union of disjoint sets (an object has one value per label or field), in key order. */
function union(sets: (SortedKeys | undefined)[]): KeySet {
  const present = [...new Set(sets.filter((s): s is SortedKeys => s !== undefined))];
  return {
    size: present.reduce((n, s) => n + s.size, 0),
    from(start, prefix) {
      if (present.length === 1) return present[0]!.from(start, prefix);
      const keys: string[] = [];
      for (const s of present) for (const k of s.from(start, prefix)) keys.push(k);
      return keys.sort();
    },
  };
}
