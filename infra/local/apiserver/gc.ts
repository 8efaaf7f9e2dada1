/**
 * The controllers a real cluster runs next to the API server, reduced to what the API's
 * semantics need: ownerReference garbage collection (Background, Foreground, Orphan, and
 * dependents whose owner never existed), the namespace controllers (namespaces.ts), CRD serving
 * and the CRD finalizer (crd-finalizer.ts). They react to committed events and run in a microtask
 * right after the write that triggered them, so a client sees their effect within milliseconds.
 */
import { CRD_RESOURCE, CrdFinalizer } from './crd-finalizer.ts';
import { type KindRegistry, kindsFromCrd, type ServedKind } from './kinds.ts';
import { NamespaceController, NS_RESOURCE } from './namespaces.ts';
import { CONTROLLER_MANAGER, type Rest } from './rest.ts';
import type { Store, StoredEvent } from './store.ts';

export class Controllers {
  private readonly rest: Rest;
  private readonly store: Store;
  private readonly kinds: KindRegistry;
  private readonly queue: StoredEvent[] = [];
  private scheduled = false;
  private draining = false;
  private readonly namespaces: NamespaceController;
  private readonly crds: CrdFinalizer;

  /** `caBundle`: the cluster CA published in every namespace's kube-root-ca.crt. */
  constructor(rest: Rest, caBundle: () => string) {
    this.rest = rest;
    this.store = rest.store;
    this.kinds = rest.kinds;
    this.namespaces = new NamespaceController(rest, caBundle);
    this.crds = new CrdFinalizer(rest);
  }

  /** Registers the kinds of CRDs already stored (after a restart from the data file). */
  loadCrds(): void {
    for (const crd of this.store.list(CRD_RESOURCE)) this.kinds.setCrd(crd.metadata.name, kindsFromCrd(crd));
  }

  /** Creates what the namespace controllers keep in every active namespace (at start, for restored state). */
  ensureNamespaceDefaults(): void {
    for (const ns of this.store.list(NS_RESOURCE)) this.namespaces.ensureDefaults(ns.metadata.name);
  }

  onCommit = (ev: StoredEvent): void => {
    // CRD serving changes synchronously: a client may use the new kind right after the create returns.
    if (ev.resource === CRD_RESOURCE) {
      if (ev.type === 'DELETED') this.removeCrd(ev.obj);
      else this.kinds.setCrd(ev.obj.metadata.name, kindsFromCrd(ev.obj));
    }
    if (this.interesting(ev)) {
      this.queue.push(ev);
      if (!this.scheduled) {
        this.scheduled = true;
        queueMicrotask(() => this.drain());
      }
    }
  };

