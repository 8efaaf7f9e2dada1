/**
 * Admission: the validation every write goes through before it is stored. Metadata rules for
 * all kinds, the CRD's structural schema (pruning, defaults, validation, CEL rules) for custom
 * resources, and the few built-in rules the project relies on (Node providerID, Secret data).
 */
import { validateCrd } from './crd-validation.ts';
import type { ServedKind } from './kinds.ts';
import { validateName, validateObjectMeta, validatePathSegmentName } from './names.ts';
import type { AdmitContext, Operation } from './rest.ts';
import { admitCustomResource } from './schema.ts';
import { badRequest, fieldError, invalid, type StatusCause } from './status.ts';

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const LABEL_NAME_KINDS = new Set(['/namespaces']);
/** RBAC objects are named by ValidateRBACName (a path segment: `system:discovery` is fine). */
const PATH_SEGMENT_NAME_KINDS = new Set(
  ['roles', 'clusterroles', 'rolebindings', 'clusterrolebindings'].map(
    (p) => `rbac.authorization.k8s.io/${p}`,
  ),
);

function builtinRules(kind: ServedKind, obj: any, old: any | undefined): StatusCause[] {
  const out: StatusCause[] = [];
  switch (kind.resource) {
    case '/nodes': {
      const before = old?.spec?.providerID ?? '';
      const after = obj.spec?.providerID ?? '';
      if (old && before !== '' && before !== after) {
        out.push(
          fieldError(
            'Forbidden',
            'spec.providerID',
            'node updates may not change providerID except from "" to valid',
          ),
        );
      }
      break;
    }
    case '/secrets':
      for (const [k, v] of Object.entries((obj.data ?? {}) as Record<string, unknown>)) {
        if (typeof v !== 'string' || !BASE64.test(v)) {
          out.push(
            fieldError(
              'Invalid',
              `data[${k}]`,
              'illegal base64 data',
              typeof v === 'string' ? '<secret contents redacted>' : v,
            ),
          );
        }
      }
      for (const k of [...Object.keys(obj.data ?? {}), ...Object.keys(obj.stringData ?? {})]) {
        if (!/^[-._a-zA-Z0-9]+$/.test(k)) {
          out.push(
            fieldError(
              'Invalid',
              `data[${k}]`,
              "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
              k,
            ),
          );
        }
      }
      if (old && old.type !== undefined && (obj.type ?? 'Opaque') !== old.type) {
        out.push(fieldError('Invalid', 'type', 'field is immutable', obj.type ?? 'Opaque'));
      }
      if (old?.immutable && JSON.stringify(obj.data) !== JSON.stringify(old.data)) {
        out.push(fieldError('Forbidden', 'data', 'field is immutable when `immutable` is set'));
      }
      break;
    case '/configmaps':
      for (const k of [...Object.keys(obj.data ?? {}), ...Object.keys(obj.binaryData ?? {})]) {
        if (!/^[-._a-zA-Z0-9]+$/.test(k)) {
          out.push(
            fieldError(
              'Invalid',
              `data[${k}]`,
              "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
              k,
            ),
          );
        }
      }
      break;
  }
  return out;
}

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
 * Validates (pruning and defaulting custom resources in place). Unknown fields of custom
 * resources follow `fieldValidation`: Strict → 400 as the real server's strict decoding, Warn
 * (the server default) → warnings, Ignore → silently pruned.
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
    if (
      kind.resource === '/nodes' ||
      kind.resource === '/namespaces' ||
      kind.resource === '/secrets' ||
      kind.resource === '/configmaps'
    ) {
      // as validated by ValidateObjectMeta with the kind's name function
    }
  }
  causes.push(...validateObjectMeta(obj.metadata ?? {}));
  if (kind.resource === '/secrets') normalizeSecret(obj);
  if (kind.builtin) causes.push(...builtinRules(kind, obj, old));
  if (kind.resource === 'apiextensions.k8s.io/customresourcedefinitions')
    causes.push(...validateCrd(obj, old));
  if (!kind.builtin) {
    const dropped: string[] = [];
    causes.push(...admitCustomResource(kind, obj, old, dropped));
    const mode = ctx.fieldValidation ?? 'Warn';
    if (dropped.length && mode === 'Strict') {
      throw badRequest(
        `${kind.kind} in version "${kind.version}" cannot be handled as a ${kind.kind}: strict decoding error: ${dropped.map((f) => `unknown field "${f}"`).join(', ')}`,
      );
    }
    if (dropped.length && mode === 'Warn') ctx.warnings?.push(...dropped.map((f) => `unknown field "${f}"`));
  }
  if (causes.length) throw invalid(kind, name, causes);
}
