/**
 * One watch stream: initial state (synthetic ADDED) or a resume from the event history, then
 * live events filtered by namespace and selectors, with objects leaving or entering a selector
 * turned into DELETED/ADDED, bookmarks (periodic, and a last one before the clean end at
 * timeoutSeconds) carrying the current revision, and 410 for resumes the history no longer covers.
 *
 * Flow control as the real apiserver's cacher does it (storage/cacher/cache_watcher.go): lines are
 * serialized and written only while the transport accepts them (a write that fills it waits for
 * 'drain'); what the consumer has not taken yet stays a queue of references to stored objects and
 * events, which the history holds anyway. The initial state or the resume backlog is pulled the
 * same way. A watcher whose queue of live events goes past `maxPendingEvents` is terminated, as
 * the cacher terminates a watcher whose input channel stays full past its dispatch budget: the
 * stream ends cleanly (no ERROR), and the consumer resumes from the last resourceVersion it got,
 * from the history while the window covers it (a 410 and a re-list only when it no longer does).
 */
import type { FieldRequirement } from './fields.ts';
import { matchesFields } from './fields.ts';
import { apiVersionOf, type ServedKind } from './kinds.ts';
import { type LabelSelector, matchesLabels } from './labels.ts';
import type { TextCache } from './lru.ts';
import { ApiError } from './status.ts';
import type { Store, StoredEvent } from './store.ts';

export interface WatchSink {
  /** Writes one serialized line; false when the transport is full (then wait for `onDrain`). */
  write(line: string): boolean;
  /** Calls `cb` once the transport takes writes again after a write returned false. */
  onDrain(cb: () => void): void;
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
  /** The kind and apiVersion a BOOKMARK's object carries when not the resource's (PartialObjectMetadata). */
  bookmarkAs?: { kind: string; apiVersion: string } | undefined;
}

export interface WatchLimits {
  /** Live events a consumer may have not taken yet; one more ends its stream (the cacher's terminate). */
  maxPendingEvents: number;
  bookmarkIntervalMs: number;
  /** End the stream (fault injection) after this many events. */
  dropAfterEvents?: number | undefined;
}

/** One event for this watcher: its type here (selectors turn updates into ADDED/DELETED) and object. */
interface Pending {
  type: string;
  obj: any;
  /** The stored event (its serialization is shared between watchers); none for the initial state. */
  ev?: StoredEvent | undefined;
}

export class WatchStream {
  private unsubscribe: (() => void) | undefined;
  private bookmarkTimer: NodeJS.Timeout | undefined;
  private timeoutTimer: NodeJS.Timeout | undefined;
  private sent = 0;
  private closed = false;
  /** Events at or before this revision are not sent (a resume from a revision the server has not reached yet). */
  private fromRv = 0;
  /** The initial state (objects) or the resume backlog (events), pulled from `initialAt` on. */
  private initial: any[] = [];
  private initialIsEvents = false;
  private initialAt = 0;
  /** The initial-events-end bookmark, written after the initial state. */
  private initialEnd: string | undefined;
  /** Live events not written yet, from `queueAt` on. */
  private queue: Pending[] = [];
  private queueAt = 0;
  /** A write filled the transport: nothing more until it drains. */
  private blocked = false;
  private pumping = false;
  private readonly store: Store;
  private readonly p: WatchParams;
  private readonly sink: WatchSink;
  private readonly limits: WatchLimits;
  private readonly lines: TextCache;
  private readonly apiVersion: string;
  onClose: (() => void) | undefined;

  /** `lines`: serialized events shared by the server's watchers, so fan-out serializes once. */
  constructor(store: Store, params: WatchParams, sink: WatchSink, limits: WatchLimits, lines: TextCache) {
    this.store = store;
    this.p = params;
    this.sink = sink;
    this.limits = limits;
    this.lines = lines;
    this.apiVersion = apiVersionOf(params.kind);
  }

  private matches(obj: any): boolean {
    if (!obj) return false;
    if (this.p.namespace && obj.metadata.namespace !== this.p.namespace) return false;
    return matchesLabels(this.p.labels, obj.metadata.labels) && matchesFields(this.p.fields, obj);
  }

