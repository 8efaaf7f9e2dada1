/**
 * In-process runtime (`metal3fn dev --direct`, and the benchmark's queue-less baseline): the relay
 * hands its messages straight to the same dispatch core the queue runtimes wrap, with the queue's
 * semantics kept where correctness depends on them:
 *
 *   - one message at a time per function and FIFO group, in arrival order (allocations stay
 *     serialized per Metal3DataTemplate / IPPool, as on the FIFO queues);
 *   - a pending message for a key is replaced by a newer one (the relay's coalescing);
 *   - a deduplication id seen in the last 5 minutes is dropped (SQS FIFO deduplication);
 *   - requeue-after waits in a timer; a thrown error is retried with the queue's backoff
 *     (1, 2, 4 … s) and, after `maxAttempts`, dead-lettered (counted and logged with the reason);
 *   - a malformed message is dead-lettered at once.
 *
 * Nothing is durable: a crash loses what was pending until the relay's next resync re-sends it.
 * That is fine on a laptop and for a baseline; deployments use the queues.
 */
import type { FunctionName, MessageEnvelope } from '../../events/envelope.ts';
import { deduplicationId } from '../../events/envelope.ts';
import { type Logger, silentLogger } from '../observability/logger.ts';
import { coalesceKey, type RoutedMessage } from '../queue/message.ts';
import { MAX_RECEIVE_COUNT, retriesExhausted, retryBackoffSeconds } from '../queue/redelivery.ts';
import { requeueEnvelope } from '../queue/requeue.ts';
import type { MessageSink, SenderStats } from '../queue/sender.ts';
import type { ReconcileContext } from '../reconcile/context.ts';
import { type DispatchOutcome, dispatch, type FunctionTable } from './dispatch.ts';
import type { PipelineMetrics } from './metrics.ts';

export interface DirectRunnerOptions {
  fns: FunctionTable;
  context: ReconcileContext;
  /** Messages running at once (default 10). */
  concurrency?: number | undefined;
  /** Delay before retry n (1-based), in ms (default the queue's: 2^(n-1) s, ≤ 300 s). */
  retryBackoffMs?: ((attempt: number) => number) | undefined;
  /** Attempts before a failing message is dead-lettered (default 5, the queues' maxReceiveCount). */
  maxAttempts?: number | undefined;
  /** Deduplication window (default 5 minutes, as SQS FIFO). */
  dedupWindowMs?: number | undefined;
  /** waitForCapacity() blocks while more messages than this are pending (default 10 000). */
  highWaterMark?: number | undefined;
  log?: Logger | undefined;
  metrics?: PipelineMetrics | undefined;
  /** Observes every outcome (tests, the dev view). */
  onOutcome?: ((fn: FunctionName, outcome: DispatchOutcome) => void) | undefined;
  /** Observes every dead letter with its reason (there is no DLQ in process: tests, the dev view). */
  onDeadLetter?: ((msg: MessageEnvelope, reason: string) => void) | undefined;
}

export interface DirectRunnerStats {
  done: number;
  terminal: number;
  requeued: number;
  retried: number;
  /** Malformed messages and messages that failed `maxAttempts` times. */
  deadLettered: number;
  /** Messages dropped as duplicates within the deduplication window. */
  deduplicated: number;
}

interface Entry {
  routed: RoutedMessage;
  attempt: number;
  started: boolean;
}

interface Lane {
  entries: Entry[];
  running: boolean;
  /** Waiting for a retry's backoff: the lane (FIFO group) is held until then, as on SQS. */
  held: boolean;
}

