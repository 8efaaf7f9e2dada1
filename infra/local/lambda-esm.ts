/**
 * An SQS event source mapping (ESM) emulator for dev runs and benchmarks: it drives the real Lambda
 * adapter (shared/runtimes/lambda.ts createSqsHandler) the way AWS does, with serverless.yml's own
 * settings (./lambda-settings.ts), so a run shows what a user on Lambda sees: invocations, billed
 * duration, cold starts and time spent waiting in queues.
 *
 * What it does as AWS does:
 *   - per function queue, up to `maximumConcurrency` pollers; each receives a batch of up to
 *     `batchSize` records (the queue's own visibility timeout) and invokes synchronously, so at most
 *     `maximumConcurrency` invocations of a function run at once;
 *   - an invocation runs on an idle instance of its function, or on a new one (a cold start); an
 *     instance keeps what its handler's closure keeps (module state) between warm invocations and
 *     nothing else: a new instance builds its own client and context;
 *   - the records the partial batch response does not name in `batchItemFailures` are deleted; the
 *     named ones stay (the handler sets their backoff, else the visibility timeout brings them
 *     back); an invocation that throws deletes nothing;
 *   - the receive limit (the queue's redrive policy) and FIFO group holds (a group with a record in
 *     flight returns nothing more) are the SQS backend's: fauxqs and SQS both honour them; so is
 *     what a receive returns, several records of a group in order (fauxqs through ./fauxqs-fifo.ts).
 *
 * What it does not: the batching window (0 in serverless.yml, so nothing to emulate), the
 * scaling ramp of real pollers (AWS starts with 5 and adds pollers over minutes; here all are
 * there from the start, which favours the emulator under bursts), the process-level cold start
 * (module loading is not repeated in one process: `coldStarts` counts them and the cost table adds
 * the measured cold start), and the function timeout (recorded as `overTimeout`, not enforced).
 */
