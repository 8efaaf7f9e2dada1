/**
 * The server's window of history, as etcd's compaction and the watch cache give a real one: the
 * committed events since the last compaction, from which watches resume, continue tokens page a
 * consistent snapshot and `resourceVersionMatch=Exact` lists are answered. Outside the window
 * the callers answer 410 Expired.
 *
 * Compaction follows the apiserver's etcd compactor (storage/etcd3/compact.go): every interval it
 * compacts to the revision it recorded one interval earlier, so the window spans one to two
 * intervals (5 minutes by default). A cap on the number of events bounds memory under write
 * bursts, as the watch cache's capacity does (it evicts the oldest events when full).
 *
 * Events hold the stored objects themselves (frozen, shared with the store and with each other),
 * so the window costs one reference per event plus whatever a write really changed.
 */
import type { StoredEvent } from './store.ts';

export interface HistoryOptions {
  /** Most events kept; the oldest are dropped beyond it (default 100,000, like the watch cache's upper bound). */
  maxEvents?: number | undefined;
  /** Compaction period in ms (etcd's --etcd-compaction-interval); default 5 minutes, 0 = never. */
  compactionIntervalMs?: number | undefined;
  /** The server clock in ms (Clock.now). */
  now: () => number;
}

export const DEFAULT_COMPACTION_INTERVAL_MS = 5 * 60_000;

export class History {
  /** Every event with rv <= compactedRv is gone: resumes and snapshots need rv >= compactedRv. */
  compactedRv = 0;
  private ring: (StoredEvent | undefined)[];
  private start = 0;
  private len = 0;
  private readonly max: number;
  private readonly interval: number;
  private readonly now: () => number;
  private nextTick: number;
  /** The revision recorded at the previous tick (0 before the first: etcd does not compact on bootstrap). */
  private tickRv = 0;

  constructor(opts: HistoryOptions) {
    this.max = Math.max(16, opts.maxEvents ?? 100_000);
    this.ring = new Array(Math.min(this.max, 1024));
    this.interval = opts.compactionIntervalMs ?? DEFAULT_COMPACTION_INTERVAL_MS;
    this.now = opts.now;
    this.nextTick = this.interval > 0 ? this.now() + this.interval : Number.POSITIVE_INFINITY;
  }

  /** How many events the window holds. */
  get size(): number {
    return this.len;
  }

  private at(i: number): StoredEvent {
    return this.ring[(this.start + i) % this.ring.length]!;
  }

  record(ev: StoredEvent): void {
    if (this.len === this.max) this.dropOldest();
    if (this.len === this.ring.length) this.grow();
    this.ring[(this.start + this.len) % this.ring.length] = ev;
    this.len++;
  }

  private dropOldest(): void {
    const ev = this.at(0);
    this.compactedRv = Math.max(this.compactedRv, ev.rv);
    this.ring[this.start] = undefined;
    this.start = (this.start + 1) % this.ring.length;
    this.len--;
  }

  private grow(): void {
    const next = new Array<StoredEvent | undefined>(Math.min(this.max, this.ring.length * 2));
    for (let i = 0; i < this.len; i++) next[i] = this.at(i);
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
    while (this.len > 0 && this.at(0).rv <= rv) {
      this.ring[this.start] = undefined;
      this.start = (this.start + 1) % this.ring.length;
      this.len--;
    }
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
  stateAt(resource: string, rv: number, keyOf: (obj: any) => string): Map<string, any> {
    const out = new Map<string, any>();
    for (let i = this.firstAfter(rv); i < this.len; i++) {
      const ev = this.at(i);
      if (ev.resource !== resource) continue;
      const key = keyOf(ev.obj);
      // The first event after rv tells the state at rv: what it replaced (nothing for ADDED).
      if (!out.has(key)) out.set(key, ev.type === 'ADDED' ? undefined : ev.prev);
    }
    return out;
  }

  /** Forgets everything (a forced compaction to the current revision). */
  clear(currentRv: number): void {
    this.ring = new Array(Math.min(this.max, 1024));
    this.start = 0;
    this.len = 0;
    this.compactedRv = Math.max(this.compactedRv, currentRv);
  }
}
