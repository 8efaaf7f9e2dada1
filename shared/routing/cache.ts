/**
 * The relay's memory of what it watches: per kind, objects by uid (the identity a re-list diff
 * needs) and by namespace/name (what routing looks up). Related lookups in the routing table read
 * this, so routing one event costs no API call. Secrets are kept without their data.
 */
import type { KindName } from '../api/resources.ts';
import { withoutManagedFields } from '../kube/managed-fields.ts';
import type { KubeObject } from '../kube/types.ts';
import { INDEXES, type IndexDef, type IndexName, indexesOf } from './indexes.ts';

/** What the routing table may read: synchronous, side-effect free. */
export interface CacheView {
  get(kind: KindName, namespace: string | undefined, name: string): KubeObject | undefined;
  /** All objects of a kind, or those of one namespace. */
  list(kind: KindName, namespace?: string): KubeObject[];
  byUid(kind: KindName, uid: string): KubeObject | undefined;
  /** The objects of `namespace` an index (indexes.ts) finds under `<namespace>/<value>`. */
  byIndex(index: IndexName, namespace: string, value: string): KubeObject[];
}

/** One kind's objects, uid-keyed, with a namespace/name index and the kind's secondary indexes. */
export class ObjectStore {
  private readonly uids = new Map<string, KubeObject>();
  private readonly names = new Map<string, Map<string, KubeObject>>();
  /** Index name → key → uid → object. */
  private readonly indexed = new Map<IndexName, Map<string, Map<string, KubeObject>>>();

  private readonly indexes: readonly [IndexName, IndexDef][];

  constructor(indexes: readonly [IndexName, IndexDef][] = []) {
    this.indexes = indexes;
    for (const [name] of indexes) this.indexed.set(name, new Map());
  }

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
    this.indexKeys(obj, uid);
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

  /** The objects `index` finds under `key`; an index this store does not keep is an error. */
  byIndex(index: IndexName, key: string): KubeObject[] {
    const byKey = this.indexed.get(index);
    if (!byKey) throw new Error(`no index ${index} on this store`);
    return [...(byKey.get(key)?.values() ?? [])];
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
    for (const byKey of this.indexed.values()) byKey.clear();
  }

  private indexKeys(obj: KubeObject, uid: string): void {
    for (const [name, def] of this.indexes) {
      const byKey = this.indexed.get(name)!;
      for (const key of def.keys(obj)) {
        let objs = byKey.get(key);
        if (!objs) {
          objs = new Map();
          byKey.set(key, objs);
        }
        objs.set(uid, obj);
      }
    }
  }

  private unindex(obj: KubeObject): void {
    const uid = uidOf(obj);
    for (const [name, def] of this.indexes) {
      const byKey = this.indexed.get(name)!;
      for (const key of def.keys(obj)) {
        const objs = byKey.get(key);
        if (objs?.get(uid) !== obj) continue;
        objs.delete(uid);
        if (objs.size === 0) byKey.delete(key);
      }
    }
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
      s = new ObjectStore(indexesOf(kind));
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

  byIndex(index: IndexName, namespace: string, value: string): KubeObject[] {
    const found = this.stores.get(INDEXES[index].kind)?.byIndex(index, `${namespace}/${value}`) ?? [];
    return found.filter((o) => (o.metadata.namespace ?? '') === namespace);
  }

  /** Object counts per kind (for logs and the relay's status). */
  sizes(): Record<string, number> {
    return Object.fromEntries([...this.stores].map(([k, s]) => [k, s.size]));
  }
}

/** Secrets are cached for their names, labels and owners only: their data never sits in the relay. */
export function stripSecret(obj: KubeObject): KubeObject {
  const { data: _d, stringData: _s, ...rest } = withoutManagedFields(obj);
  return rest;
}