import {
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { messageOf } from '../../shared/api/json.ts';
import { type Logger, silentLogger } from '../../shared/observability/logger.ts';
import { percentile } from './dev/summary.ts';
import type { EsmSettings } from './lambda-settings.ts';

/** A Lambda instance's handler: what one cold start builds. */
export type SqsLambdaHandler = (event: SQSEvent) => Promise<SQSBatchResponse>;

export interface EsmSource {
  /** The function's name (selectHost, …, requeueForwarder). */
  fn: string;
  /**
   * The mapping's own SQS client: its pollers hold long polls open, which must not take the
   * connections the functions send with (as on AWS, where they are different machines).
   */
  sqs: SQSClient;
  queueUrl: string;
  queueArn: string;
  settings: EsmSettings;
  /** A new instance of the function (a cold start): its handler, with its own module state. */
  coldStart: () => SqsLambdaHandler;
  /** Left out of the queue-wait figures (the requeue queue's wait is the requested delay). */
  delayQueue?: boolean | undefined;
}

/** One invocation as Lambda would bill and log it. */
export interface Invocation {
  fn: string;
  records: number;
  durationMs: number;
  /** Lambda bills whole milliseconds. */
  billedMs: number;
  cold: boolean;
  /** Records named in batchItemFailures (all of them when the invocation threw). */
  failed: number;
  threw: boolean;
  /** Per record: from SentTimestamp to this invocation's start (ms). */
  queueWaitMs: number[];
  /** Counted in the queue-wait figures (not the delay queue's). */
  countsWait: boolean;
}

export interface EsmOptions {
  sources: readonly EsmSource[];
  /** Long-poll wait of the pollers (default 20 s, as AWS's pollers; stop() aborts open polls). */
  waitTimeSeconds?: number | undefined;
  log?: Logger | undefined;
  /** Sees every invocation (tests). */
  onInvocation?: ((i: Invocation) => void) | undefined;
}

interface FunctionState {
  source: EsmSource;
  idle: SqsLambdaHandler[];
  instances: number;
  /** Invocations running now (≤ maximumConcurrency). */
  running: Set<Promise<void>>;
}

export class EventSourceMappings {
  readonly invocations: Invocation[] = [];
  /** Receives that returned nothing (the pollers' idle cost on SQS). */
  emptyReceives = 0;
  private readonly o: EsmOptions;
  private running = false;
  private readonly aborts = new AbortController();
  private loops: Promise<void>[] = [];
  private readonly states: FunctionState[];

  constructor(o: EsmOptions) {
    this.o = o;
    this.states = o.sources.map((source) => ({ source, idle: [], instances: 0, running: new Set() }));
  }

  start(): this {
    this.running = true;
    for (const s of this.states) this.loops.push(this.poll(s));
    return this;
  }

  /** Stops polling (open long polls are aborted) and waits for running invocations to finish. */
  async stop(): Promise<void> {
    this.running = false;
    this.aborts.abort();
    await Promise.all(this.loops);
    await Promise.all(this.states.flatMap((s) => [...s.running]));
  }

  /** Instances started per function (each one a cold start). */
  instancesOf(fn: string): number {
    return this.states.find((s) => s.source.fn === fn)?.instances ?? 0;
  }

  /**
   * One receive loop per function, invoking while fewer than maximumConcurrency invocations run
   * (each with the batch one receive returned), waiting for one to end when all are busy. Ten open
   * long polls per queue would do the same, but the local server wakes every one of them per
   * message sent, which costs this one process CPU that AWS spends on its own machines.
   */
  private async poll(s: FunctionState): Promise<void> {
    const log = this.o.log ?? silentLogger;
    const { source } = s;
    while (this.running) {
      if (s.running.size >= source.settings.maximumConcurrency) {
        await Promise.race(s.running);
        continue;
      }
      let messages: Message[];
      try {
        const r = await source.sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: source.queueUrl,
            MaxNumberOfMessages: source.settings.batchSize,
            WaitTimeSeconds: this.o.waitTimeSeconds ?? 20,
            MessageSystemAttributeNames: ['All'],
            MessageAttributeNames: ['All'],
          }),
          { abortSignal: this.aborts.signal },
        );
        messages = r.Messages ?? [];
      } catch (e) {
        if (!this.running) return;
        log.warn('esm: receive failed', { function: source.fn, error: messageOf(e) });
        await new Promise((r) => setTimeout(r, 200));
        continue;
      }
      if (messages.length === 0) {
        this.emptyReceives++;
        continue;
      }
      const run = this.invoke(s, messages).finally(() => s.running.delete(run));
      s.running.add(run);
    }
  }

  private async invoke(s: FunctionState, messages: Message[]): Promise<void> {
    const { source } = s;
    const cold = s.idle.length === 0;
    let handler = s.idle.pop();
    if (!handler) {
      s.instances++;
      handler = source.coldStart();
    }
    const startedAt = Date.now();
    const started = performance.now();
    let response: SQSBatchResponse | undefined;
    try {
      response = await handler(toSqsEvent(messages, source.queueArn));
    } catch (e) {
      // A function error: Lambda deletes nothing, every record comes back after the visibility timeout.
      (this.o.log ?? silentLogger).warn('esm: invocation failed', {
        function: source.fn,
        error: messageOf(e),
      });
    }
    const durationMs = performance.now() - started;
    s.idle.push(handler);
    const failedIds = new Set(response?.batchItemFailures.map((f) => f.itemIdentifier) ?? []);
    const acknowledged = response ? messages.filter((m) => !failedIds.has(m.MessageId!)) : [];
    const invocation: Invocation = {
      fn: source.fn,
      records: messages.length,
      durationMs,
      billedMs: Math.max(1, Math.ceil(durationMs)),
      cold,
      failed: response ? failedIds.size : messages.length,
      threw: !response,
      queueWaitMs: messages.map((m) =>
        Math.max(0, startedAt - Number(m.Attributes?.SentTimestamp ?? startedAt)),
      ),
      countsWait: !source.delayQueue,
    };
    this.invocations.push(invocation);
    this.o.onInvocation?.(invocation);
    await this.deleteAll(source, acknowledged);
  }

  private async deleteAll(source: EsmSource, messages: readonly Message[]): Promise<void> {
    for (let i = 0; i < messages.length; i += 10) {
      try {
        const r = await source.sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: source.queueUrl,
            Entries: messages
              .slice(i, i + 10)
              .map((m, j) => ({ Id: String(j), ReceiptHandle: m.ReceiptHandle! })),
          }),
        );
        if (r.Failed?.length)
          (this.o.log ?? silentLogger).warn('esm: delete failed', { function: source.fn, failed: r.Failed });
      } catch (e) {
        (this.o.log ?? silentLogger).warn('esm: delete failed', { function: source.fn, error: messageOf(e) });
      }
    }
  }
}

