import { z } from 'zod';
import { InvalidObjectError } from '../reconcile/errors.ts';
import { KubeObjectSchema } from './meta.ts';

/** Just enough of an object to name it, whatever else is wrong with it. */
const Named = z.looseObject({
  metadata: z.looseObject({ name: z.unknown().optional(), namespace: z.unknown().optional() }),
});

/** `Kind namespace/name` (or `Kind name` for cluster-scoped), for messages. */
export function objectRefOf(kind: string, obj: unknown): string {
  const meta = Named.safeParse(obj).data?.metadata;
  const name = typeof meta?.name === 'string' && meta.name ? meta.name : '<unnamed>';
  const ns = typeof meta?.namespace === 'string' && meta.namespace ? `${meta.namespace}/` : '';
  return `${kind} ${ns}${name}`;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `spec.hostSelector.matchExpressions[0].operator`; map keys that are not identifiers are quoted: `status.indexes["0"]`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (typeof seg === 'string' && IDENTIFIER.test(seg)) out += out ? `.${seg}` : seg;
    else out += `[${JSON.stringify(String(seg))}]`;
  }
  return out || '<root>';
}

/**
 * Parses `obj` with `schema`, or throws InvalidObjectError naming the object and every bad field
 * (and carrying its envelope, when that parses, for the failure to be recorded on it).
 */
export function parseObject<S extends z.ZodType>(schema: S, kind: string, obj: unknown): z.output<S> {
  const result = schema.safeParse(obj);
  if (result.success) return result.data;
  throw new InvalidObjectError(
    objectRefOf(kind, obj),
    result.error.issues.map((issue) => ({ path: formatPath(issue.path), message: issue.message })),
    { kind, object: KubeObjectSchema.safeParse(obj).data },
  );
}
