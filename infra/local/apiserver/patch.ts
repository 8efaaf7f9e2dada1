/**
 * Patch formats: JSON merge patch (RFC 7386), JSON patch (RFC 6902, through fast-json-patch)
 * and a strategic merge patch for built-in kinds: maps merge; the lists of the table below merge
 * by key (or as sets), honouring `$patch: delete|replace` items, `$deleteFromPrimitiveList/` and
 * `$retainKeys`-free directives; every other list is replaced, and `$setElementOrder` is ignored.
 * That covers what kubectl sends for Secrets, ConfigMaps, Namespaces, Nodes, Leases and RBAC
 * objects, not Go's full struct-tag-driven semantics.
 */
import jsonpatch from 'fast-json-patch';
import { ApiError, badRequest } from './status.ts';

export const MERGE = 'application/merge-patch+json';
export const JSON_PATCH = 'application/json-patch+json';
export const STRATEGIC = 'application/strategic-merge-patch+json';
export const APPLY_YAML = 'application/apply-patch+yaml';
export const APPLY_CBOR = 'application/apply-patch+cbor';

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** List fields that strategic merge patch merges: path (from the object root) → merge key, or '' for a set. */
const MERGE_LISTS: Record<string, string> = {
  'metadata.finalizers': '',
  'metadata.ownerReferences': 'uid',
  'spec.finalizers': '',
  'spec.taints': 'key',
  'status.conditions': 'type',
  'status.addresses': 'type',
  'status.images': '',
  subjects: 'name',
};

function mergeList(target: unknown, patch: unknown[], key: string, deletes: unknown[]): unknown[] {
  const base = Array.isArray(target) ? [...target] : [];
  if (key === '') {
    const out = base.filter((x) => !deletes.some((d) => deepEqual(d, x)));
    for (const p of patch) if (!out.some((x) => deepEqual(x, p))) out.push(structuredClone(p));
    return out;
  }
  let out = base;
  for (const p of patch) {
    if (!isObject(p)) continue;
    const idx = out.findIndex((x) => isObject(x) && x[key] === p[key]);
    if (p.$patch === 'delete') {
      if (idx >= 0) out = out.filter((_, i) => i !== idx);
    } else if (idx >= 0) out[idx] = strategicMergePatch(out[idx], p, '');
    else out.push(strategicMergePatch(undefined, p, ''));
  }
  return out;
}

export function strategicMergePatch(target: unknown, patch: unknown, path = ''): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  if (patch.$patch === 'replace') {
    const { $patch: _, ...rest } = patch;
    return structuredClone(rest);
  }
  if (patch.$patch === 'delete') return undefined;
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith('$')) continue;
    const sub = path ? `${path}.${k}` : k;
    const key = MERGE_LISTS[sub];
    const deletes = (patch[`$deleteFromPrimitiveList/${k}`] as unknown[] | undefined) ?? [];
    if (v === null) delete out[k];
    else if (Array.isArray(v) && key !== undefined && !v.some((x) => isObject(x) && x.$patch === 'replace')) {
      out[k] = mergeList(out[k], v, key, deletes);
    } else {
      const merged = strategicMergePatch(out[k], v, sub);
      if (merged === undefined) delete out[k];
      else out[k] = merged;
    }
  }
  for (const [k, v] of Object.entries(patch)) {
    // A delete-only directive for a list the patch does not otherwise mention.
    if (!k.startsWith('$deleteFromPrimitiveList/')) continue;
    const field = k.slice('$deleteFromPrimitiveList/'.length);
    if (field in patch || !Array.isArray(out[field])) continue;
    out[field] = (out[field] as unknown[]).filter((x) => !(v as unknown[]).some((d) => deepEqual(d, x)));
  }
  return out;
}

/** Applies an RFC 6902 patch; a failed `test` or a bad path is a 422 as on a real server. */
export function applyJsonPatch(doc: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops))
    throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  try {
    return jsonpatch.applyPatch(structuredClone(doc), ops as any, true, true).newDocument;
  } catch (e) {
    const err = e as { name?: string; message?: string; operation?: { path?: string } };
    const msg =
      err.name === 'TEST_OPERATION_FAILED'
        ? `the server rejected our request due to an error in our request: testing value ${err.operation?.path ?? ''} failed: test failed`
        : `the server rejected our request due to an error in our request: ${String(err.message ?? e).split('\n')[0]}`;
    throw new ApiError(422, 'Invalid', msg, {});
  }
}

/** Deep structural equality of JSON values (key order ignored). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    if (!Object.hasOwn(b as object, k)) return false;
    if (!deepEqual((a as any)[k], (b as any)[k])) return false;
  }
  return true;
}
