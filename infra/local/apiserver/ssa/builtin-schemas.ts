/**
 * What server-side apply needs to know of the built-in kinds the server serves, until their
 * upstream OpenAPI documents are wired in (ServedKind.schema; TypeBuilder reads those as they are):
 * ObjectMeta and each kind's fields with their list and map types, transcribed from the Go types'
 * markers in k8s.io/api and k8s.io/apimachinery v0.32 (+listType, +listMapKey, +patchStrategy,
 * +structType). Nested objects whose every field is not transcribed here keep unknown fields
 * (x-kubernetes-preserve-unknown-fields), so an apply is never refused for a field that exists
 * upstream.
 *
 * Also the "zero object" of each kind: what `scope.Creater.New(kind)` serializes to before a
 * create, against which the creating manager's fields are compared (a struct field present in it
 * is not itself "added", so it carries no `.` in fieldsV1).
 */
import type { Schema } from '../schema.ts';

const str: Schema = { type: 'string' };
const int: Schema = { type: 'integer' };
const bool: Schema = { type: 'boolean' };
/** metav1.Time / MicroTime: a formatted string, an untyped scalar. */
const time: Schema = { type: 'string', format: 'date-time' };
const bytes: Schema = { type: 'string', format: 'byte' };
const obj = (properties: Record<string, Schema>, extra: Partial<Schema> = {}): Schema => ({
  type: 'object',
  properties,
  ...extra,
});
const mapOf = (v: Schema): Schema => ({ type: 'object', additionalProperties: v });
const atomicList = (items: Schema): Schema => ({ type: 'array', items, 'x-kubernetes-list-type': 'atomic' });
const setOf = (items: Schema): Schema => ({ type: 'array', items, 'x-kubernetes-list-type': 'set' });
const mapList = (keys: string[], items: Schema): Schema => ({
  type: 'array',
  items,
  'x-kubernetes-list-type': 'map',
  'x-kubernetes-list-map-keys': keys,
});
/** An object whose fields are not all transcribed: unknown ones are kept, typed by their values. */
const loose = (properties: Record<string, Schema> = {}): Schema =>
  obj(properties, { 'x-kubernetes-preserve-unknown-fields': true });
const atomicObj = (properties: Record<string, Schema>): Schema =>
  obj(properties, { 'x-kubernetes-map-type': 'atomic' });

const ownerReference = atomicObj({
  apiVersion: str,
  kind: str,
  name: str,
  uid: str,
  controller: bool,
  blockOwnerDeletion: bool,
});

export const OBJECT_META: Schema = obj({
  name: str,
  generateName: str,
  namespace: str,
  selfLink: str,
  uid: str,
  resourceVersion: str,
  generation: int,
  creationTimestamp: time,
  deletionTimestamp: time,
  deletionGracePeriodSeconds: int,
  labels: mapOf(str),
  annotations: mapOf(str),
  ownerReferences: {
    ...mapList(['uid'], ownerReference),
  },
  finalizers: setOf(str),
  managedFields: atomicList(
    obj({
      manager: str,
      operation: str,
      apiVersion: str,
      time,
      fieldsType: str,
      fieldsV1: { type: 'object' },
      subresource: str,
    }),
  ),
});

const condition = (extra: Record<string, Schema> = {}): Schema =>
  obj({ type: str, status: str, lastTransitionTime: time, reason: str, message: str, ...extra });
const objectReference = atomicObj({
  kind: str,
  namespace: str,
  name: str,
  uid: str,
  apiVersion: str,
  resourceVersion: str,
  fieldPath: str,
});
const policyRule = obj({
  verbs: atomicList(str),
  apiGroups: atomicList(str),
  resources: atomicList(str),
  resourceNames: atomicList(str),
  nonResourceURLs: atomicList(str),
});
const subject = atomicObj({ kind: str, apiGroup: str, name: str, namespace: str });
const roleRef = atomicObj({ apiGroup: str, kind: str, name: str });

