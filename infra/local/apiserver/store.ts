/**
 * The object store: per-resource maps keyed by `ns/name`, one global resourceVersion counter
 * (like etcd's revision), a bounded ring of recent events for watches to resume from, and the
 * watcher fan-out. Everything here is synchronous, so "subscribe, then snapshot" happens under
 * one lock by construction: no write can land between the two.
 */
import { tooOld } from './status.ts';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoredEvent {
  rv: number;
  resource: string;
  type: EventType;
  obj: any;
  /** The object before this event (undefined for ADDED), so watchers with selectors can tell leave/enter. */
  prev: any;
}

export interface Watcher {
  resource: string;
  deliver(ev: StoredEvent): void;
  /** Ends the watch (its resource stopped being served). */
  close?(): void;
}

/** Durable storage of the current state (optional); called inside every acknowledged write. */
export interface Persistence {
  save(resource: string, key: string, obj: any, rv: number): void;
  remove(resource: string, key: string, rv: number): void;
  load(): { rv: number; objects: { resource: string; obj: any }[] };
  close(): void;
}

/** Stored objects are shared by reads, the watch history and cached JSON: freezing makes a stray write throw. */
function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}

export const objectKey = (ns: string | undefined, name: string): string => (ns ? `${ns}/${name}` : name);

class Bucket {
  readonly objects = new Map<string, any>();
  private sorted: string[] | undefined;
  keys(): string[] {
    if (!this.sorted) this.sorted = [...this.objects.keys()].sort();
    return this.sorted;
  }
  set(key: string, obj: any): void {
    if (!this.objects.has(key)) this.sorted = undefined;
    this.objects.set(key, obj);
  }
  delete(key: string): void {
    if (this.objects.delete(key)) this.sorted = undefined;
  }
}

export interface StoreOptions {
  /** How many events the watch history keeps (older resumes get 410 Expired). */
  historySize?: number;
  persistence?: Persistence | undefined;
}

export class Store {
  /** The last resourceVersion handed out. */
  rv = 0;
  /** Watches may resume from any RV >= this; older ones are told 410 Expired. */
  compactedRv = 0;
  private readonly buckets = new Map<string, Bucket>();
  private readonly ring: (StoredEvent | undefined)[];
  private ringStart = 0;
  private ringLen = 0;
  private readonly watchers = new Map<string, Set<Watcher>>();
  private readonly uids = new Map<string, { resource: string; key: string }>();
  /** owner uid → dependent uids (ownerReferences index, for garbage collection). */
  private readonly dependents = new Map<string, Set<string>>();
  private readonly persistence: Persistence | undefined;
  /** Called after every committed event (garbage collector, namespace and CRD lifecycle). */
  onCommit: ((ev: StoredEvent) => void) | undefined;

  constructor(opts: StoreOptions = {}) {
    this.ring = new Array(Math.max(16, opts.historySize ?? 10_000));
    this.persistence = opts.persistence;
    if (this.persistence) {
      const { rv, objects } = this.persistence.load();
      this.rv = rv;
      this.compactedRv = rv;
      for (const { resource, obj } of objects) this.index(resource, deepFreeze(obj));
    }
  }

  private bucket(resource: string): Bucket {
    let b = this.buckets.get(resource);
    if (!b) {
      b = new Bucket();
      this.buckets.set(resource, b);
    }
    return b;
  }

  private index(resource: string, obj: any): void {
    const key = objectKey(obj.metadata.namespace, obj.metadata.name);
    this.bucket(resource).set(key, obj);
    this.uids.set(obj.metadata.uid, { resource, key });
    for (const ref of obj.metadata.ownerReferences ?? []) {
      let s = this.dependents.get(ref.uid);
      if (!s) {
        s = new Set();
        this.dependents.set(ref.uid, s);
      }
      s.add(obj.metadata.uid);
    }
  }

  private unindexOwners(obj: any): void {
    for (const ref of obj.metadata.ownerReferences ?? []) {
      const s = this.dependents.get(ref.uid);
      if (s) {
        s.delete(obj.metadata.uid);
        if (s.size === 0) this.dependents.delete(ref.uid);
      }
    }
  }

  get(resource: string, ns: string | undefined, name: string): any {
    return this.buckets.get(resource)?.objects.get(objectKey(ns, name));
  }

  byUid(uid: string): { resource: string; obj: any } | undefined {
    const at = this.uids.get(uid);
    if (!at) return undefined;
    const obj = this.buckets.get(at.resource)?.objects.get(at.key);
    return obj ? { resource: at.resource, obj } : undefined;
  }

