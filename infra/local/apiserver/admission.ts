/**
 * Admission: the validation every write goes through before it is stored. Metadata rules for
 * all kinds, the CRD's structural schema (pruning, defaults, validation, CEL rules) for custom
 * resources, and the built-in kinds' own validation (builtin-validation.ts).
 */
import { defaultBuiltin, validateBuiltin } from './builtin-validation.ts';
import { validateCrd } from './crd-validation.ts';
import { enforceFieldValidation } from './field-validation.ts';
import type { ServedKind } from './kinds.ts';
import { validateName, validateObjectMeta, validatePathSegmentName } from './names.ts';
import type { AdmitContext, Operation } from './rest.ts';
import { scaleCauses } from './scale.ts';
import { admitCustomResource } from './schema.ts';
import { invalid, type StatusCause } from './status.ts';

const LABEL_NAME_KINDS = new Set(['/namespaces']);
/** RBAC objects are named by ValidateRBACName (a path segment: `system:discovery` is fine). */
const PATH_SEGMENT_NAME_KINDS = new Set(
  ['roles', 'clusterroles', 'rolebindings', 'clusterrolebindings'].map(
    (p) => `rbac.authorization.k8s.io/${p}`,
  ),
);

/** Secret.stringData is write-only: merged into data (base64) on every write, as the real server does. */
function normalizeSecret(obj: any): void {
  if (obj.stringData && typeof obj.stringData === 'object') {
    obj.data ??= {};
    for (const [k, v] of Object.entries(obj.stringData))
      obj.data[k] = Buffer.from(String(v), 'utf8').toString('base64');
    delete obj.stringData;
  }
  obj.type ??= 'Opaque';
}

/**
 * Validates (pruning and defaulting in place). Unknown fields of custom resources follow
 * `fieldValidation` (field-validation.ts); those of built-in kinds were handled when decoding.
 */
export function admit(
  op: Operation,
  kind: ServedKind,
  obj: any,
  old: any | undefined,
  ctx: AdmitContext = {},
): void {
  if (op === 'DELETE') return;
  const causes: StatusCause[] = [];
  const name: string = obj.metadata?.name ?? '';
  if (op === 'CREATE') {
    causes.push(
      ...(PATH_SEGMENT_NAME_KINDS.has(kind.resource)
        ? validatePathSegmentName(name)
        : validateName(name, LABEL_NAME_KINDS.has(kind.resource))),
    );
  }
  causes.push(...validateObjectMeta(obj.metadata ?? {}));
  if (kind.resource === '/secrets') normalizeSecret(obj);
  if (kind.builtin) {
    defaultBuiltin(kind, obj);
    causes.push(...validateBuiltin(kind, obj, old));
  }
  if (kind.resource === 'apiextensions.k8s.io/customresourcedefinitions')
    causes.push(...validateCrd(obj, old));
  if (!kind.builtin) {
    const dropped: string[] = [];
    causes.push(...admitCustomResource(kind, obj, old, dropped, ctx.warnings));
    enforceFieldValidation(kind, dropped, ctx);
    if (kind.scale) causes.push(...scaleCauses(kind.scale, obj, ctx.subresource === 'status'));
  }
  if (causes.length) throw invalid(kind, name, causes);
}
