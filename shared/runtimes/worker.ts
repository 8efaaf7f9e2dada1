/**
 * Local worker (`metal3fn worker`, `dev`, tests, plain Deployments): long-polls the function
 * queues with a concurrency limit and runs the same dispatch core as Lambda.
 *
 * - FIFO order per group: messages of one group from a receive run one after another; after a
 *   failure the rest of that group waits with it and comes back behind it.
 * - Visibility is extended while a message is held, so a slow reconcile is not redelivered.
 * - A failure sets the visibility of the message and of the rest of its group to the group's
 *   backoff (1, 2, 4 … ≤ 300 s by receive count); a failure at the last receive is dead-lettered
 *   here with the error and the group goes on (docs/adr/017-retry-backoff.md).
 * - SIGTERM (stop()): stop receiving (open long polls end within WaitTimeSeconds and what they
 *   return is released), release what has not started, let running messages finish within a grace
 *   period, release the rest; nothing in flight is lost, only delayed.
 * - Due requeue-after messages are forwarded from the delay queue into the FIFO queues.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  ChangeMessageVisibilityCommand,
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { FUNCTION_NAMES, type FunctionName } from '../../events/envelope.ts';
import { messageOf } from '../api/json.ts';
import { type Logger, silentLogger } from '../observability/logger.ts';
import { sendToDlq } from '../queue/dlq.ts';
import { queueNameOfUrl } from '../queue/names.ts';
import {
  groupBackoffSeconds,
  MAX_RECEIVE_COUNT,
  receiveCountOf,
  retriesExhausted,
  retryBackoffSeconds,
} from '../queue/redelivery.ts';
import { forwardDueRequeues, scheduleRequeue } from '../queue/requeue.ts';
import type { ReconcileContext } from '../reconcile/context.ts';
import { supersededInBatch } from './coalesce.ts';
import { type DispatchOutcome, dispatch, type FunctionTable } from './dispatch.ts';
import type { PipelineMetrics } from './metrics.ts';

export interface WorkerQueues {
  main: Partial<Record<FunctionName, string>>;
  dlq: Partial<Record<FunctionName, string>>;
  requeue?: string | undefined;
}

export interface WorkerOptions {
  sqs: SQSClient;
  fns: FunctionTable;
  context: ReconcileContext;
  queues: WorkerQueues;
  /** The functions whose queues this worker polls (default: every function with a queue and a core). */
  functions?: readonly FunctionName[] | undefined;
  /** Messages running at once across all queues (default 10). */
  concurrency?: number | undefined;
  /** Long-poll wait per receive (default 20 s). */
  waitTimeSeconds?: number | undefined;
  /** Visibility while held; extended every third of it (default 60 s). */
  visibilityTimeoutSeconds?: number | undefined;
  /** Visibility after a failure, by receive count (default 2^(n-1) s, ≤ 300 s). */
  retryBackoffSeconds?: ((receiveCount: number) => number) | undefined;
  /** The queues' redrive maxReceiveCount: a failure at this receive is dead-lettered here (default MAX_RECEIVE_COUNT). */
  maxReceiveCount?: number | undefined;
  /** Forward due requeue messages (default true when a requeue queue is given). */
  forwardRequeues?: boolean | undefined;
  log?: Logger | undefined;
  metrics?: PipelineMetrics | undefined;
  /** Observes every outcome (tests, the dev progress view). */
  onOutcome?: ((fn: FunctionName, outcome: DispatchOutcome, message: Message) => void) | undefined;
}

export interface WorkerStats {
  received: number;
  /** Acknowledged without running: a later message of the same receive, group and key ran instead (ADR 027). */
  coalesced: number;
  done: number;
  terminal: number;
  requeued: number;
  retried: number;
  malformed: number;
  /** Failed at their last receive: dead-lettered with the error. */
  deadLettered: number;
  /** Held back behind a failure of their group, with its backoff, without running. */
  heldBack: number;
  forwarded: number;
  released: number;
}

interface Held {
  fn: FunctionName;
  url: string;
  message: Message;
  started: boolean;
}