export class DirectRunner implements MessageSink {
  readonly stats: SenderStats = { enqueued: 0, sent: 0, coalesced: 0, refused: 0, dropped: 0, batches: 0 };
  readonly runStats: DirectRunnerStats = {
    done: 0,
    terminal: 0,
    requeued: 0,
    retried: 0,
    deadLettered: 0,
    deduplicated: 0,
  };
  private readonly o: DirectRunnerOptions;
  private readonly log: Logger;
  private readonly concurrency: number;
  /** Lanes by `function|group`; a lane exists while it has entries or runs. */
  private readonly lanes = new Map<string, Lane>();
  /** Lanes with a runnable head, in the order they became runnable (fairness across groups). */
  private readonly ready: string[] = [];
  private readonly readySet = new Set<string>();
  /** Pending (not started) entries by coalescing key. */
  private readonly pendingByKey = new Map<string, Entry>();
  private readonly seen = new Map<string, number>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private running = 0;
  private pending = 0;
  private closed = false;
  private idleWaiters: (() => void)[] = [];
  private capacityWaiters: (() => void)[] = [];

  constructor(opts: DirectRunnerOptions) {
    this.o = opts;
    this.log = (opts.log ?? silentLogger).child({ component: 'direct' });
    this.concurrency = opts.concurrency ?? 10;
  }

  get bufferedCount(): number {
    return this.pending;
  }

  /** Messages waiting in a timer (requeue-after or retry backoff). */
  get scheduledCount(): number {
    return this.timers.size;
  }

  /** Messages running now. */
  get runningCount(): number {
    return this.running;
  }

  enqueue(msgs: readonly RoutedMessage[]): void {
    if (this.closed) throw new Error('DirectRunner is closed');
    const now = Date.now();
    for (const r of msgs) {
      if (!this.o.fns[r.msg.function]) {
        this.stats.dropped++;
        continue;
      }
      const id = deduplicationId(r.msg);
      const seenAt = this.seen.get(id);
      if (seenAt !== undefined && now - seenAt < (this.o.dedupWindowMs ?? 300_000)) {
        this.runStats.deduplicated++;
        continue;
      }
      this.seen.set(id, now);
      this.stats.enqueued++;
      this.add({ routed: r, attempt: 0, started: false });
    }
    this.pruneSeen(now);
    this.pump();
  }

  /** Sends `m` again after `delayMs` (a duplicate that may arrive out of order; the chaos suite). */
  enqueueLater(m: RoutedMessage, delayMs: number): void {
    this.later(delayMs, () => this.add({ routed: m, attempt: 0, started: false }));
  }

  async waitForCapacity(): Promise<void> {
    while (this.pending > (this.o.highWaterMark ?? 10_000)) {
      await new Promise<void>((resolve) => this.capacityWaiters.push(resolve));
    }
  }

  /** Resolves when nothing is pending or running (timers may still hold requeues). */
  async flush(): Promise<void> {
    while (this.pending > 0 || this.running > 0) {
      await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    }
  }

