/**
 * The validation of the built-in kinds served, with the real server's field errors
 * (kubernetes pkg/apis/core/validation: ValidateSecret, ValidateSecretUpdate, ValidateConfigMap,
 * ValidateConfigMapUpdate, ValidateNodeUpdate and validateNodeTaints; pkg/apis/core/validation/
 * events.go legacyValidateEvent; pkg/apis/coordination/validation ValidateLeaseSpec;
 * pkg/apis/rbac/validation ValidatePolicyRule, ValidateRoleBinding, ValidateRoleBindingSubject,
 * ValidateRoleBindingUpdate), and the defaults applied before it (rbac/v1 SetDefaults_Subject,
 * SetDefaults_RoleBinding; Secret type Opaque; stringData folded into data).
 */
import type { ServedKind } from './kinds.ts';
import { validateName, validateQualifiedName } from './names.ts';
import { fieldError, type StatusCause } from './status.ts';

/** core.MaxSecretSize: the total size of a Secret's or ConfigMap's data. */
const MAX_DATA_SIZE = 1024 * 1024;
const RBAC = 'rbac.authorization.k8s.io';
const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const CONFIG_KEY_MSG =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const IMMUTABLE_SET = 'field is immutable when `immutable` is set';
const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

/** field.NotSupported's detail: the values, quoted. */
const supported = (values: string[]): string =>
  `supported values: ${values.map((v) => JSON.stringify(v)).join(', ')}`;
const entries = (v: unknown): [string, unknown][] =>
  v && typeof v === 'object' ? Object.entries(v as Record<string, unknown>) : [];
const json = (v: unknown): string => JSON.stringify(v ?? null);
const decodedSize = (b64: unknown): number =>
  typeof b64 === 'string' ? Buffer.from(b64, 'base64').length : 0;

/** validation.IsConfigMapKey for every key of the given maps. */
function configKeys(out: StatusCause[], field: string, map: unknown): void {
  for (const [k] of entries(map)) {
    if (!CONFIG_KEY.test(k) || k.length > 253)
      out.push(fieldError('Invalid', `${field}[${k}]`, CONFIG_KEY_MSG, k));
    else if (k === '.' || k === '..')
      out.push(fieldError('Invalid', `${field}[${k}]`, `must not be '${k}'`, k));
    else if (k.startsWith('..'))
      out.push(fieldError('Invalid', `${field}[${k}]`, "must not start with '..'", k));
  }
}

function secret(obj: any, old: any | undefined): StatusCause[] {
  const out: StatusCause[] = [];
  const data = obj.data ?? {};
  configKeys(out, 'data', data);
  const size = entries(data).reduce((n, [, v]) => n + decodedSize(v), 0);
  if (size > MAX_DATA_SIZE)
    out.push(fieldError('TooLong', 'data', `may not be more than ${MAX_DATA_SIZE} bytes`));
  const has = (k: string) => Object.hasOwn(data, k);
  const required = (k: string) => out.push(fieldError('Required', `data[${k}]`, ''));
  switch (obj.type) {
    case 'kubernetes.io/service-account-token':
      if (!obj.metadata?.annotations?.['kubernetes.io/service-account.name'])
        out.push(fieldError('Required', 'metadata.annotations[kubernetes.io/service-account.name]', ''));
      break;
    case 'kubernetes.io/dockercfg':
    case 'kubernetes.io/dockerconfigjson': {
      const key = obj.type === 'kubernetes.io/dockercfg' ? '.dockercfg' : '.dockerconfigjson';
      if (!has(key)) required(key);
      else {
        try {
          const parsed = JSON.parse(Buffer.from(data[key], 'base64').toString('utf8'));
          if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
            throw new Error('not a JSON object');
        } catch (e) {
          out.push(fieldError('Invalid', `data[${key}]`, (e as Error).message, '<secret contents redacted>'));
        }
      }
      break;
    }
    case 'kubernetes.io/basic-auth':
      if (!has('username') && !has('password')) {
        required('username');
        required('password');
      }
      break;
    case 'kubernetes.io/ssh-auth':
      if (!decodedSize(data['ssh-privatekey'])) required('ssh-privatekey');
      break;
    case 'kubernetes.io/tls':
      if (!has('tls.crt')) required('tls.crt');
      if (!has('tls.key')) required('tls.key');
      break;
  }
  if (old) {
    if ((obj.type ?? 'Opaque') !== (old.type ?? 'Opaque'))
      out.push(fieldError('Invalid', 'type', 'field is immutable', obj.type ?? 'Opaque'));
    if (old.immutable) {
      if (!obj.immutable) out.push(fieldError('Forbidden', 'immutable', IMMUTABLE_SET));
      if (json(obj.data) !== json(old.data)) out.push(fieldError('Forbidden', 'data', IMMUTABLE_SET));
    }
  }
  return out;
}

