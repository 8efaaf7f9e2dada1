/**
 * The relay's way out: batches of 10 (SendMessageBatch) per function queue, a bounded number of
 * batches in flight, and a coalescing buffer with one slot per function and object key, so a hot
 * key (a host whose status changes every second) costs one pending message, not a flood. A newer
 * message for a key replaces the buffered one in place: the handler re-reads the object anyway.
 * Entries SQS refuses are re-buffered with backoff unless a newer message for the key has arrived.
 */
import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { FunctionName } from '../../events/envelope.ts';
import { messageOf } from '../api/json.ts';
import { type Logger, silentLogger } from '../observability/logger.ts';
import type { PipelineMetrics } from '../runtimes/metrics.ts';
import { coalesceKey, type RoutedMessage, toBatchEntry } from './message.ts';

export interface SenderOptions {
  /** SendMessageBatch calls under way at once (default 8). */
  maxInFlightBatches?: number | undefined;
  /** waitForCapacity() blocks while more messages than this are buffered (default 10 000). */
  highWaterMark?: number | undefined;
  /** How long a partial batch waits for company before it is sent (default 5 ms). */
  lingerMs?: number | undefined;
  /** First retry delay after a refused send, doubled per attempt up to 5 s (default 100 ms). */
  retryBaseMs?: number | undefined;
  metrics?: PipelineMetrics | undefined;
  log?: Logger | undefined;
}

export interface SenderStats {
  enqueued: number;
  sent: number;
  coalesced: number;
  /** Entries SQS refused (each is retried). */
  refused: number;
  /** Entries dropped for good (no queue for the function, or a permanent SQS refusal). */
  dropped: number;
  batches: number;
}

/** Where the relay puts messages: SQS (QueueSender) or an HTTP CloudEvents sink (a Knative Broker). */
export interface MessageSink {
  readonly stats: SenderStats;
  readonly bufferedCount: number;
  enqueue(msgs: readonly RoutedMessage[]): void;
  waitForCapacity(): Promise<void>;
  flush(): Promise<void>;
  close(): Promise<void>;
}

const BATCH = 10;
const PERMANENT_CODES = new Set(['InvalidParameterValue', 'InvalidMessageContents', 'BatchRequestTooLong']);

export class QueueSender implements MessageSink {
  readonly stats: SenderStats = { enqueued: 0, sent: 0, coalesced: 0, refused: 0, dropped: 0, batches: 0 };
  private readonly sqs: SQSClient;
  private readonly urls: Partial<Record<FunctionName, string>>;
  private readonly buffers = new Map<FunctionName, Map<string, RoutedMessage>>();
  private readonly maxInFlight: number;
  private readonly highWater: number;
  private readonly lingerMs: number;
  private readonly retryBaseMs: number;
  private readonly metrics: PipelineMetrics | undefined;
  private readonly log: Logger;
  private buffered = 0;
  private inFlight = 0;
  private retryDelayMs = 0;
  private notBefore = 0;
  private timer: NodeJS.Timeout | undefined;
  private idleWaiters: (() => void)[] = [];
  private capacityWaiters: (() => void)[] = [];
  private rr = 0;
  private closed = false;
  private readonly warned = new Set<FunctionName>();

  constructor(sqs: SQSClient, urls: Partial<Record<FunctionName, string>>, opts: SenderOptions = {}) {
    this.sqs = sqs;
    this.urls = urls;
    this.maxInFlight = opts.maxInFlightBatches ?? 8;
    this.highWater = opts.highWaterMark ?? 10_000;
    this.lingerMs = opts.lingerMs ?? 5;
    this.retryBaseMs = opts.retryBaseMs ?? 100;
    this.metrics = opts.metrics;
    this.log = opts.log ?? silentLogger;
  }

  get bufferedCount(): number {
    return this.buffered;
  }

  get inFlightBatches(): number {
    return this.inFlight;
  }

  /** Buffers messages (coalescing per function and key) and starts sending. Never blocks. */
  enqueue(msgs: readonly RoutedMessage[]): void {
    if (this.closed) throw new Error('QueueSender is closed');
    for (const r of msgs) {
      const fn = r.msg.function;
      if (!this.urls[fn]) {
        // A relay serving a subset of functions (--functions): count, and say so once per function.
        this.stats.dropped++;
        if (!this.warned.has(fn)) {
          this.warned.add(fn);
          this.log.warn('no queue for function; its messages are dropped', { function: fn });
        }
        continue;
      }
      this.stats.enqueued++;
      let buf = this.buffers.get(fn);
      if (!buf) {
        buf = new Map();
        this.buffers.set(fn, buf);
      }
      const key = coalesceKey(r);
      if (buf.has(key)) {
        this.stats.coalesced++;
        this.metrics?.coalesced.inc({ function: fn });
      } else {
        this.buffered++;
      }
      buf.set(key, r); // an existing key keeps its place in line: a hot key cannot starve others
    }
    this.metrics?.buffered.set(this.buffered);
    this.pump(false);
  }

