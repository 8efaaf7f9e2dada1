/**
 * One watch stream: initial state (synthetic ADDED) or a resume from the event history, then
 * live events filtered by namespace and selectors, with objects leaving or entering a selector
 * turned into DELETED/ADDED, bookmarks (periodic, and a last one before the clean end at
 * timeoutSeconds) carrying the current revision, and 410 for resumes the
 * history no longer covers or for a consumer too slow to keep up (bounded memory).
 */
import type { FieldRequirement } from './fields.ts';
import { matchesFields } from './fields.ts';
import { apiVersionOf, type ServedKind } from './kinds.ts';
import { type LabelSelector, matchesLabels } from './labels.ts';
import { ApiError, expired } from './status.ts';
import type { Store, StoredEvent } from './store.ts';

export interface WatchSink {
  /** Writes one serialized line; returns false when the transport buffer is above its mark. */
  write(line: string): void;
  /** Bytes accepted but not yet flushed to the client. */
  buffered(): number;
  end(): void;
}

export interface WatchParams {
  kind: ServedKind;
  namespace?: string | undefined;
  labels: LabelSelector;
  fields: FieldRequirement[];
  resourceVersion?: string | undefined;
  sendInitialEvents?: boolean | undefined;
  allowBookmarks: boolean;
  timeoutSeconds?: number | undefined;
  /** Renders an event's object differently (Table output for kubectl); default: the object. */
  render?: ((obj: any, type: string) => any) | undefined;
}

export interface WatchLimits {
  /** A consumer with more unsent bytes than this gets 410 and is closed. */
  maxBufferedBytes: number;
  bookmarkIntervalMs: number;
  /** End the stream (fault injection) after this many events. */
  dropAfterEvents?: number | undefined;
}

/** Lines cached on the event, per apiVersion and type, so fan-out to N watchers serializes once. */
const lineCache = new WeakMap<object, Map<string, string>>();

export class WatchStream {
  private unsubscribe: (() => void) | undefined;
  private bookmarkTimer: NodeJS.Timeout | undefined;
  private timeoutTimer: NodeJS.Timeout | undefined;
  private sent = 0;
  private closed = false;
  /** Events at or before this revision are not sent (a resume from a revision the server has not reached yet). */
  private fromRv = 0;
  private readonly store: Store;
  private readonly p: WatchParams;
  private readonly sink: WatchSink;
  private readonly limits: WatchLimits;
  private readonly apiVersion: string;
  onClose: (() => void) | undefined;

  constructor(store: Store, params: WatchParams, sink: WatchSink, limits: WatchLimits) {
    this.store = store;
    this.p = params;
    this.sink = sink;
    this.limits = limits;
    this.apiVersion = apiVersionOf(params.kind);
  }

  private matches(obj: any): boolean {
    if (!obj) return false;
    if (this.p.namespace && obj.metadata.namespace !== this.p.namespace) return false;
    return matchesLabels(this.p.labels, obj.metadata.labels) && matchesFields(this.p.fields, obj);
  }

