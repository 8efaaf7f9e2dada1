/**
 * The object store: per-resource maps keyed by `ns/name`, one global resourceVersion counter
 * (like etcd's revision), a bounded ring of recent events for watches to resume from, and the
 * watcher fan-out. Everything here is synchronous, so "subscribe, then snapshot" happens under
 * one lock by construction: no write can land between the two.
 */
import { History } from './history.ts';
import { type KeySet, ListIndex, type Narrowing } from './list-index.ts';
import { intern, unsharedBytes } from './share.ts';
import { SortedKeys } from './sorted-keys.ts';
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

/**
 * Stored objects are shared by reads, the watch history and cached JSON: freezing makes a stray
 * write throw. On the way, each short string value becomes the copy already stored (share.ts
 * intern): a parsed request brings its own copy of every apiVersion, namespace and manager name.
 * A subtree already frozen was stored before (shared with the previous version): not walked.
 */
function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object' && !Object.isFrozen(v)) {
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      const x = o[k];
      // An own "__proto__" (from JSON) is left as it is: assigning it would set the prototype.
      if (typeof x === 'string') {
        if (k !== '__proto__') o[k] = intern(x);
      } else deepFreeze(x);
    }
    Object.freeze(v);
  }
  return v;
}

export const objectKey = (ns: string | undefined, name: string): string => (ns ? `${ns}/${name}` : name);
const keyOf = (o: any): string => objectKey(o.metadata.namespace, o.metadata.name);

class Bucket {
  readonly objects = new Map<string, any>();
  readonly keys = new SortedKeys();
  set(key: string, obj: any): void {
    if (!this.objects.has(key)) this.keys.add(key);
    this.objects.set(key, obj);
  }
  delete(key: string): void {
    if (this.objects.delete(key)) this.keys.delete(key);
  }
}

export interface StoreOptions {
  /** Most events the history keeps (older resumes, continue tokens and exact lists get 410 Expired). */
  historySize?: number | undefined;
  /** Most estimated bytes the history's events hold (see history.ts); older ones are dropped, as beyond `historySize`. */
  historyBytes?: number | undefined;
  /** How often the history is compacted (see history.ts); default 5 minutes, 0 = never. */
  compactionIntervalMs?: number | undefined;
  /** The server clock in ms; default Date.now. */
  now?: () => number;
  persistence?: Persistence | undefined;
}

export class Store {
  /** The last resourceVersion handed out. */
  rv = 0;
  private readonly buckets = new Map<string, Bucket>();
  readonly history: History;
  private readonly watchers = new Map<string, Set<Watcher>>();
  private readonly uids = new Map<string, { resource: string; key: string }>();
  /** resource → the indexes a list with a selector reads through (list-index.ts). */
  private readonly listIndexes = new Map<string, ListIndex>();
  /** owner uid → dependent uids (ownerReferences index, for garbage collection). */
  private readonly dependents = new Map<string, Set<string>>();
  private readonly persistence: Persistence | undefined;
  private readonly rvWaiters = new Set<{ rv: number; resolve: (ok: boolean) => void }>();
  /** Called after every committed event (garbage collector, namespace and CRD lifecycle). */
  onCommit: ((ev: StoredEvent) => void) | undefined;

