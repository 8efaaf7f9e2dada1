/**
 * Structural sharing between versions of an object: stored objects are frozen and immutable, so
 * a new version can reuse every subtree it did not change. The history window then costs only
 * what writes really changed (a status update does not copy the spec), and "did anything
 * change?" is answered by the same walk.
 */

/**
 * `next` with each subtree that equals `prev`'s at the same place replaced by `prev`'s; `prev`
 * itself when they are equal (key order ignored, as for JSON equality). `next` must be a fresh,
 * unfrozen value: it is updated in place.
 */
export function share<T>(next: T, prev: unknown): T {
  if (next === prev) return next;
  if (next === null || prev === null || typeof next !== 'object' || typeof prev !== 'object') return next;
  if (Array.isArray(next)) {
    if (!Array.isArray(prev)) return next;
    let same = next.length === prev.length;
    for (let i = 0; i < next.length; i++) {
      if (i >= prev.length) break;
      const s = share(next[i], prev[i]);
      if (s !== prev[i]) same = false;
      if (s !== next[i] && !Object.isFrozen(next)) next[i] = s;
    }
    return (same ? prev : next) as T;
  }
  if (Array.isArray(prev)) return next;
  const n = next as Record<string, unknown>;
  const p = prev as Record<string, unknown>;
  const keys = Object.keys(n);
  let same = keys.length === Object.keys(p).length;
  const frozen = Object.isFrozen(n);
  for (const k of keys) {
    if (!Object.hasOwn(p, k)) {
      same = false;
      continue;
    }
    const s = share(n[k], p[k]);
    if (s !== p[k]) same = false;
    if (s !== n[k] && !frozen) n[k] = s;
  }
  return (same ? prev : next) as T;
}

/**
 * Estimated heap bytes `next` holds that `prev` does not: the walk stops at every subtree `next`
 * shares with `prev` at the same place (share() made them the same object), so it costs what the
 * write changed plus the keys of the containers it changed, not a serialization. A rough V8 layout:
 * an object's header and a slot per property (keys are interned, so shared), where an object with
 * many properties is a hash table (3 words an entry, at most half full: ~48 bytes a property, as
 * measured for maps with an entry per machine), an array's slots, a string's characters; small
 * numbers and booleans live in their slot.
 */
export function unsharedBytes(next: unknown, prev: unknown): number {
  if (next === prev) return 0;
  if (typeof next === 'string') return 16 + next.length;
  if (next === null || typeof next !== 'object') return 0;
  const p = prev !== null && typeof prev === 'object' ? (prev as Record<string, unknown>) : undefined;
  if (Array.isArray(next)) {
    let n = 16 + 8 * next.length;
    const pa = Array.isArray(p) ? p : undefined;
    for (let i = 0; i < next.length; i++) n += unsharedBytes(next[i], pa?.[i]);
    return n;
  }
  const o = next as Record<string, unknown>;
  const pm = p && !Array.isArray(p) ? p : undefined;
  let n = 32;
  let props = 0;
  for (const k in o) {
    props++;
    n += unsharedBytes(o[k], pm && Object.hasOwn(pm, k) ? pm[k] : undefined);
  }
  return n + props * (props > 64 ? 48 : 16);
}

/** Strings up to this long are interned (names of kinds, groups, namespaces, managers, labels, reasons). */
export const INTERN_MAX_LENGTH = 64;
/** Most strings the intern table holds; it starts over when full (see intern). */
export const MAX_INTERNED = 100_000;
const interned = new Map<string, string>();

/**
 * One copy of a short string for every stored object that holds it. Across a fleet's objects
 * most string values repeat (an apiVersion in every object and owner reference, the namespace,
 * the manager of every managedFields entry, label values, condition reasons): JSON.parse gives
 * each its own copy, which were half of the stored strings' bytes at 10,000 machines
 * (docs/benchmarks.md, "fleet-memory"). Values that never repeat (uids, timestamps) pass through
 * too; the table is bounded by starting over when full, so a string repeated across objects
 * keeps one copy per generation of the table, not one per object.
 */
export function intern(s: string): string {
  if (s.length > INTERN_MAX_LENGTH) return s;
  const c = interned.get(s);
  if (c !== undefined) return c;
  if (interned.size >= MAX_INTERNED) interned.clear();
  interned.set(s, s);
  return s;
}
