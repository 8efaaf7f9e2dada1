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

const REJECTED = 'the server rejected our request due to an error in our request';

/** The member `token` of a JSON value (an object key or an array index), undefined when absent. */
function member(v: unknown, token: string): unknown {
  if (Array.isArray(v)) return /^(0|[1-9]\d*)$/.test(token) ? v[Number(token)] : undefined;
  return isObject(v) && Object.hasOwn(v, token) ? v[token] : undefined;
}

/**
 * `test` as Kubernetes applies it (evanphx/json-patch, which kube-apiserver uses), not as RFC 6902
 * says: a member that is absent, or null, matches a test for null (a missing value too), provided
 * its parent exists. So `{"op":"test","path":"/spec/providerID","value":null}` means "not set".
 */
function testOp(doc: unknown, op: Record<string, unknown>): void {
  const path = typeof op.path === 'string' ? op.path : '';
  const want = op.value ?? null;
  const failed = () =>
    new ApiError(422, 'Invalid', `${REJECTED}: testing value ${path} failed: test failed`, {});
  if (path === '') {
    if (!deepEqual(doc, want)) throw failed();
    return;
  }
  if (!path.startsWith('/')) throw new ApiError(422, 'Invalid', `${REJECTED}: invalid path ${path}`, {});
  const tokens = path
    .slice(1)
    .split('/')
    .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
  let parent: unknown = doc;
  for (const t of tokens.slice(0, -1)) parent = member(parent, t);
  if (!isObject(parent) && !Array.isArray(parent))
    throw new ApiError(
      422,
      'Invalid',
      `${REJECTED}: test operation does not apply: is missing path: ${path}`,
      {},
    );
  const got = member(parent, tokens.at(-1)!) ?? null;
  if (got === null ? want !== null : want === null || !deepEqual(got, want)) throw failed();
}

/** Applies an RFC 6902 patch; a failed `test` or a bad path is a 422 as on a real server. */
export function applyJsonPatch(doc: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops))
    throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  let out = structuredClone(doc);
  for (const [i, op] of ops.entries()) {
    if (isObject(op) && op.op === 'test') {
      testOp(out, op);
      continue;
    }
    try {
      out = jsonpatch.applyOperation(out, op as any, true, true, true, i).newDocument;
    } catch (e) {
      const err = e as { message?: string };
      throw new ApiError(422, 'Invalid', `${REJECTED}: ${String(err.message ?? e).split('\n')[0]}`, {});
    }
  }
  return out;
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
