/**
 * The scale subresource of custom resources whose CRD declares `subresources.scale`
 * (apiextensions-apiserver pkg/registry/customresource/etcd.go ScaleREST): an autoscaling/v1
 * Scale read from specReplicasPath, statusReplicasPath and labelSelectorPath; PUT and PATCH
 * (JSON, merge, apply) write the new replica count to specReplicasPath of the custom resource,
 * which then goes through its validation like any update. `kubectl scale` patches it.
 */
import { decodeBuiltin } from './field-validation.ts';
import type { ServedKind } from './kinds.ts';
import { applyJsonPatch, JSON_PATCH, MERGE, mergePatch } from './patch.ts';
import type { Rest, WriteOptions } from './rest.ts';
import { badRequest, fieldError, internalError, type StatusCause, unsupportedMediaType } from './status.ts';

export interface ScaleSpec {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

const SCALE_KIND = { group: 'autoscaling', version: 'v1', kind: 'Scale', plural: 'scale' } as ServedKind;
const PATCH_TYPES = [JSON_PATCH, MERGE, 'application/apply-patch+yaml'];
const MAX_INT32 = 2 ** 31 - 1;
/** Marks a custom resource without a spec replicas value (the server's smallest int32). */
const UNSET = -(2 ** 31);

const steps = (path: string): string[] => path.replace(/^\./, '').split('.');

function nested(obj: any, path: string): unknown {
  let v = obj;
  for (const s of steps(path)) {
    if (v === null || typeof v !== 'object') return undefined;
    v = v[s];
  }
  return v;
}

function setNested(obj: any, path: string, value: unknown): void {
  const parts = steps(path);
  let v = obj;
  for (const s of parts.slice(0, -1)) {
    if (v[s] === null || typeof v[s] !== 'object') v[s] = {};
    v = v[s];
  }
  v[parts.at(-1)!] = value;
}

/** scaleFromCustomResource: the Scale, and whether the spec replicas were set. */
export function scaleOf(spec: ScaleSpec, cr: any): { scale: any; found: boolean } {
  const specReplicas = nested(cr, spec.specReplicasPath);
  const statusReplicas = nested(cr, spec.statusReplicasPath);
  const selector = spec.labelSelectorPath ? nested(cr, spec.labelSelectorPath) : undefined;
  const m = cr.metadata;
  const scale = {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: m.name,
      ...(m.namespace ? { namespace: m.namespace } : {}),
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      creationTimestamp: m.creationTimestamp,
    },
    spec: { replicas: typeof specReplicas === 'number' ? specReplicas : 0 },
    status: {
      replicas: typeof statusReplicas === 'number' ? statusReplicas : 0,
      ...(typeof selector === 'string' && selector ? { selector } : {}),
    },
  };
  return { scale, found: specReplicas !== undefined };
}

/** customResourceValidator.ValidateScaleSpec / ValidateScaleStatus: replica counts are int32 >= 0. */
export function scaleCauses(spec: ScaleSpec, cr: any, status: boolean): StatusCause[] {
  const out: StatusCause[] = [];
  for (const path of status ? [spec.statusReplicasPath] : [spec.specReplicasPath, spec.statusReplicasPath]) {
    const v = nested(cr, path);
    if (typeof v !== 'number') continue;
    if (v < 0) out.push(fieldError('Invalid', path, 'should be a non-negative integer', v));
    else if (v > MAX_INT32)
      out.push(fieldError('Invalid', path, `should be less than or equal to ${MAX_INT32}`, v));
  }
  return out;
}

export function getScale(rest: Rest, kind: ServedKind, ns: string | undefined, name: string): any {
  const spec = kind.scale!;
  const { scale, found } = scaleOf(spec, rest.get(kind, ns, name));
  if (!found)
    throw internalError(`the spec replicas field ${JSON.stringify(spec.specReplicasPath)} does not exist`);
  return scale;
}

/**
 * PUT (body = the new Scale) or PATCH (contentType set) of the scale subresource: the Scale is
 * decoded strictly as autoscaling/v1 Scale, its replicas written to the custom resource, its
 * resourceVersion (when given) used as the precondition.
 */
export function writeScale(
  rest: Rest,
  kind: ServedKind,
  ns: string | undefined,
  name: string,
  body: any,
  opts: WriteOptions,
  contentType?: string,
): any {
  const spec = kind.scale!;
  const current = rest.get(kind, ns, name);
  const { scale: old, found } = scaleOf(spec, current);
  if (!found) old.spec.replicas = UNSET;
  let next: any;
  let o: WriteOptions = opts;
  if (contentType === undefined) next = structuredClone(body);
  else {
    if (!PATCH_TYPES.includes(contentType)) throw unsupportedMediaType(contentType, PATCH_TYPES);
    if (contentType !== JSON_PATCH && (!body || typeof body !== 'object' || Array.isArray(body)))
      throw badRequest('json: cannot unmarshal array into Go value of type map[string]interface {}');
    const patched = () => (contentType === JSON_PATCH ? applyJsonPatch(old, body) : mergePatch(old, body));
    next = patched();
    if (contentType === JSON_PATCH || contentType === MERGE)
      o = { ...opts, patch: { strategic: false, patch: body, patched: () => JSON.stringify(patched()) } };
  }
  if (!next || typeof next !== 'object' || Array.isArray(next))
    throw badRequest('Object is not a valid JSON object');
  decodeBuiltin(SCALE_KIND, next, o);
  if (next.kind !== undefined && next.kind !== 'Scale')
    throw badRequest(`wrong object passed to Scale update: ${next.kind}`);
  const replicas = next.spec?.replicas ?? 0;
  if (replicas === UNSET)
    throw badRequest(`the spec replicas field ${JSON.stringify(spec.specReplicasPath)} cannot be empty`);
  const cr = structuredClone(current);
  setNested(cr, spec.specReplicasPath, replicas);
  cr.metadata.resourceVersion = next.metadata?.resourceVersion || current.metadata.resourceVersion;
  const updated = rest.update(kind, ns, name, cr, { ...opts, subresource: undefined });
  return scaleOf(spec, updated).scale;
}