/** The SQS event Lambda builds from received messages of the queue `arn`. */
export function toSqsEvent(messages: readonly Message[], arn: string): SQSEvent {
  const region = arn.split(':')[3] ?? 'us-east-1';
  return {
    Records: messages.map((m) => ({
      messageId: m.MessageId!,
      receiptHandle: m.ReceiptHandle!,
      body: m.Body ?? '',
      attributes: {
        ApproximateReceiveCount: m.Attributes?.ApproximateReceiveCount ?? '1',
        SentTimestamp: m.Attributes?.SentTimestamp ?? '0',
        SenderId: m.Attributes?.SenderId ?? '',
        ApproximateFirstReceiveTimestamp: m.Attributes?.ApproximateFirstReceiveTimestamp ?? '0',
        ...(m.Attributes?.MessageGroupId ? { MessageGroupId: m.Attributes.MessageGroupId } : {}),
        ...(m.Attributes?.MessageDeduplicationId
          ? { MessageDeduplicationId: m.Attributes.MessageDeduplicationId }
          : {}),
        ...(m.Attributes?.SequenceNumber ? { SequenceNumber: m.Attributes.SequenceNumber } : {}),
      },
      messageAttributes: Object.fromEntries(
        Object.entries(m.MessageAttributes ?? {}).map(([k, v]) => [
          k,
          { stringValue: v.StringValue, dataType: v.DataType ?? 'String' },
        ]),
      ),
      md5OfBody: m.MD5OfBody ?? '',
      eventSource: 'aws:sqs',
      eventSourceARN: arn,
      awsRegion: region,
    })),
  };
}

/** What an emulated Lambda run cost and how long its records waited, per Ready machine. */
export interface LambdaFigures {
  memoryMb: number;
  invocations: number;
  invocationsPerReadyMachine: number;
  coldStarts: number;
  /** Records per invocation (mean): how full the batches were. */
  recordsPerInvocation: number;
  billedMs: number;
  billedGbSeconds: number;
  billedGbSecondsPerReadyMachine: number;
  invocationMsP50: number;
  invocationMsP99: number;
  /** The same of the cold and of the warm invocations apart (a cold one builds its client). */
  coldInvocationMsP50: number;
  warmInvocationMsP50: number;
  /** Records named in batchItemFailures, and invocations that threw. */
  failedRecords: number;
  failedInvocations: number;
  /** Sum of invocation durations per Ready machine: our own processing time. */
  processingMsPerMachine: number;
  /** Sum over records of SentTimestamp → invocation start, per Ready machine (the delay queue's wait apart). */
  queueWaitMsPerMachine: number;
  queueWaitP50Ms: number;
  queueWaitP99Ms: number;
  byFunction: Record<
    string,
    { invocations: number; coldStarts: number; records: number; billedGbSeconds: number }
  >;
  /** SQS requests made while the run converged (relay, handlers, pollers), empty receives apart. */
  sqsRequests?: {
    total: number;
    perReadyMachine: number;
    emptyReceives: number;
    byCommand: Record<string, number>;
  };
}