/** Kind-specific top-level fields (apiVersion, kind and metadata are added to each). */
const KINDS: Record<string, Record<string, Schema>> = {
  '/namespaces': {
    spec: obj({ finalizers: atomicList(str) }),
    status: obj({ phase: str, conditions: mapList(['type'], condition()) }),
  },
  '/secrets': { immutable: bool, data: mapOf(bytes), stringData: mapOf(str), type: str },
  '/configmaps': { immutable: bool, data: mapOf(str), binaryData: mapOf(bytes) },
  '/serviceaccounts': {
    secrets: mapList(['name'], objectReference),
    imagePullSecrets: atomicList(atomicObj({ name: str })),
    automountServiceAccountToken: bool,
  },
  '/nodes': {
    spec: obj({
      podCIDR: str,
      podCIDRs: setOf(str),
      providerID: str,
      unschedulable: bool,
      taints: atomicList(obj({ key: str, value: str, effect: str, timeAdded: time })),
      configSource: loose(),
      externalID: str,
    }),
    status: obj({
      capacity: mapOf({ 'x-kubernetes-int-or-string': true }),
      allocatable: mapOf({ 'x-kubernetes-int-or-string': true }),
      phase: str,
      conditions: mapList(['type'], condition({ lastHeartbeatTime: time })),
      addresses: mapList(['type'], obj({ type: str, address: str })),
      daemonEndpoints: loose(),
      nodeInfo: loose(),
      images: atomicList(loose()),
      volumesInUse: atomicList(str),
      volumesAttached: atomicList(loose()),
      config: loose(),
      runtimeHandlers: atomicList(loose()),
      features: loose(),
    }),
  },
  '/events': {
    involvedObject: objectReference,
    reason: str,
    message: str,
    source: obj({ component: str, host: str }),
    firstTimestamp: time,
    lastTimestamp: time,
    count: int,
    type: str,
    eventTime: time,
    series: obj({ count: int, lastObservedTime: time }),
    action: str,
    related: objectReference,
    reportingComponent: str,
    reportingInstance: str,
  },
  'coordination.k8s.io/leases': {
    spec: obj({
      holderIdentity: str,
      leaseDurationSeconds: int,
      acquireTime: time,
      renewTime: time,
      leaseTransitions: int,
      strategy: str,
      preferredHolder: str,
    }),
  },
  'rbac.authorization.k8s.io/roles': { rules: atomicList(policyRule) },
  'rbac.authorization.k8s.io/clusterroles': {
    rules: atomicList(policyRule),
    aggregationRule: obj({ clusterRoleSelectors: atomicList(loose()) }),
  },
  'rbac.authorization.k8s.io/rolebindings': { subjects: atomicList(subject), roleRef },
  'rbac.authorization.k8s.io/clusterrolebindings': { subjects: atomicList(subject), roleRef },
  'apiextensions.k8s.io/customresourcedefinitions': {
    spec: obj({
      group: str,
      names: loose(),
      scope: str,
      versions: atomicList(loose()),
      conversion: loose(),
      preserveUnknownFields: bool,
    }),
    status: loose({
      conditions: mapList(['type'], condition()),
      acceptedNames: loose(),
      storedVersions: atomicList(str),
    }),
  },
};

const schemas = new Map<string, Schema>();

/** The fallback schema of a built-in resource (`<group>/<plural>`), undefined for one not transcribed. */
export function builtinSchema(resource: string): Schema | undefined {
  let s = schemas.get(resource);
  if (!s && KINDS[resource]) {
    s = obj({ apiVersion: str, kind: str, metadata: OBJECT_META, ...KINDS[resource] });
    schemas.set(resource, s);
  }
  return s;
}

const ZERO: Record<string, Record<string, unknown>> = {
  '/namespaces': { spec: {}, status: {} },
  '/nodes': { spec: {}, status: { daemonEndpoints: { kubeletEndpoint: { Port: 0 } }, nodeInfo: {} } },
  '/events': {
    involvedObject: {},
    source: {},
    firstTimestamp: null,
    lastTimestamp: null,
    eventTime: null,
    reportingComponent: '',
    reportingInstance: '',
  },
  'coordination.k8s.io/leases': { spec: {} },
  'rbac.authorization.k8s.io/roles': { rules: null },
  'rbac.authorization.k8s.io/clusterroles': { rules: null },
  'rbac.authorization.k8s.io/rolebindings': { roleRef: { apiGroup: '', kind: '', name: '' } },
  'rbac.authorization.k8s.io/clusterrolebindings': { roleRef: { apiGroup: '', kind: '', name: '' } },
  'apiextensions.k8s.io/customresourcedefinitions': {
    spec: { group: '', names: { plural: '', kind: '' }, scope: '', versions: null },
    status: { acceptedNames: { plural: '', kind: '' }, storedVersions: null },
  },
};

/** The object a create starts from: a typed kind's zero value, or apiVersion and kind for a custom resource. */
export function zeroObject(resource: string, builtin: boolean, apiVersion: string, kind: string): unknown {
  if (!builtin) return { apiVersion, kind };
  return { metadata: { creationTimestamp: null }, ...(ZERO[resource] ?? {}) };
}