class Slots {
  private free: number;
  private waiters: (() => void)[] = [];
  constructor(n: number) {
    this.free = n;
  }
  get available(): number {
    return this.free;
  }
  take(n: number): void {
    this.free -= n;
  }
  give(n = 1): void {
    this.free += n;
    const w = this.waiters;
    this.waiters = [];
    for (const resolve of w) resolve();
  }
  async waitFree(): Promise<void> {
    while (this.free <= 0) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }
  /** Wakes waiters without freeing anything (shutdown). */
  wakeAll(): void {
    this.give(0);
  }
}

interface PendingDelete {
  handle: string;
  resolve: () => void;
  reject: (e: Error) => void;
}

/** Acknowledgements gathered per queue into DeleteMessageBatch calls (up to 10, same tick). */
class DeleteBatcher {
  private readonly sqs: SQSClient;
  private readonly pending = new Map<string, PendingDelete[]>();
  private scheduled = false;

  constructor(sqs: SQSClient) {
    this.sqs = sqs;
  }

  delete(url: string, handle: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const list = this.pending.get(url) ?? [];
      list.push({ handle, resolve, reject });
      this.pending.set(url, list);
      if (list.length >= 10) {
        this.flush(url);
      } else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          for (const u of [...this.pending.keys()]) this.flush(u);
        });
      }
    });
  }

  private flush(url: string): void {
    const list = this.pending.get(url);
    this.pending.delete(url);
    if (!list?.length) return;
    for (let i = 0; i < list.length; i += 10) {
      const chunk = list.slice(i, i + 10);
      this.sqs
        .send(
          new DeleteMessageBatchCommand({
            QueueUrl: url,
            Entries: chunk.map((p, j) => ({ Id: String(j), ReceiptHandle: p.handle })),
          }),
        )
        .then(
          (r) => {
            const failed = new Map(
              (r.Failed ?? []).map((f) => [f.Id, f.Message ?? f.Code ?? 'delete failed']),
            );
            chunk.forEach((p, j) => {
              const why = failed.get(String(j));
              if (why) p.reject(new Error(why));
              else p.resolve();
            });
          },
          (e: Error) => {
            for (const p of chunk) p.reject(e);
          },
        );
    }
  }
}

export class Worker {
  /** Messages of the current receives that a later one supersedes (coalesce.ts). */
  private readonly coalesced = new Set<Message>();
  readonly stats: WorkerStats = {
    received: 0,
    coalesced: 0,
    done: 0,
    terminal: 0,
    requeued: 0,
    retried: 0,
    malformed: 0,
    deadLettered: 0,
    heldBack: 0,
    forwarded: 0,
    released: 0,
  };
  private readonly o: WorkerOptions;
  private readonly log: Logger;
  private readonly slots: Slots;
  private readonly functions: FunctionName[];
  private readonly held = new Set<Held>();
  private readonly chains = new Set<Promise<void>>();
  private readonly loops: Promise<void>[] = [];
  private readonly abort = new AbortController();
  private stopping = false;
  private heartbeat: NodeJS.Timeout | undefined;
  private readonly deleter: DeleteBatcher;

  constructor(opts: WorkerOptions) {
    this.o = opts;
    this.deleter = new DeleteBatcher(opts.sqs);
    this.log = opts.log ?? silentLogger;
    this.slots = new Slots(opts.concurrency ?? 10);
    this.functions = (opts.functions ?? FUNCTION_NAMES).filter((fn) => opts.queues.main[fn] && opts.fns[fn]);
  }

  /** Messages that ran to an outcome. */
  private get finished(): number {
    const s = this.stats;
    return s.done + s.terminal + s.requeued + s.retried + s.malformed + s.deadLettered;
  }

  get visibility(): number {
    return this.o.visibilityTimeoutSeconds ?? 60;
  }