  constructor(opts: StoreOptions = {}) {
    this.history = new History({
      maxEvents: opts.historySize,
      maxBytes: opts.historyBytes,
      compactionIntervalMs: opts.compactionIntervalMs,
      now: opts.now ?? Date.now,
    });
    this.persistence = opts.persistence;
    if (this.persistence) {
      const { rv, objects } = this.persistence.load();
      this.rv = rv;
      // A restarted server's window starts now, as a real one's watch cache does.
      this.history.compactTo(rv);
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
    this.listIndex(resource).update(key, obj, true);
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

  private listIndex(resource: string): ListIndex {
    let index = this.listIndexes.get(resource);
    if (!index) {
      index = new ListIndex();
      this.listIndexes.set(resource, index);
    }
    return index;
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

  /** Objects of a resource sorted by namespace/name, optionally one namespace only, from key `from` (inclusive). */
  list(resource: string, ns?: string, from?: string): any[] {
    return [...this.iterate(resource, [], ns, from)];
  }

  /**
   * The objects of `list`, lazily (a paged list stops at its page): only those the indexed term
   * of `terms` that selects the fewest selects (list-index.ts), or all when none is indexed. The
   * caller still tests every term on what it reads. Do not write to the store while iterating.
   */
  *iterate(resource: string, terms: readonly Narrowing[], ns?: string, from?: string): Generator<any> {
    const b = this.buckets.get(resource);
    if (!b) return;
    const prefix = ns ? `${ns}/` : '';
    // Keys of one namespace are contiguous in sort order: start there, stop at the first stranger.
    const start = from !== undefined && from > prefix ? from : prefix;
    let keys: KeySet = b.keys;
    for (const t of terms) {
      const selected = this.listIndex(resource).keys(t, b.objects);
      if (selected && selected.size < keys.size) keys = selected;
    }
    for (const k of keys.from(start, prefix)) yield b.objects.get(k);
  }

  count(resource: string): number {
    return this.buckets.get(resource)?.objects.size ?? 0;
  }

  resources(): string[] {
    return [...this.buckets.keys()];
  }

  /** Watches, continue tokens and exact lists may start from any RV >= this; older ones get 410. */
  get compactedRv(): number {
    this.history.tick(this.rv);
    return this.history.compactedRv;
  }

  /** Stores a created or updated object under the next resourceVersion and tells the watchers. */
  put(resource: string, obj: any, prev: any): any {
    this.history.tick(this.rv);
    const rv = ++this.rv;
    // Metadata shared with the previous version (share.ts) is frozen: this version gets its own.
    if (Object.isFrozen(obj.metadata)) obj.metadata = { ...obj.metadata };
    obj.metadata.resourceVersion = String(rv);
    deepFreeze(obj);
    const key = objectKey(obj.metadata.namespace, obj.metadata.name);
    this.persistence?.save(resource, key, obj, rv);
    if (prev) {
      this.unindexOwners(prev);
      this.listIndex(resource).update(key, prev, false);
    }
    this.index(resource, obj);
    this.emit({ rv, resource, type: prev ? 'MODIFIED' : 'ADDED', obj, prev });
    return obj;
  }

  /** Removes an object; the DELETED event carries its last state with the deletion's resourceVersion. */
  remove(resource: string, current: any): any {
    this.history.tick(this.rv);
    const rv = ++this.rv;
    const obj = deepFreeze({ ...current, metadata: { ...current.metadata, resourceVersion: String(rv) } });
    const key = objectKey(obj.metadata.namespace, obj.metadata.name);
    this.persistence?.remove(resource, key, rv);
    this.buckets.get(resource)?.delete(key);
    this.uids.delete(obj.metadata.uid);
    this.unindexOwners(current);
    this.listIndex(resource).update(key, current, false);
    this.emit({ rv, resource, type: 'DELETED', obj, prev: current });
    return obj;
  }

  private emit(ev: StoredEvent): void {
    this.history.record(ev, unsharedBytes(ev.obj, ev.prev));
    if (this.rvWaiters.size) {
      for (const w of this.rvWaiters) {
        if (ev.rv >= w.rv) {
          this.rvWaiters.delete(w);
          w.resolve(true);
        }
      }
    }
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

  /**
   * Events of one resource after `rv`; 410 Expired when the history no longer reaches back that
   * far, worded as the watch cache words it (cacher/watch_cache.go getAllEventsSinceLocked).
   */
  eventsSince(resource: string, rv: number): StoredEvent[] {
    const compacted = this.compactedRv;
    if (rv < compacted) throw tooOld(rv, compacted);
    return this.history.since(resource, rv);
  }

  /**
   * Objects of a resource as they were at `rv` (sorted, one namespace or all, keys >= `from`),
   * rebuilt from the current state and the history; the caller checks the window first.
   */
  listAt(resource: string, rv: number, ns?: string, from?: string): any[] {
    const changed = rv >= this.rv ? undefined : this.history.stateAt(resource, rv, objectKey);
    if (!changed || changed.size === 0) return this.list(resource, ns, from);
    const prefix = ns ? `${ns}/` : '';
    const inRange = (k: string) => k.startsWith(prefix) && (from === undefined || k >= from);
    const out: [string, any][] = [];
    for (const o of this.list(resource, ns, from)) {
      const k = keyOf(o);
      if (!changed.has(k)) out.push([k, o]);
    }
    for (const [k, o] of changed) if (o && inRange(k)) out.push([k, o]);
    out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return out.map((e) => e[1]);
  }

  /** Resolves true once the store reaches `rv`, false after `timeoutMs` (a "not older than" read). */
  waitForRv(rv: number, timeoutMs: number): Promise<boolean> {
    if (this.rv >= rv) return Promise.resolve(true);
    return new Promise((resolve) => {
      const w = { rv, resolve };
      this.rvWaiters.add(w);
      setTimeout(() => {
        if (this.rvWaiters.delete(w)) resolve(false);
      }, timeoutMs).unref();
    });
  }

  /** Forgets the event history: watches resuming from older RVs get 410. */
  compact(): void {
    this.history.clear(this.rv);
  }

  /** Runs the compactor's due ticks (the server calls this periodically, so an idle window shrinks too). */
  tick(): void {
    this.history.tick(this.rv);
  }

  close(): void {
    this.persistence?.close();
  }
}
