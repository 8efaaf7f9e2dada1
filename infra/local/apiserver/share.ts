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