  start(): this {
    for (const fn of this.functions) this.loops.push(this.pollLoop(fn));
    if (this.o.queues.requeue && (this.o.forwardRequeues ?? true)) this.loops.push(this.forwardLoop());
    const every = Math.max(1, Math.floor(this.visibility / 3)) * 1000;
    this.heartbeat = setInterval(() => void this.extendHeld(), every);
    this.log.info('worker started', { functions: this.functions, concurrency: this.o.concurrency ?? 10 });
    return this;
  }

  /** Graceful stop: see the file comment. Resolves when every held message is finished or released. */
  async stop(opts: { graceMs?: number } = {}): Promise<{ finished: number; released: number }> {
    if (this.stopping) return { finished: 0, released: 0 };
    this.stopping = true;
    this.abort.abort();
    this.slots.wakeAll();
    const releasedBefore = this.stats.released;
    // Counted from here: a running message may finish while the unstarted ones are being released.
    const finishedBefore = this.finished;
    await this.release([...this.held].filter((h) => !h.started));
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), opts.graceMs ?? 25_000);
    });
    const all = Promise.all([...this.chains]).then(() => 'finished' as const);
    if ((await Promise.race([all, grace])) === 'timeout') await this.release([...this.held]);
    clearTimeout(timer);
    await Promise.allSettled(this.loops);
    if (this.heartbeat) clearInterval(this.heartbeat);
    const finishedAfter = this.finished;
    this.log.info('worker stopped', {
      finished: finishedAfter - finishedBefore,
      released: this.stats.released - releasedBefore,
    });
    return { finished: finishedAfter - finishedBefore, released: this.stats.released - releasedBefore };
  }

  private async pollLoop(fn: FunctionName): Promise<void> {
    const url = this.o.queues.main[fn]!;
    let errors = 0;
    // Whether the last receive came back empty (the first one asks for a share).
    let idle = false;
    while (!this.stopping) {
      await this.slots.waitFree();
      if (this.stopping) break;
      // A fair share per queue: one busy queue's long poll must not hold every slot while the
      // other queues wait (the slots are reserved for the duration of the receive). A queue whose
      // last receive was empty asks for one: its long poll would otherwise hold a share of slots
      // idle for up to WaitTimeSeconds while a busy queue's messages wait for them.
      const share = Math.max(1, Math.floor((this.o.concurrency ?? 10) / Math.max(1, this.functions.length)));
      const n = Math.min(10, idle ? 1 : share, this.slots.available);
      // Several queue loops wake together when one slot frees; only the first may take it.
      if (n < 1) continue;
      this.slots.take(n);
      let messages: Message[] = [];
      try {
        const r = await this.o.sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: url,
            MaxNumberOfMessages: n,
            WaitTimeSeconds: this.o.waitTimeSeconds ?? 20,
            VisibilityTimeout: this.visibility,
            MessageSystemAttributeNames: ['MessageGroupId', 'ApproximateReceiveCount'],
          }),
        );
        // Not aborted on stop: an aborted long poll may already hold messages server-side, which
        // would then stay invisible until their timeout. Letting it end (≤ WaitTimeSeconds) and
        // releasing what it returns loses nothing.
        messages = r.Messages ?? [];
        errors = 0;
      } catch (e) {
        this.slots.give(n);
        if (this.stopping) break;
        errors++;
        this.log.warn('receive failed', { function: fn, error: messageOf(e) });
        await sleep(Math.min(10_000, 200 * 2 ** errors), this.abort.signal);
        continue;
      }
      this.slots.give(n - messages.length);
      idle = messages.length === 0;
      this.stats.received += messages.length;
      if (this.stopping) {
        const hs = messages.map((message) => this.hold(fn, url, message));
        await this.release(hs);
        this.slots.give(hs.length);
        break;
      }
      // One chain per group, in receive order: FIFO order within a group is kept.
      const groups = new Map<string, Held[]>();
      for (const message of messages) {
        const g = message.Attributes?.MessageGroupId ?? message.MessageId ?? '';
        const list = groups.get(g) ?? [];
        list.push(this.hold(fn, url, message));
        groups.set(g, list);
      }
      const superseded = supersededInBatch(
        messages.map((message) => ({
          message,
          body: message.Body,
          group: message.Attributes?.MessageGroupId,
        })),
        Date.now(),
      );
      for (const { message } of superseded) this.coalesced.add(message);
      for (const list of groups.values()) {
        const chain = this.runChain(list).finally(() => this.chains.delete(chain));
        this.chains.add(chain);
      }
      // Let the loops woken by the slots given back above take them first: without this turn,
      // this loop re-takes them synchronously and, when the fair shares add up to more than the
      // concurrency, the last queues are never polled (seen: concurrency 8 starved reconcileCluster).
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  private hold(fn: FunctionName, url: string, message: Message): Held {
    const h: Held = { fn, url, message, started: false };
    this.held.add(h);
    return h;
  }

  private async runChain(list: Held[]): Promise<void> {
    for (let i = 0; i < list.length; i++) {
      const h = list[i]!;
      if (this.stopping || !this.held.has(h)) {
        // Shutdown: what has not started goes back (released by stop()).
        for (const rest of list.slice(i)) if (this.held.has(rest)) await this.release([rest]);
        this.slots.give(list.length - i);
        return;
      }
      h.started = true;
      let failed = false;
      try {
        failed = await this.runOne(h);
      } finally {
        this.held.delete(h);
        this.slots.give();
      }
      if (failed) {
        // The group waits with its failed message: the rest comes back behind it, after its backoff.
        const rest = list.slice(i + 1).filter((r) => this.held.delete(r));
        // Held back with the group: they come back in a later receive and are judged there.
        for (const r of rest) this.coalesced.delete(r.message);
        this.stats.heldBack += rest.length;
        await this.backOff([h, ...rest]);
        this.slots.give(list.length - i - 1);
        return;
      }
    }
  }

  /** Runs one message; returns true when it failed (the rest of its group must wait). */
  private async runOne(h: Held): Promise<boolean> {
    const { fn, url, message } = h;
    if (this.coalesced.delete(message)) {
      // A later message of this receive names the same key: it runs, this one is acknowledged.
      this.stats.coalesced++;
      this.o.metrics?.messages.inc({ function: fn, outcome: 'coalesced' });
      await this.delete(url, message);
      return false;
    }
    this.o.metrics?.inFlightMessages.inc();
    try {
      const outcome = await dispatch(this.o.fns, this.o.context, message.Body ?? '', {
        expect: fn,
        metrics: this.o.metrics,
        group: message.Attributes?.MessageGroupId,
      });
      this.o.onOutcome?.(fn, outcome, message);
      switch (outcome.kind) {
        case 'done':
          this.stats.done++;
          await this.delete(url, message);
          return false;
        case 'terminal':
          this.stats.terminal++;
          await this.delete(url, message);
          return false;
        case 'requeue':
          if (this.o.queues.requeue) {
            await scheduleRequeue(
              this.o.sqs,
              this.o.queues.requeue,
              outcome.msg,
              message.Attributes?.MessageGroupId,
              outcome.afterSeconds,
              Date.now(),
              outcome.notBefore,
            );
            await this.delete(url, message);
          } else {
            // No delay queue configured: hold it back with its visibility (counts as a receive).
            await this.setVisibility(url, message, Math.min(43_200, Math.ceil(outcome.afterSeconds)));
          }
          this.stats.requeued++;
          return false;
        case 'malformed': {
          this.stats.malformed++;
          await this.deadLetter(h, outcome.reason);
          return false;
        }
        case 'retry': {
          const count = receiveCountOf(message.Attributes?.ApproximateReceiveCount);
          if (count < (this.o.maxReceiveCount ?? MAX_RECEIVE_COUNT)) {
            this.stats.retried++;
            return true;
          }
          // Its last receive: dead-lettered here, and the rest of its group runs (ADR 017).
          this.stats.deadLettered++;
          await this.deadLetter(h, retriesExhausted(count, outcome.error.message));
          return false;
        }
        default:
          return true;
      }
    } catch (e) {
      // A transport failure after the core ran: the message comes back after its visibility timeout.
      this.log.warn('message handling failed', {
        function: fn,
        messageId: message.MessageId,
        error: messageOf(e),
      });
      return true;
    } finally {
      this.o.metrics?.inFlightMessages.dec();
    }
  }

  private async deadLetter({ fn, url, message }: Held, reason: string): Promise<void> {
    const dlq = this.o.queues.dlq[fn];
    if (!dlq) throw new Error(`no DLQ for ${fn}`);
    await sendToDlq(this.o.sqs, dlq, {
      body: message.Body ?? '',
      reason,
      group: message.Attributes?.MessageGroupId,
      sourceQueue: queueNameOfUrl(url),
      sourceMessageId: message.MessageId,
    });
    await this.delete(url, message);
  }

  /** A failed group's messages come back after its backoff (best effort: else their visibility timeout). */
  private async backOff(hs: Held[]): Promise<void> {
    const seconds = groupBackoffSeconds(
      hs.map((h) => receiveCountOf(h.message.Attributes?.ApproximateReceiveCount)),
      this.o.retryBackoffSeconds ?? retryBackoffSeconds,
    );
    const url = hs[0]!.url;
    try {
      const r = await this.o.sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: url,
          Entries: hs.map((h, j) => ({
            Id: String(j),
            ReceiptHandle: h.message.ReceiptHandle!,
            VisibilityTimeout: seconds,
          })),
        }),
      );
      if (r.Failed?.length) this.log.warn('backoff not set', { failed: r.Failed });
    } catch (e) {
      this.log.warn('backoff not set; the visibility timeout applies', { error: messageOf(e) });
    }
  }

  private async delete(url: string, m: Message): Promise<void> {
    await this.deleter.delete(url, m.ReceiptHandle!);
  }

  private async setVisibility(url: string, m: Message, seconds: number): Promise<void> {
    await this.o.sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: url,
        ReceiptHandle: m.ReceiptHandle!,
        VisibilityTimeout: seconds,
      }),
    );
  }

  /** Makes held messages visible again at once and forgets them. */
  private async release(hs: Held[]): Promise<void> {
    const mine = hs.filter((h) => this.held.delete(h));
    for (const h of hs) this.coalesced.delete(h.message);
    await Promise.all(
      mine.map(async (h) => {
        try {
          await this.setVisibility(h.url, h.message, 0);
          this.stats.released++;
        } catch (e) {
          this.log.warn('release failed; the message returns after its visibility timeout', {
            messageId: h.message.MessageId,
            error: messageOf(e),
          });
        }
      }),
    );
  }

  private async extendHeld(): Promise<void> {
    const byUrl = new Map<string, Held[]>();
    for (const h of this.held) byUrl.set(h.url, [...(byUrl.get(h.url) ?? []), h]);
    for (const [url, hs] of byUrl) {
      for (let i = 0; i < hs.length; i += 10) {
        const chunk = hs.slice(i, i + 10);
        await this.o.sqs
          .send(
            new ChangeMessageVisibilityBatchCommand({
              QueueUrl: url,
              Entries: chunk.map((h, j) => ({
                Id: String(j),
                ReceiptHandle: h.message.ReceiptHandle!,
                VisibilityTimeout: this.visibility,
              })),
            }),
          )
          .catch((e: Error) => this.log.warn('visibility extension failed', { error: e.message }));
      }
    }
  }

  private async forwardLoop(): Promise<void> {
    const urls = { main: this.o.queues.main, requeue: this.o.queues.requeue! };
    let errors = 0;
    while (!this.stopping) {
      try {
        const r = await forwardDueRequeues(this.o.sqs, urls, {
          waitTimeSeconds: this.o.waitTimeSeconds ?? 20,
          log: this.log,
        });
        this.stats.forwarded += r.forwarded;
        errors = 0;
      } catch (e) {
        if (this.stopping) break;
        errors++;
        this.log.warn('requeue forwarding failed', { error: messageOf(e) });
        await sleep(Math.min(10_000, 200 * 2 ** errors), this.abort.signal);
      }
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });
}