  /** Resolves once fewer than the high-water mark are buffered: callers that can wait, do. */
  async waitForCapacity(): Promise<void> {
    while (this.buffered >= this.highWater) {
      await new Promise<void>((resolve) => this.capacityWaiters.push(resolve));
    }
  }

  /** Sends everything buffered now; resolves when nothing is buffered or in flight. */
  async flush(): Promise<void> {
    while (this.buffered > 0 || this.inFlight > 0) {
      const idle = new Promise<void>((resolve) => this.idleWaiters.push(resolve));
      this.pump(true);
      await idle;
    }
  }

  /** Flushes, then refuses further messages. */
  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private pump(force: boolean): void {
    const now = Date.now();
    if (now < this.notBefore) {
      this.schedule(this.notBefore - now);
      return;
    }
    let partialWaiting = false;
    while (this.inFlight < this.maxInFlight) {
      const fn = this.nextFunction(force);
      if (!fn) break;
      this.sendBatch(fn);
    }
    for (const buf of this.buffers.values()) if (buf.size > 0) partialWaiting = true;
    if (partialWaiting && this.inFlight < this.maxInFlight) this.schedule(force ? 0 : this.lingerMs);
  }

  /** Round-robin over functions: a full batch first; a partial one only when forced (linger over). */
  private nextFunction(force: boolean): FunctionName | undefined {
    const fns = [...this.buffers.keys()];
    if (fns.length === 0) return undefined;
    for (let i = 0; i < fns.length; i++) {
      const fn = fns[(this.rr + i) % fns.length]!;
      const size = this.buffers.get(fn)!.size;
      if (size >= BATCH || (force && size > 0)) {
        this.rr = (this.rr + i + 1) % fns.length;
        return fn;
      }
    }
    return undefined;
  }

  private schedule(ms: number): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.pump(true);
    }, ms);
  }

  private sendBatch(fn: FunctionName): void {
    const buf = this.buffers.get(fn)!;
    const batch: [string, RoutedMessage][] = [];
    for (const entry of buf) {
      batch.push(entry);
      if (batch.length === BATCH) break;
    }
    for (const [key] of batch) buf.delete(key);
    this.buffered -= batch.length;
    this.inFlight++;
    this.stats.batches++;
    this.metrics?.batches.inc();
    this.metrics?.inFlightBatches.set(this.inFlight);
    this.metrics?.buffered.set(this.buffered);
    this.wakeCapacity();
    void this.send(fn, batch).finally(() => {
      this.inFlight--;
      this.metrics?.inFlightBatches.set(this.inFlight);
      if (this.buffered > 0) this.pump(this.idleWaiters.length > 0);
      this.wakeIdle();
    });
  }

  private async send(fn: FunctionName, batch: [string, RoutedMessage][]): Promise<void> {
    const entries = batch.map(([, r], i) => toBatchEntry(r, String(i)));
    try {
      const out = await this.sqs.send(
        new SendMessageBatchCommand({ QueueUrl: this.urls[fn]!, Entries: entries }),
      );
      const ok = out.Successful?.length ?? 0;
      this.stats.sent += ok;
      this.metrics?.sent.inc({ function: fn }, ok);
      const retry: [string, RoutedMessage][] = [];
      for (const f of out.Failed ?? []) {
        const item = batch[Number(f.Id)];
        if (!item) continue;
        if (!f.SenderFault || !PERMANENT_CODES.has(f.Code ?? '')) {
          retry.push(item);
        } else {
          this.stats.dropped++;
          this.log.error('SQS refused a message for good', {
            function: fn,
            code: f.Code,
            message: f.Message,
          });
        }
      }
      if (retry.length > 0) this.retryLater(fn, retry);
      else this.retryDelayMs = 0;
    } catch (e) {
      this.log.warn('SendMessageBatch failed; will retry', { function: fn, error: messageOf(e) });
      this.retryLater(fn, batch);
    }
  }

  private retryLater(fn: FunctionName, items: [string, RoutedMessage][]): void {
    this.stats.refused += items.length;
    this.metrics?.sendFailures.inc({ function: fn }, items.length);
    const buf = this.buffers.get(fn)!;
    for (const [key, r] of items) {
      if (buf.has(key)) continue; // a newer message for the key supersedes the refused one
      buf.set(key, r);
      this.buffered++;
    }
    this.metrics?.buffered.set(this.buffered);
    this.retryDelayMs = Math.min(5_000, this.retryDelayMs ? this.retryDelayMs * 2 : this.retryBaseMs);
    this.notBefore = Date.now() + this.retryDelayMs;
  }

  private wakeIdle(): void {
    if (this.buffered > 0 || this.inFlight > 0) return;
    const w = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of w) resolve();
  }

  private wakeCapacity(): void {
    if (this.buffered >= this.highWater) return;
    const w = this.capacityWaiters;
    this.capacityWaiters = [];
    for (const resolve of w) resolve();
  }
}
