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

/** The value at `path` in nested JSON objects (undefined where a step is missing or no object). */
export function fieldOf(v: unknown, ...path: string[]): unknown {
  let at = v;
  for (const key of path) at = recordOf(at)[key];
  return at;
}

/** The message of anything thrown (an Error's, else its text). */
export const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));
