/**
 * The CRD finalizer of apiextensions-apiserver (controller/finalizer/crd_finalizer.go): a deleted
 * CRD stays, Terminating, while its instances are deleted; instances with finalizers keep it
 * there (with deletionTimestamp set) until they are gone; then the CRD's finalizer is removed and
 * it goes. Its status writes are the apiserver's own (manager "kube-apiserver").
 */
import { CRD_GROUP, type KindRegistry } from './kinds.ts';
import { CRD_CLEANUP_FINALIZER, type Rest, setCondition } from './rest.ts';

export const CRD_RESOURCE = `${CRD_GROUP}/customresourcedefinitions`;
const APISERVER_MANAGER = 'kube-apiserver';

export class CrdFinalizer {
  private readonly rest: Rest;
  private readonly kinds: KindRegistry;

  constructor(rest: Rest) {
    this.rest = rest;
    this.kinds = rest.kinds;
  }

  /** The CRD that serves a resource, if it is being deleted (its instances' deletions re-run the sync). */
  terminatingCrdOf(resource: string): string | undefined {
    const crdName = this.kinds.byResource(resource)?.crd;
    if (!crdName) return undefined;
    const crd = this.rest.store.get(CRD_RESOURCE, undefined, crdName);
    return crd?.metadata.deletionTimestamp ? crdName : undefined;
  }

  sync(name: string): void {
    const store = this.rest.store;
    const crd = store.get(CRD_RESOURCE, undefined, name);
    if (!crd?.metadata.deletionTimestamp || !(crd.metadata.finalizers ?? []).includes(CRD_CLEANUP_FINALIZER))
      return;
    const established = (crd.status?.conditions ?? []).some(
      (c: any) => c.type === 'Established' && c.status === 'True',
    );
    const now = () => this.rest.clock.timestamp();
    let status = setCondition(crd.status ?? {}, now(), {
      type: 'Terminating',
      status: 'True',
      reason: 'InstanceDeletionInProgress',
      message: 'CustomResource deletion is in progress',
    });
    const written = this.writeStatus(crd, status, crd.metadata.finalizers);
    if (established) {
      const kind = this.kinds.all().find((k) => k.crd === name);
      if (kind) {
        // deleteInstances: a delete collection per namespace; then wait until none remain.
        for (const o of store.list(kind.resource)) {
          if (!o.metadata.deletionTimestamp)
            this.rest.delete(kind, o.metadata.namespace, o.metadata.name, {});
        }
        if (store.count(kind.resource) > 0) return;
      }
      status = setCondition(written.status ?? {}, now(), {
        type: 'Terminating',
        status: 'False',
        reason: 'InstanceDeletionCompleted',
        message: 'removed all instances',
      });
    } else {
      status = setCondition(written.status ?? {}, now(), {
        type: 'Terminating',
        status: 'False',
        reason: 'NeverEstablished',
        message: 'resource was never established',
      });
    }
    const fresh = store.get(CRD_RESOURCE, undefined, name);
    if (fresh) {
      this.writeStatus(
        fresh,
        status,
        (fresh.metadata.finalizers ?? []).filter((f: string) => f !== CRD_CLEANUP_FINALIZER),
      );
    }
  }

  /** UpdateStatus of the CRD; the CRD status strategy also takes the request's finalizers. */
  private writeStatus(crd: any, status: any, finalizers: string[] | undefined): any {
    const kind = this.kinds.byResource(CRD_RESOURCE)!;
    const body = structuredClone({ ...crd, status });
    delete body.metadata.managedFields;
    if (finalizers?.length) body.metadata.finalizers = finalizers;
    else delete body.metadata.finalizers;
    return this.rest.update(kind, undefined, crd.metadata.name, body, {
      subresource: 'status',
      fieldManager: APISERVER_MANAGER,
    });
  }
}