  private interesting(ev: StoredEvent): boolean {
    const m = ev.obj.metadata;
    if (ev.type === 'DELETED' || m.deletionTimestamp) return true;
    if (ev.resource === NS_RESOURCE)
      return ev.type === 'ADDED' || Boolean(ev.prev?.metadata.deletionTimestamp);
    if (NamespaceController.touchesDefaults(ev.resource, ev.type, ev.obj)) return true;
    if (m.namespace && this.store.get(NS_RESOURCE, undefined, m.namespace)?.metadata.deletionTimestamp)
      return true;
    // An owner that does not exist (never did, or is gone): the GC verifies and collects.
    return (m.ownerReferences ?? []).some((r: any) => !this.store.byUid(r.uid));
  }

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
    const ns: string | undefined = obj.metadata.namespace;
    if (ev.resource === NS_RESOURCE && ev.type === 'ADDED') this.namespaces.ensureDefaults(obj.metadata.name);
    if (NamespaceController.touchesDefaults(ev.resource, ev.type, obj)) this.namespaces.ensureDefaults(ns!);
    if (ev.type === 'DELETED') {
      this.collectDependents(obj.metadata.uid);
      // Owners waiting in foreground deletion re-check their remaining dependents.
      for (const ref of obj.metadata.ownerReferences ?? []) {
        const owner = this.store.byUid(ref.uid);
        if (owner?.obj.metadata.finalizers?.includes('foregroundDeletion')) {
          this.handle({ rv: 0, resource: owner.resource, type: 'MODIFIED', obj: owner.obj, prev: owner.obj });
        }
      }
      const crd = this.crds.terminatingCrdOf(ev.resource);
      if (crd) this.crds.sync(crd);
      if (ns) this.namespaces.terminate(ns);
      return;
    }
    const live = this.store.get(ev.resource, ns, obj.metadata.name);
    if (!live || live.metadata.uid !== obj.metadata.uid) return;
    if (!live.metadata.deletionTimestamp) {
      this.collectIfOwnersAbsent(ev.resource, live);
      if (ns) this.namespaces.terminate(ns);
      return;
    }
    const kind = this.kindOf(ev.resource);
    if (!kind) return;
    const fins: string[] = live.metadata.finalizers ?? [];
    if (fins.includes('orphan')) {
      for (const depUid of this.store.dependentsOf(live.metadata.uid))
        this.dropOwnerRef(depUid, live.metadata.uid);
      this.rest.dropFinalizer(kind, live, 'orphan');
    } else if (fins.includes('foregroundDeletion')) this.foreground(ev.resource, kind, live);
    if (ev.resource === NS_RESOURCE) this.namespaces.terminate(live.metadata.name);
    else if (ev.resource === CRD_RESOURCE) this.crds.sync(live.metadata.name);
    else if (ns) this.namespaces.terminate(ns);
  }

  private foreground(resource: string, kind: ServedKind, live: any): void {
    for (const depUid of this.store.dependentsOf(live.metadata.uid)) {
      const dep = this.store.byUid(depUid);
      if (!dep) continue;
      const depKind = this.kindOf(dep.resource);
      if (depKind && !dep.obj.metadata.deletionTimestamp) {
        this.rest.delete(depKind, dep.obj.metadata.namespace, dep.obj.metadata.name, {
          propagationPolicy: 'Foreground',
        });
      }
    }
    // Re-check after the cascade: dependents without finalizers are gone already.
    const blocking = this.store
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
      const now = this.store.get(resource, live.metadata.namespace, live.metadata.name);
      if (now) this.rest.dropFinalizer(kind, now, 'foregroundDeletion');
    }
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

  /**
   * An object whose owner never existed (garbagecollector.go attemptToDeleteItem /
   * classifyReferences / isDangling): each owner not found by uid is looked up by its kind and
   * name; absent, or another uid, it is dangling. No solid owner left: the object is deleted
   * (its existing orphan / foreground finalizer decides the propagation); some left: the dangling
   * references are removed. An owner kind the server does not serve cannot be verified, and a
   * namespaced owner of a cluster-scoped object is invalid: such objects are left alone, as the
   * real collector leaves them.
   */
  private collectIfOwnersAbsent(resource: string, live: any): void {
    const refs: any[] = live.metadata.ownerReferences ?? [];
    const dangling: string[] = [];
    let solid = 0;
    for (const r of refs) {
      if (this.store.byUid(r.uid)) {
        solid++;
        continue;
      }
      const ownerKind = this.kinds.byApiVersionKind(r.apiVersion, r.kind);
      if (!ownerKind) return;
      if (!live.metadata.namespace && ownerKind.namespaced) return;
      const owner = this.store.get(
        ownerKind.resource,
        ownerKind.namespaced ? live.metadata.namespace : undefined,
        r.name,
      );
      if (owner && owner.metadata.uid === r.uid) solid++;
      else dangling.push(r.uid);
    }
    if (dangling.length === 0) return;
    const kind = this.kindOf(resource);
    if (!kind) return;
    if (solid > 0) {
      for (const uid of dangling) this.dropOwnerRef(live.metadata.uid, uid);
      return;
    }
    const fins: string[] = live.metadata.finalizers ?? [];
    const policy = fins.includes('orphan')
      ? 'Orphan'
      : fins.includes('foregroundDeletion')
        ? 'Foreground'
        : 'Background';
    this.rest.delete(kind, live.metadata.namespace, live.metadata.name, {
      propagationPolicy: policy,
      preconditions: { uid: live.metadata.uid },
    });
  }

  private dropOwnerRef(depUid: string, ownerUid: string): void {
    const dep = this.store.byUid(depUid);
    if (!dep) return;
    const kind = this.kindOf(dep.resource);
    if (!kind) return;
    const refs = (dep.obj.metadata.ownerReferences ?? []).filter((r: any) => r.uid !== ownerUid);
    this.rest.patch(
      kind,
      dep.obj.metadata.namespace,
      dep.obj.metadata.name,
      'application/merge-patch+json',
      { metadata: { ownerReferences: refs.length ? refs : null } },
      { fieldManager: CONTROLLER_MANAGER },
    );
  }

  private removeCrd(crd: any): void {
    const removed = this.kinds.removeCrd(crd.metadata.name);
    const resource = removed[0]?.resource ?? `${crd.spec?.group}/${crd.spec?.names?.plural}`;
    for (const o of this.store.list(resource)) this.store.remove(resource, o);
    this.store.closeWatchers(resource);
  }
}
