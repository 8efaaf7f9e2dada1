/**
 * Reads of objects a function only reads — the Cluster (pause, readiness) and the Metal3Cluster —
 * shared by the deliveries of one function in this process: a GET in flight is joined, and its
 * answer is reused for `maxAgeMs` after it came back. It stands in for the informer cache a
 * controller reads these objects from (ADR 024). Never used for an object a pass writes or
 * conditions a write on.
 *
 * An informer's cache holds at least the version whose event woke the reconcile. Here a delivery
 * uses only answers from GETs issued after its message's `observedAt` (plus a clock-skew margin),
 * so it sees every change its event reflects; a message without it (a replay by hand) reads fresh.
 * And a shared answer only ever lets a pass go on: each read says which answers let it proceed
 * (`proceeds`), and one that would stop it (paused, not ready, not found) is read again before the
 * pass stops and waits for the object's next event.
 *
 * Answers are frozen: every sharer gets the same object.
 */
import type { Cluster } from '../api/capi.ts';
import type { Metal3Cluster } from '../api/metal3cluster.ts';
import type { Metal3DataTemplate } from '../api/metal3datatemplate.ts';
import { R } from '../api/resources.ts';
import type { KubeClient } from './client.ts';

export interface SharedReadsOptions {
  /** How long an answer is reused after it came back; 0 = only GETs in flight are joined. */
  maxAgeMs: number;
  /**
   * How far the relay's clock may be ahead of this process's: an answer serves a message only
   * when its GET was issued this long after the message's `observedAt` (default 100 ms).
   */
  clockSkewMs?: number | undefined;
  /** Clock in ms since epoch, the clock of `observedAt` (tests). */
  now?: (() => number) | undefined;
}

function deepFreeze(v: unknown): void {
  if (v === null || typeof v !== 'object' || Object.isFrozen(v)) return;
  Object.freeze(v);
  for (const x of Object.values(v)) deepFreeze(x);
}

/** Entries beyond this are swept of expired answers (one per Cluster in practice). */
const SWEEP_AT = 256;
const DEFAULT_CLOCK_SKEW_MS = 100;

interface Entry<T> {
  value: Promise<T>;
  /** When the GET was issued. */
  issuedAt: number;
  /** When its answer came back (undefined while in flight). */
  at?: number;
}

/** One kind's shared answers, by key. */
class Memo<T> {
  private readonly entries = new Map<string, Entry<T>>();
  private readonly opts: Required<SharedReadsOptions>;

  constructor(opts: Required<SharedReadsOptions>) {
    this.opts = opts;
  }

  async get(
    key: string,
    load: () => Promise<T>,
    proceeds: (v: T) => boolean,
    observedAt: number | undefined,
  ): Promise<T> {
    const hit = this.entries.get(key);
    if (
      hit &&
      observedAt !== undefined &&
      hit.issuedAt >= observedAt + this.opts.clockSkewMs &&
      // maxAgeMs 0 joins only a GET in flight, even when its answer came back this millisecond.
      (hit.at === undefined || (this.opts.maxAgeMs > 0 && this.opts.now() - hit.at <= this.opts.maxAgeMs))
    ) {
      const v = await hit.value;
      if (proceeds(v)) return v;
    }
    return this.load(key, load);
  }

  private load(key: string, load: () => Promise<T>): Promise<T> {
    const t = this.opts.now();
    if (this.entries.size >= SWEEP_AT)
      for (const [k, e] of this.entries)
        if (e.at !== undefined && t - e.at > this.opts.maxAgeMs) this.entries.delete(k);
    const entry: Entry<T> = {
      issuedAt: t,
      value: load().then(
        (v) => {
          deepFreeze(v);
          entry.at = this.opts.now();
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

/** Most immutable specs kept per scope (a few templates in practice); the oldest used goes first. */
const IMMUTABLE_ENTRIES = 64;

/** A template's identity and spec: all a renderer may take from a copy kept since its first read. */
export interface TemplateSpec {
  metadata: { name: string; namespace: string; uid: string };
  spec: Metal3DataTemplate['spec'];
}

/**
 * Specs that cannot change while their object lives (the CRD's `self == oldSelf` rule), kept by
 * uid with no age limit (ADR 034): a uid names one object for good, so a later read could only
 * return the same spec or nothing. Only the spec and identity are kept, never the status.
 */
class ImmutableSpecs {
  private readonly entries = new Map<string, Promise<TemplateSpec | undefined>>();

  async get(uid: string, load: () => Promise<TemplateSpec | undefined>): Promise<TemplateSpec | undefined> {
    const hit = this.entries.get(uid);
    if (hit) {
      // Least recently used last.
      this.entries.delete(uid);
      this.entries.set(uid, hit);
      return hit;
    }
    const entry = load().then(
      (v) => {
        // Another object under the name (or none): nothing to keep for this uid.
        if (v?.metadata.uid !== uid) this.entries.delete(uid);
        else deepFreeze(v);
        return v;
      },
      (e: unknown) => {
        this.entries.delete(uid);
        throw e;
      },
    );
    this.entries.set(uid, entry);
    if (this.entries.size > IMMUTABLE_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    return entry;
  }
}

/** The shared reads of one scope (a function: what its own Lambda container would share). */
export class SharedReads {
  private readonly clusters: Memo<Cluster | undefined>;
  private readonly metal3Clusters: Memo<Metal3Cluster | undefined>;
  private readonly templates = new ImmutableSpecs();
  private readonly client: KubeClient;

  constructor(client: KubeClient, opts: SharedReadsOptions) {
    this.client = client;
    const full: Required<SharedReadsOptions> = {
      maxAgeMs: opts.maxAgeMs,
      clockSkewMs: opts.clockSkewMs ?? DEFAULT_CLOCK_SKEW_MS,
      now: opts.now ?? Date.now,
    };
    this.clusters = new Memo(full);
    this.metal3Clusters = new Memo(full);
  }

  /** The reads of one delivery, whose message was observed at `observedAt`. */
  forMessage(observedAt: number | undefined): DeliveryReads {
    return {
      cluster: (ns, name, proceeds) =>
        this.clusters.get(`${ns}/${name}`, () => this.client.get(R.Cluster, ns, name), proceeds, observedAt),
      metal3Cluster: (ns, name, proceeds) =>
        this.metal3Clusters.get(
          `${ns}/${name}`,
          () => this.client.get(R.Metal3Cluster, ns, name),
          proceeds,
          observedAt,
        ),
      templateSpec: (ns, name, uid) =>
        this.templates.get(uid, async () => {
          const t = await this.client.get(R.Metal3DataTemplate, ns, name);
          if (!t) return undefined;
          const { metadata: m, spec } = t;
          return { metadata: { name: m.name!, namespace: m.namespace!, uid: m.uid! }, spec };
        }),
    };
  }
}

/**
 * What one delivery reads through its function's shared reads: an answer for which `proceeds` is
 * false, or one from before the delivery's message, is a fresh GET's.
 */
export interface DeliveryReads {
  cluster(
    ns: string,
    name: string,
    proceeds: (c: Cluster | undefined) => boolean,
  ): Promise<Cluster | undefined>;
  metal3Cluster(
    ns: string,
    name: string,
    proceeds: (c: Metal3Cluster | undefined) => boolean,
  ): Promise<Metal3Cluster | undefined>;
  /**
   * The spec of the Metal3DataTemplate `ns/name` whose uid is `uid` (its spec is immutable): kept
   * from this scope's first read; the answer of a fresh GET when the name now holds another uid.
   */
  templateSpec(ns: string, name: string, uid: string): Promise<TemplateSpec | undefined>;
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