function configMap(obj: any, old: any | undefined): StatusCause[] {
  const out: StatusCause[] = [];
  configKeys(out, 'data', obj.data);
  for (const [k] of entries(obj.data))
    if (obj.binaryData && Object.hasOwn(obj.binaryData, k))
      out.push(fieldError('Invalid', `data[${k}]`, 'duplicate of key present in binaryData', k));
  configKeys(out, 'binaryData', obj.binaryData);
  const size =
    entries(obj.data).reduce((n, [, v]) => n + Buffer.byteLength(String(v)), 0) +
    entries(obj.binaryData).reduce((n, [, v]) => n + decodedSize(v), 0);
  // field.NewPath(""): the error is about the whole object, and Path prints it as "[]".
  if (size > MAX_DATA_SIZE)
    out.push(fieldError('TooLong', '[]', `may not be more than ${MAX_DATA_SIZE} bytes`));
  if (old?.immutable) {
    if (!obj.immutable) out.push(fieldError('Forbidden', 'immutable', IMMUTABLE_SET));
    if (json(obj.data) !== json(old.data)) out.push(fieldError('Forbidden', 'data', IMMUTABLE_SET));
    if (json(obj.binaryData) !== json(old.binaryData))
      out.push(fieldError('Forbidden', 'binaryData', IMMUTABLE_SET));
  }
  return out;
}

function node(obj: any, old: any | undefined): StatusCause[] {
  const out: StatusCause[] = [];
  const before = old?.spec?.providerID ?? '';
  if (old && before !== '' && before !== (obj.spec?.providerID ?? ''))
    out.push(
      fieldError(
        'Forbidden',
        'spec.providerID',
        'node updates may not change providerID except from "" to valid',
      ),
    );
  const seen = new Map<string, Set<string>>();
  (Array.isArray(obj.spec?.taints) ? obj.spec.taints : []).forEach((t: any, i: number) => {
    const at = `spec.taints[${i}]`;
    out.push(...validateQualifiedName(t.key ?? '', `${at}.key`));
    const value = t.value ?? '';
    if (value.length > 63 || !LABEL_VALUE.test(value))
      out.push(
        fieldError(
          'Invalid',
          `${at}.value`,
          value.length > 63
            ? 'must be no more than 63 characters'
            : "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
          value,
        ),
      );
    const effect = t.effect ?? '';
    if (!effect) out.push(fieldError('Required', `${at}.effect`, ''));
    else if (!TAINT_EFFECTS.includes(effect))
      out.push(fieldError('NotSupported', `${at}.effect`, supported(TAINT_EFFECTS), effect));
    const keys = seen.get(effect) ?? new Set<string>();
    if (keys.has(t.key)) {
      out.push({
        ...fieldError('Duplicate', at, '', t),
        message: `Duplicate value: ${goStruct('core.Taint', t)}: taints must be unique by key and effect pair`,
      });
      return;
    }
    keys.add(t.key);
    seen.set(effect, keys);
  });
  return out;
}

