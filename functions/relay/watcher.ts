/**
 * List + watch of one kind, made robust the way kubernetes-fluent-client does it (JS watches stop
 * silently; ApiServerSource loses 410 gaps):
 *   - LIST, then WATCH from the list's resourceVersion, with bookmarks keeping it fresh;
 *   - on 410 (HTTP or ERROR event) re-list and diff against the uid-keyed store, emitting the
 *     ADDED / MODIFIED / DELETED the gap swallowed;
 *   - a watchdog reconnects (from the last resourceVersion) when nothing, not even a bookmark,
 *     arrived for `silenceMs`;
 *   - a periodic resync (with jitter) re-emits every object of the store as a safety net, as
 *     client-go's informer does: no LIST, the watch stays open (ADR 023);
 *   - errors back off exponentially with jitter; a clean end reconnects at once.
 * Events are emitted synchronously after the store is updated, so routing sees the new state.
 */

import { messageOf, recordOf } from '../../shared/api/json.ts';
import type { KindName } from '../../shared/api/resources.ts';
import { envelopeOf, K } from '../../shared/api/resources.ts';
import type { KubeClient, WatchEvent } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { type Logger, silentLogger } from '../../shared/observability/logger.ts';
import type { ObjectStore } from '../../shared/routing/cache.ts';
import { uidOf } from '../../shared/routing/cache.ts';
import type { RoutingEvent } from '../../shared/routing/index.ts';
import type { PipelineMetrics } from '../../shared/runtimes/metrics.ts';

export interface WatcherOptions {
  client: KubeClient;
  kind: KindName;
  /** Watch one namespace only (default: all). */
  namespace?: string | undefined;
  store: ObjectStore;
  onEvent: (ev: RoutingEvent) => void;
  /** Applied to every object before it is stored or emitted (Secrets lose their data). */
  transform?: ((o: KubeObject) => KubeObject) | undefined;
  /** `management` or `<ns>/<cluster>` (stamped on events). */
  cluster?: string | undefined;
  /** Period of the resync (re-emits the store, no LIST); 0 disables (default RESYNC_DEFAULT_MS). */
  resyncMs?: number | undefined;
  /** ± fraction of resyncMs (default 0.1). */
  jitter?: number | undefined;
  /** Reconnect when the stream is silent this long (default 90 s; bookmarks come every ~60 s). */
  silenceMs?: number | undefined;
  /** Server-side watch timeout (default 5–10 min, randomised so watches do not end together). */
  watchTimeoutSeconds?: number | undefined;
  pageSize?: number | undefined;
  /** A LIST that has not answered after this long counts as failed and is retried (default 60 s). */
  listTimeoutMs?: number | undefined;
  log?: Logger | undefined;
  metrics?: PipelineMetrics | undefined;
}

type WatchEnd = 'closed' | 'gone' | 'silence' | 'error' | 'stopped';

/**
 * The resync period: 10 hours (±10 %), controller-runtime's SyncPeriod. A safety net for messages
 * lost after the watch (a send given up, a crash of the direct runner), not for timing: functions
 * requeue-after for anything time based, and 410 re-lists diff what a watch gap missed (ADR 023).
 */
export const RESYNC_DEFAULT_MS = 10 * 3600_000;

/** Why the relay listed a kind: its start, a 410, a failed list (resyncs do not list, ADR 023). */
export const RELIST_CAUSES = ['start', 'gone', 'error'] as const;
export type RelistCause = (typeof RELIST_CAUSES)[number];
export type RelistCounts = Record<RelistCause, number>;
export const noRelists = (): RelistCounts => ({ start: 0, gone: 0, error: 0 });

export class ResourceWatcher {
  resourceVersion = '';
  /** Counters for tests and logs. */
  readonly counts = { relists: 0, resyncs: 0, watches: 0, silences: 0, gones: 0, errors: 0, events: 0 };
  /** LISTs by cause (counts.relists is their sum). */
  readonly relistsByCause: RelistCounts = noRelists();
  private readonly o: WatcherOptions;
  private readonly log: Logger;
  private stopped = false;
  private resyncTimer: NodeJS.Timeout | undefined;
  private finishCurrent: ((r: WatchEnd) => void) | undefined;
  private loop: Promise<void> | undefined;
  private syncedResolve: (() => void) | undefined;
  private syncedReject: ((e: unknown) => void) | undefined;
  private wake: (() => void) | undefined;
  private readonly stopped$: Promise<never>;
  private signalStop: () => void = () => {};

