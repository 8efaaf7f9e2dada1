/**
 * The server's window of history, as etcd's compaction and the watch cache give a real one: the
 * committed events since the last compaction, from which watches resume, continue tokens page a
 * consistent snapshot and `resourceVersionMatch=Exact` lists are answered. Outside the window
 * the callers answer 410 Expired.
 *
 * Compaction follows the apiserver's etcd compactor (storage/etcd3/compact.go): every interval it
 * compacts to the revision it recorded one interval earlier, so the window spans one to two
 * intervals (5 minutes by default). A cap on the number of events and a budget of bytes bound
 * memory under write bursts, as the watch cache's capacity does (it evicts the oldest events when
 * full): either drops the oldest events and advances `compactedRv`, so older resumes get 410.
 *
 * Events hold the stored objects themselves (frozen, shared with the store and with each other),
 * so the window costs one reference per event plus whatever a write really changed: that is what
 * the byte budget counts (share.ts unsharedBytes, computed once per event by the store). Objects
 * with an entry per machine (an IPPool's allocations, a data template's indexes) make every
 * version cost O(fleet), so the window grew with the square of the fleet. Such a version (one
 * whose write left more than `thinBytes` unshared) is kept whole only while it is its object's
 * newest in the window; once superseded it is kept as the delta its successor's event records
 * (delta.ts), and rebuilt when a resume or a snapshot reads it. Now and then one is kept whole
 * (a keyframe, once the deltas since the last one add up to a whole version), so rebuilding a
 * version costs at most about two versions' worth of work and the window O(what writes changed).
 */
import { applyDeltas, type Delta, deltaBytes, diff } from './delta.ts';
import { unsharedBytes } from './share.ts';
import type { StoredEvent } from './store.ts';

export interface HistoryOptions {
  /** Most events kept; the oldest are dropped beyond it (default 100,000, like the watch cache's upper bound). */
  maxEvents?: number | undefined;
  /** Most estimated bytes the events may hold; the oldest are dropped beyond it (default DEFAULT_HISTORY_BYTES). */
  maxBytes?: number | undefined;
  /** Compaction period in ms (etcd's --etcd-compaction-interval); default 5 minutes, 0 = never. */
  compactionIntervalMs?: number | undefined;
  /** The server clock in ms (Clock.now). */
  now: () => number;
  /** A superseded version that cost more than this (estimated bytes) is kept as a delta (default DEFAULT_THIN_BYTES). */
  thinBytes?: number | undefined;
}

export const DEFAULT_COMPACTION_INTERVAL_MS = 5 * 60_000;
/** The byte budget's default (docs/adr/001: chosen against the 1,000-machine benchmark). */
export const DEFAULT_HISTORY_BYTES = 256 * 1024 * 1024;
/** Below this a version costs little more than the delta that would replace it. */
export const DEFAULT_THIN_BYTES = 8 * 1024;

/**
 * One event in the window. `obj` is held whole (`o`) or, once superseded, rebuilt from the newer
 * event of the same object (`newer`), whose `prevDelta` turns its object into this one's; `prev`
 * is held whole (`p`) or as `prevDelta` from this event's own object.
 */
class Entry implements StoredEvent {
  readonly rv: number;
  readonly resource: string;
  readonly type: StoredEvent['type'];
  /** The object's namespace and name (shared with its metadata): its key without rebuilding it. */
  readonly ns: string | undefined;
  readonly name: string;
  /** Estimated bytes held (what the byte budget counts). */
  size: number;
  /** The bytes of its version when whole (what the write did not share). */
  readonly whole: number;
  o: any;
  p: any;
  prevDelta: Delta | undefined;
  newer: Entry | undefined;
  constructor(ev: StoredEvent, bytes: number) {
    this.rv = ev.rv;
    this.resource = ev.resource;
    this.type = ev.type;
    this.ns = ev.obj.metadata.namespace;
    this.name = ev.obj.metadata.name;
    this.o = ev.obj;
    this.p = ev.prev;
    this.size = bytes;
    this.whole = bytes;
  }
  get obj(): any {
    return this.o ?? rebuild(this, false);
  }
  get prev(): any {
    return this.prevDelta ? rebuild(this, true) : this.p;
  }
}

