/**
 * Patch formats: JSON merge patch (RFC 7386) and JSON patch (RFC 6902, through fast-json-patch);
 * strategic merge patch, driven by the built-in kinds' schemas, is in smp.ts.
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
