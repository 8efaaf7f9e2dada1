/**
 * What the server serves: built-in kinds and the kinds CustomResourceDefinitions add. One
 * `ServedKind` per group/version/plural; versions of one resource share storage (`resource`),
 * as with a CRD's "None" conversion strategy.
 */
import type { ScaleSpec } from './scale.ts';
import type { Schema } from './schema.ts';

export interface PrinterColumn {
  name: string;
  type: string;
  jsonPath: string;
  description?: string;
  format?: string;
  priority?: number;
}

export interface CelRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  fieldPath?: string;
  reason?: string;
  optionalOldSelf?: boolean;
}

export interface ServedKind {
  group: string;
  version: string;
  kind: string;
  plural: string;
  singular: string;
  listKind: string;
  namespaced: boolean;
  /** Has a /status subresource. */
  status: boolean;
  shortNames: string[];
  categories: string[];
  columns: PrinterColumn[];
  schema?: Schema | undefined;
  builtin: boolean;
  /** Storage key shared by all versions of a resource: `<group>/<plural>`. */
  resource: string;
  /** Whether metadata.generation is maintained (CRs, CRDs; not Secrets or ConfigMaps). */
  generation: boolean;
  /** Field selector labels beyond metadata.name / metadata.namespace. */
  fieldLabels: readonly string[];
  /** Accepts application/strategic-merge-patch+json (built-in kinds, CRDs included; not custom resources). */
  strategic: boolean;
  /** PUT without metadata.resourceVersion is allowed (built-ins); CRs answer 422. */
  unconditionalUpdate: boolean;
  /** Name of the CRD that defines this kind, for custom resources. */
  crd?: string;
  /** Create-only kinds that are answered, never stored (access reviews). */
  virtual?: boolean;
  /** Subresources besides status, for discovery (serviceaccounts/token answers a TokenRequest). */
  subresources?: readonly { name: string; group: string; version: string; kind: string; verbs: string[] }[];
  /** The scale subresource a CRD version declares (subresources.scale). */
  scale?: ScaleSpec;
}

export const apiVersionOf = (k: Pick<ServedKind, 'group' | 'version'>): string =>
  k.group ? `${k.group}/${k.version}` : k.version;

function builtin(
  group: string,
  kind: string,
  plural: string,
  opts: Partial<ServedKind> & { namespaced: boolean },
): ServedKind {
  return {
    group,
    version: 'v1',
    kind,
    plural,
    singular: kind.toLowerCase(),
    listKind: `${kind}List`,
    status: false,
    shortNames: [],
    categories: [],
    columns: [],
    builtin: true,
    resource: `${group}/${plural}`,
    generation: false,
    fieldLabels: [],
    strategic: true,
    unconditionalUpdate: true,
    ...opts,
  };
}

export const RBAC_GROUP = 'rbac.authorization.k8s.io';
export const CRD_GROUP = 'apiextensions.k8s.io';
export const AUTHZ_GROUP = 'authorization.k8s.io';
export const AUTHN_GROUP = 'authentication.k8s.io';

export const BUILTIN_KINDS: readonly ServedKind[] = [
  builtin('', 'Namespace', 'namespaces', {
    namespaced: false,
    status: true,
    shortNames: ['ns'],
    fieldLabels: ['status.phase'],
  }),
  builtin('', 'Secret', 'secrets', { namespaced: true, fieldLabels: ['type'] }),
  builtin('', 'ConfigMap', 'configmaps', { namespaced: true, shortNames: ['cm'] }),
  builtin('', 'Node', 'nodes', {
    namespaced: false,
    status: true,
    shortNames: ['no'],
    fieldLabels: ['spec.unschedulable'],
  }),
  builtin('', 'Event', 'events', {
    namespaced: true,
    shortNames: ['ev'],
    fieldLabels: [
      'involvedObject.kind',
      'involvedObject.namespace',
      'involvedObject.name',
      'involvedObject.uid',
      'involvedObject.apiVersion',
      'involvedObject.resourceVersion',
      'involvedObject.fieldPath',
      'reason',
      'reportingComponent',
      'source',
      'type',
    ],
  }),
  builtin('', 'ServiceAccount', 'serviceaccounts', {
    namespaced: true,
    shortNames: ['sa'],
    subresources: [
      { name: 'token', group: AUTHN_GROUP, version: 'v1', kind: 'TokenRequest', verbs: ['create'] },
    ],
  }),
  builtin('coordination.k8s.io', 'Lease', 'leases', { namespaced: true, strategic: true }),
  builtin(CRD_GROUP, 'CustomResourceDefinition', 'customresourcedefinitions', {
    namespaced: false,
    status: true,
    shortNames: ['crd', 'crds'],
    categories: ['api-extensions'],
    generation: true,
  }),
  builtin(RBAC_GROUP, 'Role', 'roles', { namespaced: true, strategic: true }),
  builtin(RBAC_GROUP, 'ClusterRole', 'clusterroles', { namespaced: false }),
  builtin(RBAC_GROUP, 'RoleBinding', 'rolebindings', { namespaced: true }),
  builtin(RBAC_GROUP, 'ClusterRoleBinding', 'clusterrolebindings', { namespaced: false }),
  builtin(AUTHZ_GROUP, 'SelfSubjectAccessReview', 'selfsubjectaccessreviews', {
    namespaced: false,
    virtual: true,
  }),
  builtin(AUTHZ_GROUP, 'SubjectAccessReview', 'subjectaccessreviews', { namespaced: false, virtual: true }),
  builtin(AUTHZ_GROUP, 'LocalSubjectAccessReview', 'localsubjectaccessreviews', {
    namespaced: true,
    virtual: true,
  }),
  builtin(AUTHZ_GROUP, 'SelfSubjectRulesReview', 'selfsubjectrulesreviews', {
    namespaced: false,
    virtual: true,
  }),
  builtin(AUTHN_GROUP, 'SelfSubjectReview', 'selfsubjectreviews', { namespaced: false, virtual: true }),
  builtin(AUTHN_GROUP, 'TokenReview', 'tokenreviews', { namespaced: false, virtual: true }),
];

