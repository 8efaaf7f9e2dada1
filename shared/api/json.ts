/** Narrowing of parsed JSON (`unknown`) by looking at it, never by assertion. */

/** A JSON object (not an array, not null): any object can be read key by key. */
export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** `v` when it is a JSON object, else an empty one (for reading optional nested fields). */
export const recordOf = (v: unknown): Record<string, unknown> => (isRecord(v) ? v : {});

/** `v` when it is a string, else undefined. */
export const stringOf = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The elements of a JSON array (none when `v` is not one). */
export const listOf = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/**
 * Whether two JSON values say the same: objects compare key by key whatever the order of their keys
 * (a writer that sends a parsed object may reorder them, and the API server stores what it is
 * sent), a key whose value is undefined counts as absent, and undefined elsewhere as null (as
 * JSON.stringify writes them); arrays compare in order.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return (a ?? null) === (b ?? null);
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (!isRecord(a) || !isRecord(b)) return false;
  let count = 0;
  for (const k in a) {
    if (!Object.hasOwn(a, k) || a[k] === undefined) continue;
    count++;
    if (!Object.hasOwn(b, k) || !jsonEqual(a[k], b[k])) return false;
  }
  for (const k in b) if (Object.hasOwn(b, k) && b[k] !== undefined) count--;
  return count === 0;
}

/** The value at `path` in nested JSON objects (undefined where a step is missing or no object). */
export function fieldOf(v: unknown, ...path: string[]): unknown {
  let at = v;
  for (const key of path) at = recordOf(at)[key];
  return at;
}

/** The message of anything thrown (an Error's, else its text). */
export const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));