  /** Sends the initial events and subscribes, in one synchronous step (no write can slip between). */
  start(): void {
    const rvParam = this.p.resourceVersion;
    const initial =
      rvParam === undefined || rvParam === '' || rvParam === '0' || this.p.sendInitialEvents === true;
    if (initial && this.p.sendInitialEvents !== false) {
      const objs = this.store.list(
        this.p.kind.resource,
        this.p.kind.namespaced ? this.p.namespace : undefined,
      );
      for (const o of objs) if (this.matches(o)) this.send('ADDED', o);
      if (this.p.sendInitialEvents && this.p.allowBookmarks) {
        this.sendLine(
          JSON.stringify({
            type: 'BOOKMARK',
            object: {
              kind: this.p.kind.kind,
              apiVersion: this.apiVersion,
              metadata: {
                resourceVersion: String(this.store.rv),
                annotations: { 'k8s.io/initial-events-end': 'true' },
              },
            },
          }),
        );
      }
    } else if (!initial) {
      const from = Number(rvParam);
      if (!Number.isInteger(from) || from < 0) {
        this.fail(
          new ApiError(
            400,
            'BadRequest',
            `resourceVersion: Invalid value: "${rvParam}": must be a non-negative integer`,
          ),
        );
        return;
      }
      let backlog: StoredEvent[];
      try {
        backlog = this.store.eventsSince(this.p.kind.resource, from);
      } catch (e) {
        this.fail(e as ApiError);
        return;
      }
      for (const ev of backlog) this.deliver(ev);
      this.fromRv = from;
    }
    if (this.closed) return;
    this.unsubscribe = this.store.subscribe({
      resource: this.p.kind.resource,
      deliver: (ev) => this.deliver(ev),
      close: () => this.close(),
    });
    if (this.p.allowBookmarks && this.limits.bookmarkIntervalMs > 0) {
      this.bookmarkTimer = setInterval(() => this.bookmark(), this.limits.bookmarkIntervalMs);
      this.bookmarkTimer.unref();
    }
    if (this.p.timeoutSeconds && this.p.timeoutSeconds > 0) {
      // A last bookmark before the clean end, as the cacher sends one right before the deadline:
      // a quiet watch resumes from now, not from a revision a compaction may have passed.
      this.timeoutTimer = setTimeout(() => {
        this.bookmark();
        this.close();
      }, this.p.timeoutSeconds * 1000);
      this.timeoutTimer.unref();
    }
  }

  deliver(ev: StoredEvent): void {
    if (this.closed || ev.rv <= this.fromRv) return;
    const now = this.matches(ev.obj);
    const before = ev.type !== 'ADDED' && this.matches(ev.prev);
    if (ev.type === 'DELETED') {
      if (before || now) this.send('DELETED', ev.obj, ev);
    } else if (now && before) this.send('MODIFIED', ev.obj, ev);
    else if (now) this.send('ADDED', ev.obj, ev);
    else if (before) this.send('DELETED', ev.obj, ev);
  }

  private send(type: string, obj: any, ev?: StoredEvent): void {
    let line: string | undefined;
    if (this.p.render) {
      line = JSON.stringify({ type, object: this.p.render(obj, type) });
    } else {
      const key = `${type}|${this.apiVersion}`;
      let cache = ev ? lineCache.get(ev) : undefined;
      line = cache?.get(key);
      if (line === undefined) {
        const out = obj.apiVersion === this.apiVersion ? obj : { ...obj, apiVersion: this.apiVersion };
        line = JSON.stringify({ type, object: out });
        if (ev) {
          if (!cache) {
            cache = new Map();
            lineCache.set(ev, cache);
          }
          cache.set(key, line);
        }
      }
    }
    this.sendLine(line);
    this.sent++;
    if (this.limits.dropAfterEvents !== undefined && this.sent >= this.limits.dropAfterEvents) this.close();
  }

  private sendLine(line: string): void {
    if (this.closed) return;
    if (this.sink.buffered() > this.limits.maxBufferedBytes) {
      this.fail(expired('the watch consumer is too slow to keep up; re-list and watch again'));
      return;
    }
    this.sink.write(`${line}\n`);
  }

  bookmark(): void {
    if (this.closed || !this.p.allowBookmarks) return;
    this.sendLine(
      JSON.stringify({
        type: 'BOOKMARK',
        object: {
          kind: this.p.kind.kind,
          apiVersion: this.apiVersion,
          metadata: { resourceVersion: String(this.store.rv) },
        },
      }),
    );
  }

  /** Sends an ERROR event with the Status and ends the stream (HTTP status stays 200). */
  fail(err: ApiError): void {
    if (this.closed) return;
    this.sink.write(`${JSON.stringify({ type: 'ERROR', object: err.body })}\n`);
    this.close();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe?.();
    if (this.bookmarkTimer) clearInterval(this.bookmarkTimer);
    if (this.timeoutTimer) clearTimeout(this.timeoutTimer);
    this.sink.end();
    this.onClose?.();
  }

  get isClosed(): boolean {
    return this.closed;
  }
}