/** The served kinds a CustomResourceDefinition object defines (one per served version). */
export function kindsFromCrd(crd: any): ServedKind[] {
  const spec = crd.spec ?? {};
  const names = spec.names ?? {};
  const group: string = spec.group;
  const out: ServedKind[] = [];
  for (const v of spec.versions ?? []) {
    if (v.served === false) continue;
    out.push({
      group,
      version: v.name,
      kind: names.kind,
      plural: names.plural,
      singular: names.singular || String(names.kind).toLowerCase(),
      listKind: names.listKind || `${names.kind}List`,
      namespaced: spec.scope !== 'Cluster',
      status: Boolean(v.subresources?.status),
      shortNames: names.shortNames ?? [],
      categories: names.categories ?? [],
      columns: v.additionalPrinterColumns ?? [],
      schema: v.schema?.openAPIV3Schema,
      builtin: false,
      resource: `${group}/${names.plural}`,
      generation: true,
      fieldLabels: (v.selectableFields ?? []).map((f: { jsonPath: string }) => f.jsonPath.replace(/^\./, '')),
      strategic: false,
      unconditionalUpdate: false,
      crd: crd.metadata?.name,
      ...(v.subresources?.scale ? { scale: v.subresources.scale } : {}),
    });
  }
  return out;
}

/** The registry of served kinds, looked up by URL parts, by resource, or by apiVersion+kind. */
export class KindRegistry {
  private readonly byPath = new Map<string, ServedKind>();
  private readonly byGvk = new Map<string, ServedKind>();

  constructor(kinds: readonly ServedKind[] = BUILTIN_KINDS) {
    for (const k of kinds) this.add(k);
  }

  add(k: ServedKind): void {
    this.byPath.set(`${k.group}/${k.version}/${k.plural}`, k);
    this.byGvk.set(`${apiVersionOf(k)}/${k.kind}`, k);
  }

  /** Replaces every kind a CRD defined with what it defines now. */
  setCrd(crdName: string, kinds: ServedKind[]): void {
    this.removeCrd(crdName);
    for (const k of kinds) this.add(k);
  }

  removeCrd(crdName: string): ServedKind[] {
    const removed: ServedKind[] = [];
    for (const [p, k] of this.byPath) {
      if (k.crd === crdName) {
        this.byPath.delete(p);
        this.byGvk.delete(`${apiVersionOf(k)}/${k.kind}`);
        removed.push(k);
      }
    }
    return removed;
  }

  get(group: string, version: string, plural: string): ServedKind | undefined {
    return this.byPath.get(`${group}/${version}/${plural}`);
  }

  byApiVersionKind(apiVersion: string, kind: string): ServedKind | undefined {
    return this.byGvk.get(`${apiVersion}/${kind}`);
  }

  /** Any served version of a stored resource (`<group>/<plural>`). */
  byResource(resource: string): ServedKind | undefined {
    for (const k of this.byPath.values()) if (k.resource === resource) return k;
    return undefined;
  }

  /** Kinds of one group (any version) matching kind name, for ownerReference lookups. */
  byGroupKind(group: string, kind: string): ServedKind | undefined {
    for (const k of this.byPath.values()) if (k.group === group && k.kind === kind) return k;
    return undefined;
  }

  all(): ServedKind[] {
    return [...this.byPath.values()];
  }

  /** group → versions (ordered as registered), for /apis discovery. */
  groups(): Map<string, string[]> {
    const m = new Map<string, string[]>();
    for (const k of this.byPath.values()) {
      const vs = m.get(k.group) ?? [];
      if (!vs.includes(k.version)) vs.push(k.version);
      m.set(k.group, vs);
    }
    return m;
  }
}