/** A value as Go's %#v prints a small struct of strings (the bad value of struct-valued field errors). */
function goStruct(type: string, v: Record<string, unknown>): string {
  const parts = Object.entries(v).map(([k, x]) => `${k[0]!.toUpperCase()}${k.slice(1)}:${JSON.stringify(x)}`);
  return `${type}{${parts.join(', ')}}`;
}

function event(obj: any): StatusCause[] {
  const out: StatusCause[] = [];
  const ns: string = obj.metadata?.namespace ?? '';
  const involved: string = obj.involvedObject?.namespace ?? '';
  const mismatch = () =>
    out.push(fieldError('Invalid', 'involvedObject.namespace', 'does not match event.namespace', involved));
  if (!obj.eventTime) {
    if (involved === '' ? ns !== '' && ns !== 'default' : ns !== involved) mismatch();
  } else {
    if (involved === '' && ns !== 'default' && ns !== 'kube-system') mismatch();
    const field = 'reportingComponent';
    if (!obj[field]) out.push(fieldError('Required', field, ''));
    else out.push(...validateQualifiedName(obj[field], field));
    if (!obj.reportingInstance) out.push(fieldError('Required', 'reportingInstance', ''));
    else if (obj.reportingInstance.length > 128)
      out.push(fieldError('Invalid', 'reportingInstance', 'can have at most 128 characters', ''));
    for (const [f, max] of [
      ['action', 128],
      ['reason', 128],
    ] as const) {
      if (!obj[f]) out.push(fieldError('Required', f, ''));
      else if (obj[f].length > max)
        out.push(fieldError('Invalid', f, `can have at most ${max} characters`, ''));
    }
    if ((obj.message ?? '').length > 1024)
      out.push(fieldError('Invalid', 'message', 'can have at most 1024 characters', ''));
  }
  return out;
}

function lease(obj: any): StatusCause[] {
  const out: StatusCause[] = [];
  const d = obj.spec?.leaseDurationSeconds;
  if (d !== undefined && d <= 0)
    out.push(fieldError('Invalid', 'spec.leaseDurationSeconds', 'must be greater than 0', d));
  const t = obj.spec?.leaseTransitions;
  if (t !== undefined && t < 0)
    out.push(fieldError('Invalid', 'spec.leaseTransitions', 'must be greater than or equal to 0', t));
  return out;
}

function policyRules(obj: any, namespaced: boolean): StatusCause[] {
  const out: StatusCause[] = [];
  (Array.isArray(obj.rules) ? obj.rules : []).forEach((r: any, i: number) => {
    const at = `rules[${i}]`;
    const len = (v: unknown) => (Array.isArray(v) ? v.length : 0);
    if (!len(r.verbs))
      out.push(fieldError('Required', `${at}.verbs`, 'verbs must contain at least one value'));
    if (len(r.nonResourceURLs)) {
      if (namespaced)
        out.push(
          fieldError(
            'Invalid',
            `${at}.nonResourceURLs`,
            'namespaced rules cannot apply to non-resource URLs',
            r.nonResourceURLs,
          ),
        );
      if (len(r.apiGroups) || len(r.resources) || len(r.resourceNames))
        out.push(
          fieldError(
            'Invalid',
            `${at}.nonResourceURLs`,
            'rules cannot apply to both regular resources and non-resource URLs',
            r.nonResourceURLs,
          ),
        );
      return;
    }
    if (!len(r.apiGroups))
      out.push(
        fieldError('Required', `${at}.apiGroups`, 'resource rules must supply at least one api group'),
      );
    if (!len(r.resources))
      out.push(fieldError('Required', `${at}.resources`, 'resource rules must supply at least one resource'));
  });
  return out;
}

