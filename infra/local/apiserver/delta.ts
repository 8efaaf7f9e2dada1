/**
 * Deltas between versions of a stored object, so the history window can keep an old version of a
 * large object as what its successor changed instead of as a whole object (history.ts). Stored
 * versions share every subtree a write did not change (share.ts), but a write to a map with an
 * entry per machine still makes a new map: a version costs O(fleet), and the window held
 * O(fleet²). A delta costs what the write changed.
 *
 * `diff(base, target)` describes `target` in terms of `base`; `applyDeltas(base, [d1, d2, …])`
 * rebuilds the value, copying only the containers a delta touches (unchanged subtrees stay the
 * stored, frozen ones) and freezing what it made. The values a delta carries are subtrees of the
 * stored objects themselves (frozen), never copies.
 */

/** A key the target does not have. */
const ABSENT: unique symbol = Symbol('absent');

export type Delta =
  /** The value itself. */
  | { v: unknown }
  /** An object: the keys that differ (ABSENT: removed); other keys are the base's. */
  | { o: Map<string, Delta | typeof ABSENT> }
  /** An array, item by item: a number is the base's item at that index, unchanged. */
  | { a: (number | { v: unknown } | { i: number; d: Delta })[] };

const isObject = (x: unknown): x is Record<string, unknown> =>
  x !== null && typeof x === 'object' && !Array.isArray(x);

/** What turns `base` into `target`; undefined when they are the same value. */
export function diff(base: unknown, target: unknown): Delta | undefined {
  if (base === target) return undefined;
  if (isObject(base) && isObject(target)) {
    const changes = new Map<string, Delta | typeof ABSENT>();
    for (const k of Object.keys(target)) {
      if (!Object.hasOwn(base, k)) changes.set(k, { v: target[k] });
      else {
        const d = diff(base[k], target[k]);
        if (d) changes.set(k, d);
      }
    }
    for (const k of Object.keys(base)) if (!Object.hasOwn(target, k)) changes.set(k, ABSENT);
    return changes.size ? { o: changes } : undefined;
  }
  if (Array.isArray(base) && Array.isArray(target)) return diffArray(base, target);
  return { v: target };
}

/**
 * Items are matched by identity first (a reordered list, such as managedFields sorted by time,
 * keeps its unchanged entries), then an object item by the base's item at the same index, else
 * the first base item no other item took (the entry a write changed).
 */
function diffArray(base: unknown[], target: unknown[]): Delta | undefined {
  const at = new Map<unknown, number>();
  base.forEach((x, i) => {
    if (x !== null && typeof x === 'object' && !at.has(x)) at.set(x, i);
  });
  const used = new Set<number>();
  const items: (number | { v: unknown } | { i: number; d: Delta } | undefined)[] = target.map((x, i) => {
    const j = x !== null && typeof x === 'object' ? at.get(x) : base[i] === x ? i : undefined;
    if (j === undefined || used.has(j)) return undefined;
    used.add(j);
    return j;
  });
  let free = 0;
  for (let i = 0; i < target.length; i++) {
    if (items[i] !== undefined) continue;
    const x = target[i];
    if (x === null || typeof x !== 'object') {
      items[i] = { v: x };
      continue;
    }
    let j = i < base.length && !used.has(i) ? i : -1;
    if (j < 0) {
      while (free < base.length && used.has(free)) free++;
      j = free < base.length ? free : -1;
    }
    const b = j >= 0 ? base[j] : undefined;
    if (j < 0 || b === null || typeof b !== 'object') {
      items[i] = { v: x };
      continue;
    }
    used.add(j);
    const d = diff(b, x);
    items[i] = d ? { i: j, d } : j;
  }
  const same = base.length === target.length && items.every((it, i) => it === i);
  return same ? undefined : { a: items as (number | { v: unknown } | { i: number; d: Delta })[] };
}

/** `base` with each delta applied in turn (each describes the next value in terms of the one before). */
export function applyDeltas(base: unknown, deltas: readonly Delta[]): unknown {
  // Containers made here may be changed in place by later deltas; the stored ones never are.
  const made = new Set<object>();
  let v = base;
  for (const d of deltas) v = applyOne(v, d, made);
  for (const o of made) Object.freeze(o);
  return v;
}

function applyOne(cur: unknown, d: Delta, made: Set<object>): unknown {
  if ('v' in d) return d.v;
  if ('o' in d) {
    let t = cur as Record<string, unknown>;
    if (!made.has(t)) {
      t = { ...t };
      made.add(t);
    }
    for (const [k, sub] of d.o) {
      if (sub === ABSENT) delete t[k];
      // A JSON key "__proto__" is an own property, never the prototype.
      else
        Object.defineProperty(t, k, {
          value: applyOne(t[k], sub, made),
          writable: true,
          enumerable: true,
          configurable: true,
        });
    }
    return t;
  }
  const src = cur as unknown[];
  const out = d.a.map((it) =>
    typeof it === 'number' ? src[it] : 'v' in it ? it.v : applyOne(src[it.i], it.d, made),
  );
  made.add(out);
  return out;
}

/**
 * Estimated heap bytes a delta holds: its own containers, plus the values it carries counted
 * whole (they are subtrees of an older version, held now only by the delta). Same layout
 * model as share.ts unsharedBytes.
 */
export function deltaBytes(d: Delta, sizeOf: (v: unknown) => number): number {
  if ('v' in d) return 16 + sizeOf(d.v);
  if ('o' in d) {
    let n = 64 + 48 * d.o.size;
    for (const sub of d.o.values()) if (sub !== ABSENT) n += deltaBytes(sub, sizeOf);
    return n;
  }
  let n = 32 + 8 * d.a.length;
  for (const it of d.a)
    if (typeof it !== 'number') n += 'v' in it ? 16 + sizeOf(it.v) : 32 + deltaBytes(it.d, sizeOf);
  return n;
}
