/**
 * The controllers a real cluster runs next to the API server, reduced to what the API's
 * semantics need: ownerReference garbage collection (Background, Foreground, Orphan), namespace
 * termination, CRD serving and cleanup. They react to committed events and run in a microtask
 * right after the write that triggered them, so a client sees their effect within milliseconds.
 */
import { CRD_GROUP, type KindRegistry, kindsFromCrd, type ServedKind } from './kinds.ts';
import type { Rest } from './rest.ts';
import type { Store, StoredEvent } from './store.ts';

const CRD_RESOURCE = `${CRD_GROUP}/customresourcedefinitions`;
const NS_RESOURCE = '/namespaces';

export class Controllers {
  private readonly rest: Rest;
  private readonly store: Store;
  private readonly kinds: KindRegistry;
  private readonly queue: StoredEvent[] = [];
  private scheduled = false;
  private draining = false;

  constructor(rest: Rest) {
    this.rest = rest;
    this.store = rest.store;
    this.kinds = rest.kinds;
  }

  /** Registers the kinds of CRDs already stored (after a restart from the data file). */
  loadCrds(): void {
    for (const crd of this.store.list(CRD_RESOURCE)) this.kinds.setCrd(crd.metadata.name, kindsFromCrd(crd));
  }

  onCommit = (ev: StoredEvent): void => {
    // CRD serving changes synchronously: a client may use the new kind right after the create returns.
    if (ev.resource === CRD_RESOURCE) {
      if (ev.type === 'DELETED') this.removeCrd(ev.obj);
      else this.kinds.setCrd(ev.obj.metadata.name, kindsFromCrd(ev.obj));
    }
    if (
      ev.type === 'DELETED' ||
      ev.obj.metadata.deletionTimestamp ||
      (ev.prev?.metadata.deletionTimestamp && ev.resource === NS_RESOURCE)
    ) {
      this.queue.push(ev);
      if (!this.scheduled) {
        this.scheduled = true;
        queueMicrotask(() => this.drain());
      }
    }
  };

  /** Runs all pending controller work now (also used by tests that want a settled state). */
  drain(): void {
    this.scheduled = false;
    if (this.draining) return;
    this.draining = true;
    try {
      for (let ev = this.queue.shift(); ev; ev = this.queue.shift()) {
        try {
          this.handle(ev);
        } catch {
          // A controller failure (a concurrent change) is retried by the next event, as in a real cluster.
        }
      }
    } finally {
      this.draining = false;
    }
  }

  private kindOf(resource: string): ServedKind | undefined {
    return this.kinds.byResource(resource);
  }

  private handle(ev: StoredEvent): void {
    const obj = ev.obj;
    if (ev.type === 'DELETED') {
      this.collectDependents(obj.metadata.uid);
      if (obj.metadata.namespace) this.checkNamespace(obj.metadata.namespace);
      // Owners waiting in foreground deletion re-check their remaining dependents.
      for (const ref of obj.metadata.ownerReferences ?? []) {
        const owner = this.store.byUid(ref.uid);
        if (owner?.obj.metadata.finalizers?.includes('foregroundDeletion')) {
          this.handle({ rv: 0, resource: owner.resource, type: 'MODIFIED', obj: owner.obj, prev: owner.obj });
        }
      }
      return;
    }
    const live = this.store.get(ev.resource, obj.metadata.namespace, obj.metadata.name);
    if (!live || live.metadata.uid !== obj.metadata.uid || !live.metadata.deletionTimestamp) return;
    const kind = this.kindOf(ev.resource);
    if (!kind) return;
    const fins: string[] = live.metadata.finalizers ?? [];
    if (fins.includes('orphan')) {
      for (const depUid of this.store.dependentsOf(live.metadata.uid))
        this.dropOwnerRef(depUid, live.metadata.uid);
      this.rest.dropFinalizer(kind, live, 'orphan');
      return;
    }
    if (fins.includes('foregroundDeletion')) {
      let blocking = 0;
      for (const depUid of this.store.dependentsOf(live.metadata.uid)) {
        const dep = this.store.byUid(depUid);
        if (!dep) continue;
        const ref = (dep.obj.metadata.ownerReferences ?? []).find((r: any) => r.uid === live.metadata.uid);
        if (ref?.blockOwnerDeletion) blocking++;
        const depKind = this.kindOf(dep.resource);
        if (depKind && !dep.obj.metadata.deletionTimestamp) {
          this.rest.delete(depKind, dep.obj.metadata.namespace, dep.obj.metadata.name, {
            propagationPolicy: 'Foreground',
          });
        }
      }
      // Re-check after the cascade: dependents without finalizers are gone already.
      blocking = this.store
        .dependentsOf(live.metadata.uid)
        .map((u) => this.store.byUid(u))
        .filter(
          (d) =>
            d &&
            (d.obj.metadata.ownerReferences ?? []).some(
              (r: any) => r.uid === live.metadata.uid && r.blockOwnerDeletion,
            ),
        ).length;
      if (blocking === 0) {
        const now = this.store.get(ev.resource, live.metadata.namespace, live.metadata.name);
        if (now) this.rest.dropFinalizer(kind, now, 'foregroundDeletion');
      }
    }
    if (ev.resource === NS_RESOURCE) this.terminateNamespace(live);
  }

