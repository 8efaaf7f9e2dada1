/**
 * Reads of objects a function only reads — the Cluster (pause, readiness) and the Metal3Cluster —
 * shared by the deliveries of one function in this process: a GET in flight is joined, and its
 * answer is reused for `maxAgeMs` after it came back. It stands in for the informer cache a
 * controller reads these objects from (ADR 024). Never used for an object a pass writes or
 * conditions a write on.
 *
 * A shared answer only ever lets a pass go on: each read says which answers let it proceed
 * (`proceeds`), and an answer that would stop it (paused, not ready, not found) is read again
 * fresh before the pass stops and waits for the object's next event. An informer's cache holds at
 * least the version whose event woke the reconcile; a shared answer may be older than the event
 * that woke this delivery, and waiting on it could wait for an event that has already come.
 *
 * Answers are frozen: every sharer gets the same object.
 */
import type { Cluster } from '../api/capi.ts';
import type { Metal3Cluster } from '../api/metal3cluster.ts';
import { R } from '../api/resources.ts';
import type { KubeClient } from './client.ts';

export interface SharedReadsOptions {
  /** How long an answer is reused after it came back; 0 = only GETs in flight are joined. */
  maxAgeMs: number;
  /** Monotonic clock in ms (tests). */
  now?: (() => number) | undefined;
}

function deepFreeze(v: unknown): void {
  if (v === null || typeof v !== 'object' || Object.isFrozen(v)) return;
  Object.freeze(v);
  for (const x of Object.values(v)) deepFreeze(x);
}

/** Entries beyond this are swept of expired answers (one per Cluster in practice). */
const SWEEP_AT = 256;

/** One kind's shared answers, by key. */
class Memo<T> {
  private readonly entries = new Map<string, { value: Promise<T>; at?: number }>();
  private readonly maxAgeMs: number;
  private readonly now: () => number;

  constructor(maxAgeMs: number, now: () => number) {
    this.maxAgeMs = maxAgeMs;
    this.now = now;
  }

  async get(key: string, load: () => Promise<T>, proceeds: (v: T) => boolean): Promise<T> {
    const hit = this.entries.get(key);
    if (hit && (hit.at === undefined || this.now() - hit.at <= this.maxAgeMs)) {
      const v = await hit.value;
      if (proceeds(v)) return v;
    }
    return this.load(key, load);
  }

  private load(key: string, load: () => Promise<T>): Promise<T> {
    const t = this.now();
    if (this.entries.size >= SWEEP_AT)
      for (const [k, e] of this.entries)
        if (e.at !== undefined && t - e.at > this.maxAgeMs) this.entries.delete(k);
    const entry: { value: Promise<T>; at?: number } = {
      value: load().then(
        (v) => {
          deepFreeze(v);
          entry.at = this.now();
          return v;
        },
        (e: unknown) => {
          // A failure is shared only with the sharers already waiting on it.
          if (this.entries.get(key) === entry) this.entries.delete(key);
          throw e;
        },
      ),
    };
    this.entries.set(key, entry);
    return entry.value;
  }
}

/** The shared reads of one scope (a function: what its own Lambda container would share). */
export class SharedReads {
  private readonly clusters: Memo<Cluster | undefined>;
  private readonly metal3Clusters: Memo<Metal3Cluster | undefined>;
  private readonly client: KubeClient;

  constructor(client: KubeClient, opts: SharedReadsOptions) {
    this.client = client;
    const now = opts.now ?? (() => performance.now());
    this.clusters = new Memo(opts.maxAgeMs, now);
    this.metal3Clusters = new Memo(opts.maxAgeMs, now);
  }

  /** The Cluster; an answer for which `proceeds` is false is a fresh GET's. */
  cluster(
    namespace: string,
    name: string,
    proceeds: (c: Cluster | undefined) => boolean,
  ): Promise<Cluster | undefined> {
    return this.clusters.get(
      `${namespace}/${name}`,
      () => this.client.get(R.Cluster, namespace, name),
      proceeds,
    );
  }

  /** The Metal3Cluster; an answer for which `proceeds` is false is a fresh GET's. */
  metal3Cluster(
    namespace: string,
    name: string,
    proceeds: (c: Metal3Cluster | undefined) => boolean,
  ): Promise<Metal3Cluster | undefined> {
    return this.metal3Clusters.get(
      `${namespace}/${name}`,
      () => this.client.get(R.Metal3Cluster, namespace, name),
      proceeds,
    );
  }
}

/** One SharedReads per scope, made on first use. */
export class SharedReadScopes {
  private readonly scopes = new Map<string, SharedReads>();
  private readonly client: KubeClient;
  private readonly opts: SharedReadsOptions;

  constructor(client: KubeClient, opts: SharedReadsOptions) {
    this.client = client;
    this.opts = opts;
  }

  scope(name: string): SharedReads {
    let r = this.scopes.get(name);
    if (!r) {
      r = new SharedReads(this.client, this.opts);
      this.scopes.set(name, r);
    }
    return r;
  }
}