  /** Stops taking messages, drops the timers and waits for what runs. */
  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const e of this.pendingByKey.values()) e.started = true; // never runs now
    this.pendingByKey.clear();
    this.lanes.clear();
    this.ready.length = 0;
    this.readySet.clear();
    this.pending = 0;
    while (this.running > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    this.wake();
  }

  private add(entry: Entry): void {
    if (this.closed) return;
    const key = coalesceKey(entry.routed);
    const queued = this.pendingByKey.get(key);
    if (queued && !queued.started) {
      // A newer message for the same key takes the pending one's place in line.
      queued.routed = entry.routed;
      queued.attempt = Math.max(queued.attempt, entry.attempt);
      this.stats.coalesced++;
      this.o.metrics?.coalesced.inc({ function: entry.routed.msg.function });
      return;
    }
    this.pendingByKey.set(key, entry);
    const laneId = `${entry.routed.msg.function}|${entry.routed.group}`;
    let lane = this.lanes.get(laneId);
    if (!lane) {
      lane = { entries: [], running: false, held: false };
      this.lanes.set(laneId, lane);
    }
    lane.entries.push(entry);
    this.pending++;
    this.markReady(laneId, lane);
    this.pump();
  }

  private markReady(id: string, lane: Lane): void {
    if (lane.running || lane.held || lane.entries.length === 0 || this.readySet.has(id)) return;
    this.readySet.add(id);
    this.ready.push(id);
  }

  private pump(): void {
    while (!this.closed && this.running < this.concurrency && this.ready.length > 0) {
      const id = this.ready.shift()!;
      this.readySet.delete(id);
      const lane = this.lanes.get(id);
      if (!lane || lane.running || lane.held || lane.entries.length === 0) continue;
      const entry = lane.entries.shift()!;
      entry.started = true;
      const key = coalesceKey(entry.routed);
      if (this.pendingByKey.get(key) === entry) this.pendingByKey.delete(key);
      this.pending--;
      lane.running = true;
      this.running++;
      this.stats.sent++;
      void this.run(id, lane, entry);
    }
    if (this.pending <= (this.o.highWaterMark ?? 10_000)) {
      const w = this.capacityWaiters;
      this.capacityWaiters = [];
      for (const resolve of w) resolve();
    }
  }

  private async run(laneId: string, lane: Lane, entry: Entry): Promise<void> {
    const { msg } = entry.routed;
    let outcome: DispatchOutcome;
    try {
      outcome = await dispatch(this.o.fns, this.o.context, msg, {
        metrics: this.o.metrics,
        group: entry.routed.group,
      });
    } catch (e) {
      outcome = {
        kind: 'retry',
        msg,
        error: e instanceof Error ? e : new Error(String(e)),
        errorClass: 'unknown',
      };
    }
    this.o.onOutcome?.(msg.function, outcome);
    switch (outcome.kind) {
      case 'done':
        this.runStats.done++;
        break;
      case 'terminal':
        this.runStats.terminal++;
        break;
      case 'requeue': {
        this.runStats.requeued++;
        const next = requeueEnvelope(outcome.msg, outcome.afterSeconds, Date.now(), outcome.notBefore);
        const routed = { msg: next, group: entry.routed.group };
        this.later(outcome.afterSeconds * 1000, () => this.add({ routed, attempt: 0, started: false }));
        break;
      }
      case 'malformed':
        this.runStats.deadLettered++;
        this.log.warn('malformed message dead-lettered', { reason: outcome.reason });
        this.o.onDeadLetter?.(msg, outcome.reason);
        break;
      case 'retry': {
        const attempt = entry.attempt + 1;
        if (attempt >= (this.o.maxAttempts ?? MAX_RECEIVE_COUNT)) {
          this.runStats.deadLettered++;
          this.log.error('message dead-lettered after repeated failures', {
            function: msg.function,
            kind: msg.kind,
            key: msg.namespace ? `${msg.namespace}/${msg.name}` : msg.name,
            attempts: attempt,
            error: outcome.error.message,
          });
          this.o.onDeadLetter?.(msg, retriesExhausted(attempt, outcome.error.message));
          break;
        }
        this.runStats.retried++;
        // The group waits for its failed message, as a FIFO group does.
        lane.held = true;
        lane.entries.unshift({ ...entry, attempt, started: false });
        this.pending++;
        this.pendingByKey.set(coalesceKey(entry.routed), lane.entries[0]!);
        this.later(
          this.o.retryBackoffMs ? this.o.retryBackoffMs(attempt) : retryBackoffSeconds(attempt) * 1000,
          () => {
            lane.held = false;
            this.markReady(laneId, lane);
            this.pump();
          },
        );
        break;
      }
    }
    lane.running = false;
    this.running--;
    if (lane.entries.length === 0 && !lane.held) this.lanes.delete(laneId);
    else this.markReady(laneId, lane);
    this.pump();
    this.wake();
  }

  private later(ms: number, fn: () => void): void {
    if (this.closed) return;
    const t = setTimeout(
      () => {
        this.timers.delete(t);
        fn();
      },
      Math.max(0, ms),
    );
    this.timers.add(t);
  }

  private wake(): void {
    if (this.pending > 0 || this.running > 0) return;
    const w = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of w) resolve();
  }

  private pruneSeen(now: number): void {
    if (this.seen.size < 50_000) return;
    const window = this.o.dedupWindowMs ?? 300_000;
    for (const [id, at] of this.seen) if (now - at >= window) this.seen.delete(id);
  }
}