  /** Takes the initial state and subscribes in one synchronous step (no write can slip between). */
  start(): void {
    const rvParam = this.p.resourceVersion;
    const initial =
      rvParam === undefined || rvParam === '' || rvParam === '0' || this.p.sendInitialEvents === true;
    if (initial && this.p.sendInitialEvents !== false) {
      this.initial = this.store.list(
        this.p.kind.resource,
        this.p.kind.namespaced ? this.p.namespace : undefined,
      );
      if (this.p.sendInitialEvents && this.p.allowBookmarks) {
        // The revision of the state just taken, not of whenever the last object is written.
        this.initialEnd = JSON.stringify({
          type: 'BOOKMARK',
          object: {
            kind: this.p.kind.kind,
            apiVersion: this.apiVersion,
            metadata: {
              resourceVersion: String(this.store.rv),
              annotations: { 'k8s.io/initial-events-end': 'true' },
            },
          },
        });
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
      try {
        this.initial = this.store.eventsSince(this.p.kind.resource, from);
        this.initialIsEvents = true;
      } catch (e) {
        this.fail(e as ApiError);
        return;
      }
      this.fromRv = from;
    }
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
    this.pump();
  }

  /** What a stored event is to this watcher, or undefined when it does not concern it. */
  private classify(ev: StoredEvent): Pending | undefined {
    if (ev.rv <= this.fromRv) return undefined;
    const now = this.matches(ev.obj);
    const before = ev.type !== 'ADDED' && this.matches(ev.prev);
    if (ev.type === 'DELETED') return before || now ? { type: 'DELETED', obj: ev.obj, ev } : undefined;
    if (now && before) return { type: 'MODIFIED', obj: ev.obj, ev };
    if (now) return { type: 'ADDED', obj: ev.obj, ev };
    if (before) return { type: 'DELETED', obj: ev.obj, ev };
    return undefined;
  }

  deliver(ev: StoredEvent): void {
    if (this.closed) return;
    const item = this.classify(ev);
    if (!item) return;
    if (this.queue.length - this.queueAt >= this.limits.maxPendingEvents) {
      // The consumer has not taken this many events: end it rather than hold its backlog.
      this.close();
      return;
    }
    this.queue.push(item);
    this.pump();
  }

  /** The next line to write, or undefined when nothing is pending. */
  private next(): { line: string; event: boolean } | undefined {
    while (this.initialAt < this.initial.length) {
      const x = this.initial[this.initialAt]!;
      this.initial[this.initialAt++] = undefined;
      if (this.initialIsEvents) {
        const item = this.classify(x as StoredEvent);
        if (item) return { line: this.serialize(item), event: true };
      } else if (this.matches(x)) return { line: this.serialize({ type: 'ADDED', obj: x }), event: true };
    }
    if (this.initial.length) this.initial = [];
    if (this.initialEnd !== undefined) {
      const line = `${this.initialEnd}\n`;
      this.initialEnd = undefined;
      return { line, event: false };
    }
    if (this.queueAt < this.queue.length) {
      const item = this.queue[this.queueAt]!;
      this.queue[this.queueAt++] = undefined as unknown as Pending;
      if (this.queueAt === this.queue.length) {
        this.queue = [];
        this.queueAt = 0;
      } else if (this.queueAt >= 1024 && this.queueAt * 2 >= this.queue.length) {
        this.queue = this.queue.slice(this.queueAt);
        this.queueAt = 0;
      }
      return { line: this.serialize(item), event: true };
    }
    return undefined;
  }

  private get idle(): boolean {
    return (
      this.initialAt >= this.initial.length &&
      this.initialEnd === undefined &&
      this.queueAt >= this.queue.length
    );
  }

  /** Writes pending lines while the transport takes them. */
  private pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (!this.closed && !this.blocked) {
        const n = this.next();
        if (!n) break;
        this.write(n.line);
        if (n.event) {
          this.sent++;
          if (this.limits.dropAfterEvents !== undefined && this.sent >= this.limits.dropAfterEvents)
            this.close();
        }
      }
    } finally {
      this.pumping = false;
    }
  }

  private write(line: string): void {
    if (this.sink.write(line)) return;
    this.blocked = true;
    this.sink.onDrain(() => {
      this.blocked = false;
      this.pump();
    });
  }

  /** One line per event and type, shared between watchers through the server's bounded cache. */
  private serialize(item: Pending): string {
    const { type, obj, ev } = item;
    if (this.p.render) return `${JSON.stringify({ type, object: this.p.render(obj, type) })}\n`;
    // Only the event's own type in the object's own version is shared (what nearly every watcher sends).
    const shared = ev !== undefined && type === ev.type && obj.apiVersion === this.apiVersion;
    if (shared) {
      const cached = this.lines.get(ev);
      if (cached !== undefined) return cached;
    }
    const out = obj.apiVersion === this.apiVersion ? obj : { ...obj, apiVersion: this.apiVersion };
    const line = `${JSON.stringify({ type, object: out })}\n`;
    if (shared) this.lines.set(ev, line);
    return line;
  }

  /**
   * Sends a BOOKMARK at the current revision, only when nothing is waiting to be written: a
   * bookmark behind pending events would tell the consumer it has seen them. The cacher drops a
   * bookmark that does not fit into a watcher's channel the same way.
   */
  bookmark(): void {
    if (this.closed || !this.p.allowBookmarks || this.blocked || !this.idle) return;
    this.write(
      `${JSON.stringify({
        type: 'BOOKMARK',
        object: {
          ...(this.p.bookmarkAs ?? { kind: this.p.kind.kind, apiVersion: this.apiVersion }),
          metadata: { resourceVersion: String(this.store.rv) },
        },
      })}\n`,
    );
  }

  /** Sends an ERROR event with the Status and ends the stream (HTTP status stays 200). */
  fail(err: ApiError): void {
    if (this.closed) return;
    this.sink.write(`${JSON.stringify({ type: 'ERROR', object: err.body })}\n`);
    this.close();
  }

  /** Ends the stream; what was not written yet is dropped (the consumer resumes from its last revision). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe?.();
    if (this.bookmarkTimer) clearInterval(this.bookmarkTimer);
    if (this.timeoutTimer) clearTimeout(this.timeoutTimer);
    this.initial = [];
    this.queue = [];
    this.sink.end();
    this.onClose?.();
  }

  get isClosed(): boolean {
    return this.closed;
  }
}