const durations = (is: readonly Invocation[]) => is.map((i) => i.durationMs);
const r2 = (x: number) => Math.round(x * 100) / 100;
const r6 = (x: number) => Math.round(x * 1e6) / 1e6;

/** The figures of a run's invocations (pure). */
export function lambdaFigures(
  invocations: readonly Invocation[],
  readyMachines: number,
  memoryMb: number,
  sqs?: { byCommand: Record<string, number>; emptyReceives: number },
): LambdaFigures {
  const per = (n: number) => (readyMachines ? n / readyMachines : 0);
  const gbs = (ms: number) => (ms / 1000) * (memoryMb / 1024);
  const billedMs = invocations.reduce((n, i) => n + i.billedMs, 0);
  const waits = invocations.filter((i) => i.countsWait).flatMap((i) => i.queueWaitMs);
  const records = invocations.reduce((n, i) => n + i.records, 0);
  const byFunction: LambdaFigures['byFunction'] = {};
  for (const i of invocations) {
    const f = byFunction[i.fn] ?? { invocations: 0, coldStarts: 0, records: 0, billedGbSeconds: 0 };
    byFunction[i.fn] = f;
    f.invocations++;
    f.records += i.records;
    if (i.cold) f.coldStarts++;
    f.billedGbSeconds = r6(f.billedGbSeconds + gbs(i.billedMs));
  }
  const figures: LambdaFigures = {
    memoryMb,
    invocations: invocations.length,
    invocationsPerReadyMachine: r2(per(invocations.length)),
    coldStarts: invocations.filter((i) => i.cold).length,
    recordsPerInvocation: r2(invocations.length ? records / invocations.length : 0),
    billedMs,
    billedGbSeconds: r6(gbs(billedMs)),
    billedGbSecondsPerReadyMachine: r6(per(gbs(billedMs))),
    invocationMsP50: Math.round(percentile(durations(invocations), 50)),
    invocationMsP99: Math.round(percentile(durations(invocations), 99)),
    coldInvocationMsP50: Math.round(percentile(durations(invocations.filter((i) => i.cold)), 50)),
    warmInvocationMsP50: Math.round(percentile(durations(invocations.filter((i) => !i.cold)), 50)),
    failedRecords: invocations.reduce((n, i) => n + i.failed, 0),
    failedInvocations: invocations.filter((i) => i.threw).length,
    processingMsPerMachine: Math.round(per(invocations.reduce((n, i) => n + i.durationMs, 0))),
    queueWaitMsPerMachine: Math.round(per(waits.reduce((n, w) => n + w, 0))),
    queueWaitP50Ms: Math.round(percentile(waits, 50)),
    queueWaitP99Ms: Math.round(percentile(waits, 99)),
    byFunction,
  };
  if (sqs) {
    const byCommand = { ...sqs.byCommand };
    if (byCommand.ReceiveMessage !== undefined) byCommand.ReceiveMessage -= sqs.emptyReceives;
    const total = Object.values(byCommand).reduce((n, v) => n + v, 0);
    figures.sqsRequests = {
      total,
      perReadyMachine: r2(per(total)),
      emptyReceives: sqs.emptyReceives,
      byCommand,
    };
  }
  return figures;
}

/** Counts the requests of the clients it is attached to, by command (SQS bills one request per API call). */
export class SqsRequestCounter {
  readonly byCommand: Record<string, number> = {};

  attach<C extends SQSClient>(client: C): C {
    client.middlewareStack.add(
      (next, context) => (args) => {
        const name = (context.commandName ?? 'unknown').replace(/Command$/, '');
        this.byCommand[name] = (this.byCommand[name] ?? 0) + 1;
        return next(args);
      },
      { step: 'initialize', name: 'metal3fnRequestCounter' },
    );
    return client;
  }
}
