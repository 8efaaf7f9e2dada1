/** RFC 6902 JSON patch operations as our writes send them (`client.patch(..., 'json')`). */
export type JsonPatchOp =
  | { op: 'test'; path: string; value: unknown }
  | { op: 'add' | 'replace'; path: string; value: unknown }
  | { op: 'remove'; path: string };

/** A JSON pointer (RFC 6901) to the member named by `segments` ('~' and '/' escaped). */
export const jsonPointer = (...segments: string[]): string =>
  segments.map((s) => `/${s.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