  /** Background GC: a dependent whose owners are all gone is deleted; a dangling ref is removed. */
  private collectDependents(ownerUid: string): void {
    for (const depUid of this.store.dependentsOf(ownerUid)) {
      const dep = this.store.byUid(depUid);
      if (!dep) continue;
      const kind = this.kindOf(dep.resource);
      if (!kind) continue;
      const refs: any[] = dep.obj.metadata.ownerReferences ?? [];
      const alive = refs.filter((r) => r.uid !== ownerUid && this.store.byUid(r.uid));
      if (alive.length === 0) {
        if (!dep.obj.metadata.deletionTimestamp)
          this.rest.delete(kind, dep.obj.metadata.namespace, dep.obj.metadata.name, {});
      } else {
        this.dropOwnerRef(depUid, ownerUid);
      }
    }
  }

  private dropOwnerRef(depUid: string, ownerUid: string): void {
    const dep = this.store.byUid(depUid);
    if (!dep) return;
    const kind = this.kindOf(dep.resource);
    if (!kind) return;
    const next = structuredClone(dep.obj);
    next.metadata.ownerReferences = (next.metadata.ownerReferences ?? []).filter(
      (r: any) => r.uid !== ownerUid,
    );
    if (next.metadata.ownerReferences.length === 0) delete next.metadata.ownerReferences;
    this.rest.patch(kind, dep.obj.metadata.namespace, dep.obj.metadata.name, 'application/merge-patch+json', {
      metadata: { ownerReferences: next.metadata.ownerReferences ?? null },
    });
  }

  private terminateNamespace(ns: any): void {
    const name = ns.metadata.name;
    let remaining = 0;
    for (const resource of this.store.resources()) {
      const kind = this.kindOf(resource);
      if (!kind?.namespaced) continue;
      for (const o of this.store.list(resource, name)) {
        remaining++;
        if (!o.metadata.deletionTimestamp) this.rest.delete(kind, name, o.metadata.name, {});
      }
    }
    if (remaining === 0 || this.isEmpty(name)) this.finishNamespace(name);
  }

  private isEmpty(ns: string): boolean {
    for (const resource of this.store.resources()) {
      if (this.kindOf(resource)?.namespaced && this.store.list(resource, ns).length > 0) return false;
    }
    return true;
  }

  private checkNamespace(ns: string): void {
    const nsObj = this.store.get(NS_RESOURCE, undefined, ns);
    if (nsObj?.metadata.deletionTimestamp && this.isEmpty(ns)) this.finishNamespace(ns);
  }

  private finishNamespace(name: string): void {
    const nsObj = this.store.get(NS_RESOURCE, undefined, name);
    if (!nsObj) return;
    if ((nsObj.metadata.finalizers ?? []).length > 0) return;
    this.store.remove(NS_RESOURCE, nsObj);
  }

  private removeCrd(crd: any): void {
    const removed = this.kinds.removeCrd(crd.metadata.name);
    const resource = removed[0]?.resource ?? `${crd.spec?.group}/${crd.spec?.names?.plural}`;
    for (const o of this.store.list(resource)) this.store.remove(resource, o);
    this.store.closeWatchers(resource);
  }
}