  dependentsOf(uid: string): string[] {
    return [...(this.dependents.get(uid) ?? [])];
  }

  /** Objects of a resource sorted by namespace/name, optionally one namespace only, after key `after` (exclusive). */
  list(resource: string, ns?: string, after?: string): any[] {
    const b = this.buckets.get(resource);
    if (!b) return [];
    const keys = b.keys();
    const prefix = ns ? `${ns}/` : '';
    // Keys of one namespace are contiguous in sort order: binary-search the start, stop at the first stranger.
    const from = after !== undefined && after >= prefix ? after : undefined;
    let lo = 0;
    let hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const k = keys[mid]!;
      if (from !== undefined ? k <= from : k < prefix) lo = mid + 1;
      else hi = mid;
    }
    const out: any[] = [];
    for (let i = lo; i < keys.length; i++) {
      const k = keys[i]!;
      if (prefix && !k.startsWith(prefix)) break;
      out.push(b.objects.get(k));
    }
    return out;
  }

  count(resource: string): number {
    return this.buckets.get(resource)?.objects.size ?? 0;
  }

  resources(): string[] {
    return [...this.buckets.keys()];
  }

  /** Stores a created or updated object under the next resourceVersion and tells the watchers. */
  put(resource: string, obj: any, prev: any): any {
    const rv = ++this.rv;
    obj.metadata.resourceVersion = String(rv);
    deepFreeze(obj);
    const key = objectKey(obj.metadata.namespace, obj.metadata.name);
    this.persistence?.save(resource, key, obj, rv);
    if (prev) this.unindexOwners(prev);
    this.index(resource, obj);
    this.emit({ rv, resource, type: prev ? 'MODIFIED' : 'ADDED', obj, prev });
    return obj;
  }

  /** Removes an object; the DELETED event carries its last state with the deletion's resourceVersion. */
  remove(resource: string, current: any): any {
    const rv = ++this.rv;
    const obj = deepFreeze({ ...current, metadata: { ...current.metadata, resourceVersion: String(rv) } });
    const key = objectKey(obj.metadata.namespace, obj.metadata.name);
    this.persistence?.remove(resource, key, rv);
    this.buckets.get(resource)?.delete(key);
    this.uids.delete(obj.metadata.uid);
    this.unindexOwners(current);
    this.emit({ rv, resource, type: 'DELETED', obj, prev: current });
    return obj;
  }

  private emit(ev: StoredEvent): void {
    if (this.ringLen === this.ring.length) {
      const evicted = this.ring[this.ringStart]!;
      this.compactedRv = Math.max(this.compactedRv, evicted.rv);
      this.ringStart = (this.ringStart + 1) % this.ring.length;
      this.ringLen--;
    }
    this.ring[(this.ringStart + this.ringLen) % this.ring.length] = ev;
    this.ringLen++;
    const ws = this.watchers.get(ev.resource);
    if (ws) for (const w of ws) w.deliver(ev);
    this.onCommit?.(ev);
  }

  subscribe(w: Watcher): () => void {
    let s = this.watchers.get(w.resource);
    if (!s) {
      s = new Set();
      this.watchers.set(w.resource, s);
    }
    s.add(w);
    return () => {
      s.delete(w);
    };
  }

  /** Ends every watch of a resource (used when a CRD is deleted, as the real server does). */
  closeWatchers(resource: string): void {
    for (const w of [...(this.watchers.get(resource) ?? [])]) w.close?.();
  }

  watcherCount(): number {
    let n = 0;
    for (const s of this.watchers.values()) n += s.size;
    return n;
  }

  /** Events of one resource after `rv`; 410 Expired when the history no longer reaches back that far. */
  eventsSince(resource: string, rv: number): StoredEvent[] {
    if (rv < this.compactedRv) throw tooOld(rv, this.compactedRv + 1);
    const out: StoredEvent[] = [];
    for (let i = 0; i < this.ringLen; i++) {
      const ev = this.ring[(this.ringStart + i) % this.ring.length]!;
      if (ev.rv > rv && ev.resource === resource) out.push(ev);
    }
    return out;
  }

  /** Forgets the event history: watches resuming from older RVs get 410. */
  compact(): void {
    this.compactedRv = this.rv;
    this.ring.fill(undefined);
    this.ringStart = 0;
    this.ringLen = 0;
  }

  close(): void {
    this.persistence?.close();
  }
}
