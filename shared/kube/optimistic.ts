/**
 * The one optimistic-update helper every write of existing state goes through
 * (controller-runtime's RetryOnConflict + Metacontroller's AtomicUpdate):
 * GET -> check uid -> mutate a copy (without managedFields) -> skip when unchanged -> PUT with
 * resourceVersion -> on 409 re-read.
 */
import { isRecord } from '../api/json.ts';
import type { Resource } from '../api/resources.ts';
import type { KubeClient } from './client.ts';
import { ConflictError, isConflict, isNotFound } from './errors.ts';
import { withoutManagedFields } from './managed-fields.ts';
import type { KubeObject } from './types.ts';

export interface UpdateOptions<T extends KubeObject = KubeObject> {
  /** Re-read and retry this many times on 409 before giving up with the ConflictError. */
  retries?: number;
  /** Refuse to write when the object was replaced by another one with the same name. */
  expectedUid?: string | undefined;
  /** Write through /status instead of the main resource. */
  status?: boolean;
  /** Start from this copy instead of a fresh GET (saves a read when the caller has just read it). */
  current?: T | undefined;
}

export type UpdateOutcome<T> =
  | { outcome: 'updated'; object: T }
  | { outcome: 'unchanged'; object: T }
  | { outcome: 'gone' }
  | { outcome: 'skipped'; object: T };

/** Returned by a mutator to say "do not write" even though it may have touched the copy. */
export const SKIP = Symbol('skip-write');

/**
 * Applies `mutate` to the latest version of an object and writes it conditioned on its
 * resourceVersion. `mutate` must be a pure function of the object it is given: it is called
 * again on a fresh copy after each conflict.
 */
export async function optimisticUpdate<T extends KubeObject>(
  client: KubeClient,
  t: Resource<T>,
  namespace: string | undefined,
  name: string,
  mutate: (obj: T) => void | typeof SKIP,
  opts: UpdateOptions<T> = {},
): Promise<UpdateOutcome<T>> {
  const retries = opts.retries ?? 5;
  let current = opts.current;
  for (let attempt = 0; ; attempt++) {
    current ??= await client.get(t, namespace, name);
    if (!current) return { outcome: 'gone' };
    if (opts.expectedUid && current.metadata.uid !== opts.expectedUid) return { outcome: 'gone' };
    const base = withoutManagedFields(current);
    const copy = structuredClone(base);
    const verdict = mutate(copy);
    if (verdict === SKIP) return { outcome: 'skipped', object: current };
    if (sameJson(copy, base)) return { outcome: 'unchanged', object: current };
    copy.metadata.resourceVersion = current.metadata.resourceVersion;
    try {
      const written = opts.status ? await client.replaceStatus(t, copy) : await client.replace(t, copy);
      return { outcome: 'updated', object: written };
    } catch (e) {
      // Deleted between our read and our write (e.g. the last finalizer went): the same as a 404 on the read.
      if (isNotFound(e)) return { outcome: 'gone' };
      if (!isConflict(e) || attempt >= retries) throw e;
      current = undefined;
    }
  }
}

/** Deep equality of JSON-shaped values, key order ignored. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => sameJson(v, b[i]))
    );
  }
  if (!isRecord(a) || !isRecord(b)) return false;
  const ao = a;
  const bo = b;
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  return ak.length === bk.length && ak.every((k) => sameJson(ao[k], bo[k]));
}

export { ConflictError };
