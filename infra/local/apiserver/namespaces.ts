/**
 * The controllers of kube-controller-manager that look after namespaces, reduced to what clients
 * see:
 * - serviceaccounts-controller: every active namespace has a `default` ServiceAccount (recreated
 *   when deleted);
 * - root-ca-cert-publisher: every active namespace has the `kube-root-ca.crt` ConfigMap holding the
 *   cluster CA (recreated when deleted, reset when edited);
 * - namespace controller: a terminating namespace's content is deleted, its status conditions say
 *   what remains (namespace/deletion/status_condition_utils.go), and it goes once empty.
 */
import { apiVersionOf, type ServedKind } from './kinds.ts';
import { CONTROLLER_MANAGER, type Rest, setCondition } from './rest.ts';

export const NS_RESOURCE = '/namespaces';
const SA_RESOURCE = '/serviceaccounts';
const CM_RESOURCE = '/configmaps';
export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';
const DESCRIPTION_ANNOTATION = 'kubernetes.io/description';
const DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.';

/** The conditions the namespace deleter maintains, in its order, with their "ok" reason and message. */
const CONDITIONS: [type: string, okReason: string, okMessage: string][] = [
  ['NamespaceDeletionDiscoveryFailure', 'ResourcesDiscovered', 'All resources successfully discovered'],
  [
    'NamespaceDeletionGroupVersionParsingFailure',
    'ParsedGroupVersions',
    'All legacy kube types successfully parsed',
  ],
  [
    'NamespaceDeletionContentFailure',
    'ContentDeleted',
    'All content successfully deleted, may be waiting on finalization',
  ],
  ['NamespaceContentRemaining', 'ContentRemoved', 'All content successfully removed'],
  ['NamespaceFinalizersRemaining', 'ContentHasNoFinalizers', 'All content-preserving finalizers finished'],
];

export class NamespaceController {
  private readonly rest: Rest;
  private readonly caBundle: () => string;

  constructor(rest: Rest, caBundle: () => string) {
    this.rest = rest;
    this.caBundle = caBundle;
  }

  private kind(resource: string): ServedKind {
    return this.rest.kinds.byResource(resource)!;
  }

  private active(ns: string): boolean {
    const o = this.rest.store.get(NS_RESOURCE, undefined, ns);
    return Boolean(o && !o.metadata.deletionTimestamp && o.status?.phase !== 'Terminating');
  }

  /** The default ServiceAccount and the root CA ConfigMap of an active namespace (created or repaired). */
  ensureDefaults(ns: string): void {
    if (!this.active(ns)) return;
    const store = this.rest.store;
    const opts = { fieldManager: CONTROLLER_MANAGER };
    if (!store.get(SA_RESOURCE, ns, 'default')) {
      this.rest.create(this.kind(SA_RESOURCE), ns, { metadata: { name: 'default' } }, opts);
    }
    const data = { 'ca.crt': this.caBundle() };
    const cm = store.get(CM_RESOURCE, ns, ROOT_CA_CONFIGMAP);
    if (!cm) {
      this.rest.create(
        this.kind(CM_RESOURCE),
        ns,
        {
          metadata: { name: ROOT_CA_CONFIGMAP, annotations: { [DESCRIPTION_ANNOTATION]: DESCRIPTION } },
          data,
        },
        opts,
      );
    } else if (
      cm.data?.['ca.crt'] !== data['ca.crt'] ||
      Object.keys(cm.data ?? {}).length !== 1 ||
      !cm.metadata.annotations?.[DESCRIPTION_ANNOTATION]
    ) {
      const next = structuredClone(cm);
      delete next.metadata.managedFields;
      next.data = data;
      next.metadata.annotations = {
        ...(next.metadata.annotations ?? {}),
        [DESCRIPTION_ANNOTATION]: DESCRIPTION,
      };
      this.rest.update(this.kind(CM_RESOURCE), ns, ROOT_CA_CONFIGMAP, next, opts);
    }
  }