function binding(obj: any, old: any | undefined, namespaced: boolean): StatusCause[] {
  const out: StatusCause[] = [];
  const ref = obj.roleRef ?? {};
  if (ref.apiGroup !== RBAC)
    out.push(fieldError('NotSupported', 'roleRef.apiGroup', supported([RBAC]), ref.apiGroup ?? ''));
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!kinds.includes(ref.kind))
    out.push(fieldError('NotSupported', 'roleRef.kind', supported(kinds), ref.kind ?? ''));
  if (!ref.name) out.push(fieldError('Required', 'roleRef.name', ''));
  else out.push(...validateRbacName(ref.name, 'roleRef.name'));
  (Array.isArray(obj.subjects) ? obj.subjects : []).forEach((s: any, i: number) => {
    const at = `subjects[${i}]`;
    if (!s.name) out.push(fieldError('Required', `${at}.name`, ''));
    if (s.kind === 'ServiceAccount') {
      if (s.name) out.push(...validateName(s.name, false, `${at}.name`));
      if (s.apiGroup) out.push(fieldError('NotSupported', `${at}.apiGroup`, supported(['']), s.apiGroup));
      if (!namespaced && !s.namespace) out.push(fieldError('Required', `${at}.namespace`, ''));
    } else if (s.kind === 'User' || s.kind === 'Group') {
      if (s.apiGroup !== RBAC)
        out.push(fieldError('NotSupported', `${at}.apiGroup`, supported([RBAC]), s.apiGroup ?? ''));
    } else {
      out.push(
        fieldError(
          'NotSupported',
          `${at}.kind`,
          supported(['ServiceAccount', 'User', 'Group']),
          s.kind ?? '',
        ),
      );
    }
  });
  if (old && json(obj.roleRef) !== json(old.roleRef))
    out.push({
      ...fieldError('Invalid', 'roleRef', 'cannot change roleRef'),
      message: `Invalid value: ${goStruct('rbac.RoleRef', { apiGroup: ref.apiGroup ?? '', kind: ref.kind ?? '', name: ref.name ?? '' })}: cannot change roleRef`,
    });
  return out;
}

/** ValidateRBACName (path.ValidatePathSegmentName): no '/' or '%', not '.' or '..'. */
function validateRbacName(name: string, field: string): StatusCause[] {
  if (name === '.' || name === '..') return [fieldError('Invalid', field, `may not be '${name}'`, name)];
  for (const c of ['/', '%'])
    if (name.includes(c)) return [fieldError('Invalid', field, `may not contain '${c}'`, name)];
  return [];
}

/** Defaults of the kinds' v1 API types, applied before validation and stored. */
export function defaultBuiltin(kind: ServedKind, obj: any): void {
  // NodeSpec is a struct, not a pointer, in core/v1: a real server always returns `spec: {}`, so a
  // JSON patch can test or add /spec/providerID on a Node created without a spec.
  if (kind.resource === '/nodes' && (obj.spec === undefined || obj.spec === null)) obj.spec = {};
  if (kind.group === RBAC && (kind.kind === 'RoleBinding' || kind.kind === 'ClusterRoleBinding')) {
    if (obj.roleRef && typeof obj.roleRef === 'object' && !obj.roleRef.apiGroup) obj.roleRef.apiGroup = RBAC;
    for (const s of Array.isArray(obj.subjects) ? obj.subjects : [])
      if (s && (s.kind === 'User' || s.kind === 'Group') && !s.apiGroup) s.apiGroup = RBAC;
  }
}

/** The field errors of a built-in object about to be written (`old` on update). */
export function validateBuiltin(kind: ServedKind, obj: any, old: any | undefined): StatusCause[] {
  switch (kind.resource) {
    case '/secrets':
      return secret(obj, old);
    case '/configmaps':
      return configMap(obj, old);
    case '/nodes':
      return node(obj, old);
    case '/events':
      return event(obj);
    case 'coordination.k8s.io/leases':
      return lease(obj);
    case `${RBAC}/roles`:
      return policyRules(obj, true);
    case `${RBAC}/clusterroles`:
      return policyRules(obj, false);
    case `${RBAC}/rolebindings`:
      return binding(obj, old, true);
    case `${RBAC}/clusterrolebindings`:
      return binding(obj, old, false);
    default:
      return [];
  }
}