  constructor(opts: WatcherOptions) {
    this.o = opts;
    this.log = (opts.log ?? silentLogger).child({ watch: opts.kind, cluster: opts.cluster ?? 'management' });
    // Rejects on stop(): an in-flight LIST is abandoned rather than awaited.
    this.stopped$ = new Promise<never>((_, reject) => {
      this.signalStop = () => reject(new Error('stopped'));
    });
    this.stopped$.catch(() => {});
  }

  /** Starts the loop; resolves after the first LIST has been emitted (rejects if it fails, once). */
  start(): Promise<void> {
    const synced = new Promise<void>((resolve, reject) => {
      this.syncedResolve = resolve;
      this.syncedReject = reject;
    });
    this.loop = this.run();
    return synced;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.resyncTimer);
    this.signalStop();
    this.finishCurrent?.('stopped');
    this.wake?.();
    await this.loop;
  }

  /** Forces a reconnect now (tests, and the relay when credentials rotate). */
  reconnect(): void {
    this.finishCurrent?.('closed');
  }

  /** Arms the next resync (jittered so kinds and relays do not resync together). */
  private scheduleResync(): void {
    const every = this.o.resyncMs ?? RESYNC_DEFAULT_MS;
    if (every <= 0 || this.stopped) return;
    const j = this.o.jitter ?? 0.1;
    // setTimeout fires at once past 2^31-1 ms (~24.8 days): a longer --resync is that long.
    const ms = Math.min(2 ** 31 - 1, every * (1 - j + 2 * j * Math.random()));
    this.resyncTimer = setTimeout(() => this.resync(), ms);
    this.resyncTimer.unref();
  }

  /**
   * Re-emits every stored object as a resync, from memory: the store is what the watch has made
   * of the server's state, and a gap in the watch is a 410 that re-lists and diffs anyway.
   */
  private resync(): void {
    if (this.stopped) return;
    this.counts.resyncs++;
    const cluster = this.o.cluster;
    for (const o of [...this.o.store.values()])
      this.emit({ type: 'MODIFIED', object: o, old: o, resync: true, cluster });
    this.scheduleResync();
  }

  private async run(): Promise<void> {
    let relist: RelistCause | undefined = 'start';
    let failures = 0;
    while (!this.stopped) {
      if (relist) {
        try {
          // A LIST hung on a black-holed connection must not hold up stop().
          await Promise.race([this.relist(relist), this.stopped$]);
          relist = undefined;
          failures = 0;
          if (!this.resyncTimer) this.scheduleResync(); // armed once, after the first sync
          this.syncedResolve?.();
          this.syncedResolve = undefined;
        } catch (e) {
          if (this.stopped) return;
          failures++;
          this.counts.errors++;
          this.log.warn('list failed', { error: messageOf(e), failures });
          if (relist === 'start' && failures === 1 && this.syncedReject) {
            // The caller learns about a broken start once; the loop keeps trying regardless.
            this.syncedReject(e);
            this.syncedReject = undefined;
            this.syncedResolve = undefined;
          }
          // The retry is counted as an error re-list, not as another start or 410.
          relist = 'error';
          await this.backoff(failures);
          continue;
        }
      }
      const end = await this.watchOnce();
      if (end !== 'stopped') this.o.metrics?.relayWatchRestarts.inc({ kind: this.o.kind, cause: end });
      switch (end) {
        case 'stopped':
          return;
        case 'gone':
          this.counts.gones++;
          relist = 'gone';
          break;
        case 'silence':
          this.counts.silences++;
          this.log.info('watch silent; reconnecting', { resourceVersion: this.resourceVersion });
          break;
        case 'error':
          failures++;
          this.counts.errors++;
          await this.backoff(failures);
          break;
        case 'closed':
          failures = 0;
          break;
      }
    }
  }

  private async backoff(failures: number): Promise<void> {
    const ms = Math.min(30_000, 200 * 2 ** Math.min(failures, 8)) * (0.5 + Math.random() / 2);
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(t);
        resolve();
      };
    });
    this.wake = undefined;
  }

  private emit(ev: RoutingEvent): void {
    this.counts.events++;
    this.o.metrics?.relayEvents.inc({ kind: this.o.kind, type: ev.resync ? 'RESYNC' : ev.type });
    try {
      this.o.onEvent(ev);
    } catch (e) {
      // A routing bug must not stop the watch: log it and keep the stream.
      this.log.error('event handler failed', { error: messageOf(e) });
    }
  }

  private prepare(o: KubeObject): KubeObject {
    const t = this.o.transform ? this.o.transform(o) : o;
    t.kind ??= K[this.o.kind].kind;
    return t;
  }

  /** LIST and diff against the store: what changed in between is emitted, as the watch would have. */
  private async relist(cause: RelistCause): Promise<void> {
    this.counts.relists++;
    this.relistsByCause[cause]++;
    this.o.metrics?.relayRelists.inc({ kind: this.o.kind, cause });
    // Envelopes only: the relay must not choke on an object a function would reject.
    const list = await this.o.client.list(envelopeOf(K[this.o.kind]), this.o.namespace, {
      limit: this.o.pageSize ?? 500,
    });
    const store = this.o.store;
    const seen = new Set<string>();
    const cluster = this.o.cluster;
    for (const raw of list.items) {
      const obj = this.prepare(raw);
      const uid = uidOf(obj);
      seen.add(uid);
      const old = store.getByUid(uid);
      if (!old) {
        store.upsert(obj);
        this.emit({ type: 'ADDED', object: obj, cluster });
      } else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion) {
        store.upsert(obj);
        this.emit({ type: 'MODIFIED', object: obj, old, cluster });
      }
    }
    for (const old of [...store.values()]) {
      if (seen.has(uidOf(old))) continue;
      store.remove(old);
      this.emit({ type: 'DELETED', object: old, cluster });
    }
    this.resourceVersion = list.resourceVersion;
  }

  private watchOnce(): Promise<WatchEnd> {
    this.counts.watches++;
    return new Promise<WatchEnd>((resolve) => {
      let finished = false;
      let controller: AbortController | undefined;
      let silence: NodeJS.Timeout | undefined;
      const finish = (r: WatchEnd) => {
        if (finished) return;
        finished = true;
        clearTimeout(silence);
        this.finishCurrent = undefined;
        controller?.abort();
        resolve(r);
      };
      this.finishCurrent = finish;
      const silenceMs = this.o.silenceMs ?? 90_000;
      const arm = () => {
        clearTimeout(silence);
        silence = setTimeout(() => finish('silence'), silenceMs);
      };
      arm();
      const store = this.o.store;
      const cluster = this.o.cluster;
      const onEvent = (ev: WatchEvent) => {
        if (finished) return; // a late event of an abandoned stream: the next list/watch covers it
        arm();
        const obj = ev.object;
        switch (ev.type) {
          case 'BOOKMARK':
            if (obj.metadata.resourceVersion) this.resourceVersion = obj.metadata.resourceVersion;
            return;
          case 'ERROR': {
            // A Status: its code says whether the resourceVersion is gone (410).
            const code = typeof obj.code === 'number' ? obj.code : 0;
            finish(code === 410 ? 'gone' : 'error');
            return;
          }
          case 'ADDED':
          case 'MODIFIED': {
            const o = this.prepare(obj);
            const old = store.getByUid(uidOf(o));
            this.resourceVersion = o.metadata.resourceVersion ?? this.resourceVersion;
            if (old && old.metadata.resourceVersion === o.metadata.resourceVersion) return; // already seen
            store.upsert(o);
            this.emit({ type: old ? 'MODIFIED' : 'ADDED', object: o, old, cluster });
            return;
          }
          case 'DELETED': {
            const o = this.prepare(obj);
            this.resourceVersion = o.metadata.resourceVersion ?? this.resourceVersion;
            const old = store.remove(o);
            this.emit({ type: 'DELETED', object: o, old, cluster });
            return;
          }
        }
      };
      const timeoutSeconds = this.o.watchTimeoutSeconds ?? Math.round(300 + Math.random() * 300);
      this.o.client
        .watch(
          K[this.o.kind],
          this.o.namespace,
          { resourceVersion: this.resourceVersion, allowWatchBookmarks: true, timeoutSeconds },
          onEvent,
          (err) => finish(err ? (statusOf(err) === 410 ? 'gone' : 'error') : 'closed'),
        )
        .then(
          (c) => {
            controller = c;
            if (finished) c.abort();
          },
          (err) => finish(statusOf(err) === 410 ? 'gone' : 'error'),
        );
    });
  }
}

function statusOf(err: unknown): number {
  const e = recordOf(err);
  return Number(e.statusCode ?? e.code ?? 0);
}