const entryKey = (e: Entry): string => `${e.resource} ${e.ns ?? ''}/${e.name}`;

/** The last version rebuilt (a watcher reads an event's object more than once in a row). */
let lastBuilt: { e: Entry; prev: boolean; v: any } | undefined;

function rebuild(e: Entry, prev: boolean): any {
  if (lastBuilt?.e === e && lastBuilt.prev === prev) return lastBuilt.v;
  const deltas: Delta[] = prev ? [e.prevDelta!] : [];
  let x = e;
  while (x.o === undefined) {
    x = x.newer!;
    deltas.push(x.prevDelta!);
  }
  // Collected from this event toward the newest; applied from the newest back.
  const v = applyDeltas(x.o, deltas.reverse());
  lastBuilt = { e, prev, v };
  return v;
}

export class History {
  /** Every event with rv <= compactedRv is gone: resumes and snapshots need rv >= compactedRv. */
  compactedRv = 0;
  private ring: (Entry | undefined)[];
  private held = 0;
  /** Per object (resource and key): its newest event in the window, and the delta bytes since its last version kept whole. */
  private readonly newest = new Map<string, { e: Entry; since: number }>();
  private readonly thinBytes: number;
  private start = 0;
  private len = 0;
  private readonly max: number;
  private readonly maxBytes: number;
  private readonly interval: number;
  private readonly now: () => number;
  private nextTick: number;
  /** The revision recorded at the previous tick (0 before the first: etcd does not compact on bootstrap). */
  private tickRv = 0;

  constructor(opts: HistoryOptions) {
    this.max = Math.max(16, opts.maxEvents ?? 100_000);
    this.maxBytes = opts.maxBytes ?? DEFAULT_HISTORY_BYTES;
    this.ring = new Array(Math.min(this.max, 1024));
    this.thinBytes = opts.thinBytes ?? DEFAULT_THIN_BYTES;
    this.interval = opts.compactionIntervalMs ?? DEFAULT_COMPACTION_INTERVAL_MS;
    this.now = opts.now;
    this.nextTick = this.interval > 0 ? this.now() + this.interval : Number.POSITIVE_INFINITY;
  }

  /** How many events the window holds. */
  get size(): number {
    return this.len;
  }

  /** The estimated bytes the events hold (what `maxBytes` bounds). */
  get bytes(): number {
    return this.held;
  }

  private at(i: number): Entry {
    return this.ring[(this.start + i) % this.ring.length]!;
  }

  /** Adds the newest event; `bytes` is its estimated cost (what its version does not share with the previous). */
  record(ev: StoredEvent, bytes = 0): void {
    if (this.len === this.max) this.dropOldest();
    if (this.len === this.ring.length) this.grow();
    const e = new Entry(ev, bytes);
    const key = entryKey(e);
    const last = this.newest.get(key);
    if (last && ev.type === 'MODIFIED' && bytes > this.thinBytes && last.e.o === ev.prev) this.thin(last, e);
    this.newest.set(key, { e, since: last?.since ?? 0 });
    this.ring[(this.start + this.len) % this.ring.length] = e;
    this.len++;
    this.held += e.size;
    // The newest stays even alone over the budget: one large write does not expire a watcher one event behind.
    while (this.held > this.maxBytes && this.len > 1) this.dropOldest();
  }

