/**
 * The relay's memory of what it watches: per kind, objects by uid (the identity a re-list diff
 * needs) and by namespace/name (what routing looks up). Related lookups in the routing table read
 * this, so routing one event costs no API call. Secrets are kept without their data.
 */
import type { KindName } from '../api/resources.ts';
import type { KubeObject } from '../kube/types.ts';

/** What the routing table may read: synchronous, side-effect free. */
export interface CacheView {
  get(kind: KindName, namespace: string | undefined, name: string): KubeObject | undefined;
  /** All objects of a kind, or those of one namespace. */
  list(kind: KindName, namespace?: string): KubeObject[];
  byUid(kind: KindName, uid: string): KubeObject | undefined;
}

/** One kind's objects, uid-keyed, with a namespace/name index. */
export class ObjectStore {
  private readonly uids = new Map<string, KubeObject>();
  private readonly names = new Map<string, Map<string, KubeObject>>();

  get size(): number {
    return this.uids.size;
  }

  /** Stores the object; returns the previous version with the same uid. */
  upsert(obj: KubeObject): KubeObject | undefined {
    const uid = uidOf(obj);
    const old = this.uids.get(uid);
    if (old) this.unindex(old);
    this.uids.set(uid, obj);
    const ns = obj.metadata.namespace ?? '';
    let m = this.names.get(ns);
    if (!m) {
      m = new Map();
      this.names.set(ns, m);
    }
    m.set(obj.metadata.name ?? '', obj);
    return old;
  }

  /** Forgets the object; returns the version that was stored. */
  remove(obj: KubeObject): KubeObject | undefined {
    const old = this.uids.get(uidOf(obj));
    if (!old) return undefined;
    this.uids.delete(uidOf(obj));
    this.unindex(old);
    return old;
  }

  getByUid(uid: string): KubeObject | undefined {
    return this.uids.get(uid);
  }

  get(namespace: string | undefined, name: string): KubeObject | undefined {
    return this.names.get(namespace ?? '')?.get(name);
  }

  list(namespace?: string): KubeObject[] {
    if (namespace !== undefined) return [...(this.names.get(namespace)?.values() ?? [])];
    return [...this.uids.values()];
  }

  values(): IterableIterator<KubeObject> {
    return this.uids.values();
  }

  clear(): void {
    this.uids.clear();
    this.names.clear();
  }

  private unindex(obj: KubeObject): void {
    const m = this.names.get(obj.metadata.namespace ?? '');
    const name = obj.metadata.name ?? '';
    // Only drop the name entry when it still points at this object (a same-named successor stays).
    if (m?.get(name) && uidOf(m.get(name)!) === uidOf(obj)) m.delete(name);
  }
}

/** uid, or namespace/name for objects without one (fixtures, stubs from Reference-mode events). */
export const uidOf = (o: KubeObject): string =>
  o.metadata.uid ?? `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;

export class RelayCache implements CacheView {
  private readonly stores = new Map<KindName, ObjectStore>();

  store(kind: KindName): ObjectStore {
    let s = this.stores.get(kind);
    if (!s) {
      s = new ObjectStore();
      this.stores.set(kind, s);
    }
    return s;
  }

  get(kind: KindName, namespace: string | undefined, name: string): KubeObject | undefined {
    return this.stores.get(kind)?.get(namespace, name);
  }

  list(kind: KindName, namespace?: string): KubeObject[] {
    return this.stores.get(kind)?.list(namespace) ?? [];
  }

  byUid(kind: KindName, uid: string): KubeObject | undefined {
    return this.stores.get(kind)?.getByUid(uid);
  }

  /** Object counts per kind (for logs and the relay's status). */
  sizes(): Record<string, number> {
    return Object.fromEntries([...this.stores].map(([k, s]) => [k, s.size]));
  }
}

/** Secrets are cached for their names, labels and owners only: their data never sits in the relay. */
export function stripSecret(obj: KubeObject): KubeObject {
  const { data: _d, stringData: _s, ...rest } = obj;
  return rest;
}