  /** Whether an event concerns the defaults of its namespace (deleted or edited). */
  static touchesDefaults(resource: string, type: string, obj: any): boolean {
    if (resource === SA_RESOURCE) return type === 'DELETED' && obj.metadata.name === 'default';
    return resource === CM_RESOURCE && type !== 'ADDED' && obj.metadata.name === ROOT_CA_CONFIGMAP;
  }

  /**
   * One pass of the namespace deleter (namespaced_resources_deleter.go): delete what remains,
   * record what is left in the status conditions, and finish the namespace once it is empty.
   */
  terminate(name: string): void {
    const store = this.rest.store;
    const nsObj = store.get(NS_RESOURCE, undefined, name);
    if (!nsObj?.metadata.deletionTimestamp) return;
    const remaining = new Map<string, number>();
    const finalizers = new Map<string, number>();
    for (const resource of store.resources()) {
      const kind = this.rest.kinds.byResource(resource);
      if (!kind?.namespaced) continue;
      for (const o of store.list(resource, name)) {
        if (!o.metadata.deletionTimestamp) this.rest.delete(kind, name, o.metadata.name, {});
      }
      for (const o of store.list(resource, name)) {
        remaining.set(resource, (remaining.get(resource) ?? 0) + 1);
        for (const f of o.metadata.finalizers ?? []) finalizers.set(f, (finalizers.get(f) ?? 0) + 1);
      }
    }
    this.updateConditions(name, remaining, finalizers);
    if (remaining.size === 0) this.finish(name);
  }

  private updateConditions(
    name: string,
    remaining: Map<string, number>,
    finalizers: Map<string, number>,
  ): void {
    const nsObj = this.rest.store.get(NS_RESOURCE, undefined, name);
    if (!nsObj) return;
    const failing = new Map<string, { reason: string; message: string }>();
    if (remaining.size) {
      const parts = [...remaining]
        .map(([resource, n]) => {
          const [group, plural] = resource.split('/');
          return `${plural}.${group} has ${n} resource instances`;
        })
        .sort();
      failing.set('NamespaceContentRemaining', {
        reason: 'SomeResourcesRemain',
        message: `Some resources are remaining: ${parts.join(', ')}`,
      });
    }
    if (finalizers.size) {
      const parts = [...finalizers].map(([f, n]) => `${f} in ${n} resource instances`).sort();
      failing.set('NamespaceFinalizersRemaining', {
        reason: 'SomeFinalizersRemain',
        message: `Some content in the namespace has finalizers remaining: ${parts.join(', ')}`,
      });
    }
    const now = this.rest.clock.timestamp();
    let status = { ...(nsObj.status ?? {}) };
    for (const [type, okReason, okMessage] of CONDITIONS) {
      const bad = failing.get(type);
      status = setCondition(status, now, {
        type,
        status: bad ? 'True' : 'False',
        reason: bad?.reason ?? okReason,
        message: bad?.message ?? okMessage,
      });
    }
    const kind = this.kind(NS_RESOURCE);
    const body = {
      apiVersion: apiVersionOf(kind),
      kind: 'Namespace',
      metadata: { name, resourceVersion: nsObj.metadata.resourceVersion },
      status,
    };
    this.rest.update(kind, undefined, name, body, {
      subresource: 'status',
      fieldManager: CONTROLLER_MANAGER,
    });
  }

  /** finalizeNamespace: the controller's spec finalizer goes; the namespace with it unless others remain. */
  private finish(name: string): void {
    const store = this.rest.store;
    const nsObj = store.get(NS_RESOURCE, undefined, name);
    if (!nsObj) return;
    const others = (nsObj.spec?.finalizers ?? []).filter((f: string) => f !== 'kubernetes');
    const spec = others.length ? { ...nsObj.spec, finalizers: others } : {};
    if (others.length || (nsObj.metadata.finalizers ?? []).length > 0) {
      if (others.length !== (nsObj.spec?.finalizers ?? []).length)
        store.put(NS_RESOURCE, { ...nsObj, spec }, nsObj);
      return;
    }
    store.remove(NS_RESOURCE, { ...nsObj, spec });
  }
}