  /**
   * `e` supersedes `last.e`'s version: the older one is kept as the delta from `e`'s, unless the
   * deltas since the last version kept whole would then cost more than a whole one (a keyframe).
   */
  private thin(last: { e: Entry; since: number }, e: Entry): void {
    const d = diff(e.o, e.p);
    if (!d) return;
    const cost = deltaBytes(d, (v) => unsharedBytes(v, undefined));
    if (last.since + cost > last.e.whole) {
      last.since = 0;
      return;
    }
    last.since += cost;
    e.prevDelta = d;
    e.p = undefined;
    e.size += cost;
    const old = last.e;
    old.o = undefined;
    old.newer = e;
    // Its whole version is gone; what it still holds is its own prev (a delta, or shared with the version before).
    this.held -= old.whole;
    old.size -= old.whole;
  }

  private dropOldest(): void {
    this.compactedRv = Math.max(this.compactedRv, this.at(0).rv);
    this.shift();
  }

  private shift(): void {
    const e = this.ring[this.start]!;
    this.held -= e.size;
    this.ring[this.start] = undefined;
    this.start = (this.start + 1) % this.ring.length;
    this.len--;
    if (e.newer === undefined) {
      const key = entryKey(e);
      if (this.newest.get(key)?.e === e) this.newest.delete(key);
    }
  }

  private grow(): void {
    const n = Math.min(this.max, this.ring.length * 2);
    const next = new Array<Entry | undefined>(n);
    for (let i = 0; i < this.len; i++) next[i] = this.ring[(this.start + i) % this.ring.length];
    this.ring = next;
    this.start = 0;
  }

  /** Runs the compactor's ticks that are due by the clock; `currentRv` is the revision now. */
  tick(currentRv: number): void {
    const now = this.now();
    if (now < this.nextTick) return;
    // Several intervals may have passed (an idle server, or a test advancing its clock): each tick
    // compacts to what the previous one recorded, so two or more ticks compact to the current revision.
    let ticks = 0;
    while (now >= this.nextTick && ticks < 2) {
      if (this.tickRv > 0) this.compactTo(this.tickRv);
      this.tickRv = currentRv;
      this.nextTick += this.interval;
      ticks++;
    }
    if (now >= this.nextTick) this.nextTick = now + this.interval;
  }

  /** Forgets every event up to and including `rv`. */
  compactTo(rv: number): void {
    while (this.len > 0 && this.at(0).rv <= rv) this.shift();
    this.compactedRv = Math.max(this.compactedRv, rv);
  }

  /** Index of the first event with rv > `rv` (events are in rv order). */
  private firstAfter(rv: number): number {
    let lo = 0;
    let hi = this.len;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.at(mid).rv <= rv) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Whether the window reaches back to `rv` (a resume from it or a snapshot at it can be served). */
  covers(rv: number): boolean {
    return rv >= this.compactedRv;
  }

  /** Events of one resource after `rv`, in order; the caller checks `covers(rv)` first. */
  since(resource: string, rv: number): StoredEvent[] {
    const out: StoredEvent[] = [];
    for (let i = this.firstAfter(rv); i < this.len; i++) {
      const ev = this.at(i);
      if (ev.resource === resource) out.push(ev);
    }
    return out;
  }

  /**
   * What differs between the state at `rv` and now, for one resource: object key → the object
   * as it was at `rv` (undefined: it did not exist then). Keys not in the map are unchanged.
   */
  stateAt(
    resource: string,
    rv: number,
    keyOf: (ns: string | undefined, name: string) => string,
  ): Map<string, any> {
    const out = new Map<string, any>();
    for (let i = this.firstAfter(rv); i < this.len; i++) {
      const ev = this.at(i);
      if (ev.resource !== resource) continue;
      const key = keyOf(ev.ns, ev.name);
      // The first event after rv tells the state at rv: what it replaced (nothing for ADDED).
      if (!out.has(key)) out.set(key, ev.type === 'ADDED' ? undefined : ev.prev);
    }
    return out;
  }

  /** Forgets everything (a forced compaction to the current revision). */
  clear(currentRv: number): void {
    this.ring = new Array(Math.min(this.max, 1024));
    this.newest.clear();
    this.start = 0;
    this.len = 0;
    this.held = 0;
    this.compactedRv = Math.max(this.compactedRv, currentRv);
  }
}
