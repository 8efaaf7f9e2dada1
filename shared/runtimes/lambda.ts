/**
 * AWS Lambda adapter: an SQS event in, a partial batch response out (ReportBatchItemFailures),
 * with Powertools' batch processing. FIFO queues use SqsFifoPartialProcessorAsync with
 * skipGroupOnError, so a failure holds back only later messages of its own group.
 *
 * A malformed record is moved to its queue's DLQ here, with the reason as a message attribute, and
 * acknowledged: it neither waits for the redrive nor fails its batch-mates.
 *
 * Retries back off (docs/adr/017-retry-backoff.md): a failed record, and every record of its FIFO
 * group the batch skipped behind it, is made visible again after 1, 2, 4 … 300 s by receive count
 * (ChangeMessageVisibility), not after the queue's flat visibility timeout. A record failing at its
 * last receive is dead-lettered here with its error, so the records behind it run instead of
 * following it into the DLQ.
 */
import {
  BatchProcessor,
  EventType,
  processPartialResponse,
  SqsFifoPartialProcessorAsync,
} from '@aws-lambda-powertools/batch';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { type FunctionName, isFunctionName } from '../../events/envelope.ts';
import { messageOf, recordOf, stringOf } from '../api/json.ts';
import type { Logger } from '../observability/logger.ts';
import type { DeliveryOutcome } from '../observability/metric-names.ts';
import { ATTR_GROUP } from '../queue/message.ts';
import { dlqName, functionOfQueue, parseQueueArn, type QueueNaming, queueName } from '../queue/names.ts';
import {
  groupBackoffSeconds,
  MAX_RECEIVE_COUNT,
  receiveCountOf,
  retriesExhausted,
  retryBackoffSeconds,
} from '../queue/redelivery.ts';
import type { ReconcileContext } from '../reconcile/context.ts';
import { supersededInBatch } from './coalesce.ts';
import { type DispatchOutcome, dispatch, type FunctionTable, messageLogFields } from './dispatch.ts';
import { readEnv } from './env.ts';
import type { Delivery } from './lambda-telemetry.ts';
import type { PipelineMetrics } from './metrics.ts';

/**
 * An SQS client, or a factory called on first use: a handler whose messages need no requeue or
 * dead letter then never loads the AWS SDK (a third of a bundle's code), which shortens cold starts.
 */
export type SqsClientSource = SQSClient | (() => SQSClient | Promise<SQSClient>);

/** The Lambda's own SQS client, from the AWS SDK imported on first use (a chunk of its own, ADR 011). */
export const sqsClientOnFirstUse = async (): Promise<SQSClient> =>
  new (await import('@aws-sdk/client-sqs')).SQSClient({});

/** The SQS parts the handlers use, loaded on first use (a separate chunk in the Lambda bundles). */
const sqsParts = () =>
  Promise.all([import('@aws-sdk/client-sqs'), import('../queue/dlq.ts'), import('../queue/requeue.ts')]).then(
    ([sdk, dlq, requeue]) => ({
      GetQueueUrlCommand: sdk.GetQueueUrlCommand,
      ChangeMessageVisibilityBatchCommand: sdk.ChangeMessageVisibilityBatchCommand,
      sendToDlq: dlq.sendToDlq,
      scheduleRequeue: requeue.scheduleRequeue,
      forwardOne: requeue.forwardOne,
    }),
  );

function lazySqs(source: SqsClientSource): () => Promise<SQSClient> {
  if (typeof source !== 'function') return async () => source;
  let p: Promise<SQSClient> | undefined;
  return () => {
    if (!p) {
      p = Promise.resolve().then(source);
      p.catch(() => {
        p = undefined;
      });
    }
    return p;
  };
}

/** Queue URL by name, looked up once (a failed lookup is retried next time). */
function queueUrlCache(sqs: () => Promise<SQSClient>): (name: string, account: string) => Promise<string> {
  const cache = new Map<string, Promise<string>>();
  return (name, account) => {
    let p = cache.get(name);
    if (!p) {
      p = Promise.all([sqs(), sqsParts()])
        .then(([client, { GetQueueUrlCommand }]) =>
          client.send(
            new GetQueueUrlCommand({
              QueueName: name,
              ...(account ? { QueueOwnerAWSAccountId: account } : {}),
            }),
          ),
        )
        .then((r) => r.QueueUrl!);
      p.catch(() => cache.delete(name));
      cache.set(name, p);
    }
    return p;
  };
}

export interface SqsHandlerOptions {
  fns: FunctionTable;
  /** The context, built once per cold start (lazily, so an import never touches the network). */
  context: () => ReconcileContext;
  sqs: SqsClientSource;
  naming?: QueueNaming | undefined;
  /** URL of the standard requeue queue (see docs/adr/002). */
  requeueUrl: string | (() => Promise<string>);
  metrics?: PipelineMetrics | undefined;
  /** The queue's redrive maxReceiveCount (default MAX_RECEIVE_COUNT; serverless.yml passes its own). */
  maxReceiveCount?: number | undefined;
  /** Wait after a failure by receive count (default 1, 2, 4 … ≤ 300 s). */
  retryBackoffSeconds?: ((receiveCount: number) => number) | undefined;
  /** Observes every record's outcome (tests). */
  onOutcome?: ((outcome: DispatchOutcome, record: SQSRecord) => void) | undefined;
  /** Told what became of each record and how long its function ran (the Lambda's EMF metrics). */
  onDelivered?: ((d: Delivery) => void) | undefined;
}

type QueueArn = NonNullable<ReturnType<typeof parseQueueArn>>;
type QueueOwner = NonNullable<ReturnType<typeof functionOfQueue>>;

/** Thrown into Powertools to fail a record (the queue redelivers it with backoff). */
export class RetryRecordError extends Error {
  override readonly name = 'RetryRecordError';
}

export function createSqsHandler(
  opts: SqsHandlerOptions,
): (event: SQSEvent, context?: Context) => Promise<SQSBatchResponse> {
  const sqs = lazySqs(opts.sqs);
  const urlOf = queueUrlCache(sqs);
  const fixedUrl = opts.requeueUrl;
  const requeueUrl = typeof fixedUrl === 'string' ? async () => fixedUrl : fixedUrl;
  const maxReceives = opts.maxReceiveCount ?? MAX_RECEIVE_COUNT;
  const schedule = opts.retryBackoffSeconds ?? retryBackoffSeconds;

  const deadLetter = async (
    record: SQSRecord,
    source: { name: string; account: string },
    fn: FunctionName,
    reason: string,
  ): Promise<void> => {
    const dlqUrl = await urlOf(dlqName(fn, opts.naming), source.account);
    const [client, { sendToDlq }] = await Promise.all([sqs(), sqsParts()]);
    await sendToDlq(client, dlqUrl, {
      body: record.body,
      reason,
      group: record.attributes.MessageGroupId,
      sourceQueue: source.name,
      sourceMessageId: record.messageId,
    });
  };

  /**
   * The failed records (and those skipped behind them) come back after the backoff of their
   * group, not after the visibility timeout. Best effort: where this fails, the timeout applies.
   */
  const backOff = async (records: SQSRecord[], fifo: boolean): Promise<void> => {
    const source = records[0] && parseQueueArn(records[0].eventSourceARN);
    if (!source) return;
    const groups = new Map<string, SQSRecord[]>();
    for (const r of records) {
      const g = (fifo && r.attributes.MessageGroupId) || r.messageId;
      groups.set(g, [...(groups.get(g) ?? []), r]);
    }
    const entries = [...groups.values()].flatMap((rs) => {
      const seconds = groupBackoffSeconds(
        rs.map((r) => receiveCountOf(r.attributes.ApproximateReceiveCount)),
        schedule,
      );
      return rs.map((r) => ({ ReceiptHandle: r.receiptHandle, VisibilityTimeout: seconds }));
    });
    try {
      const url = await urlOf(source.name, source.account);
      const [client, { ChangeMessageVisibilityBatchCommand }] = await Promise.all([sqs(), sqsParts()]);
      for (let i = 0; i < entries.length; i += 10) {
        const chunk = entries.slice(i, i + 10);
        const r = await client.send(
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl: url,
            Entries: chunk.map((e, j) => ({ Id: String(j), ...e })),
          }),
        );
        if (r.Failed?.length)
          opts.context().log.warn('backoff not set; the visibility timeout applies', { failed: r.Failed });
      }
    } catch (e) {
      opts.context().log.warn('backoff not set; the visibility timeout applies', {
        error: messageOf(e),
      });
    }
  };

  /** What the transport does with a dispatched record; throws RetryRecordError to leave it to the queue. */
  const settle = async (
    record: SQSRecord,
    from: { source: QueueArn | undefined; owner: QueueOwner | undefined },
    outcome: DispatchOutcome,
    log: Logger,
  ): Promise<DeliveryOutcome> => {
    const { source, owner } = from;
    switch (outcome.kind) {
      case 'done':
      case 'terminal':
        return outcome.kind;
      case 'requeue': {
        const url = await requeueUrl();
        // Misconfigured (no REQUEUE_QUEUE_URL): fall back to a redelivery after the visibility timeout.
        if (!url)
          throw new RetryRecordError(
            `requeue requested (${outcome.reason}) but no requeue queue is configured`,
          );
        const [client, { scheduleRequeue }] = await Promise.all([sqs(), sqsParts()]);
        await scheduleRequeue(
          client,
          url,
          outcome.msg,
          record.attributes.MessageGroupId,
          outcome.afterSeconds,
          Date.now(),
          outcome.notBefore,
        );
        return 'requeue';
      }
      case 'retry': {
        const count = receiveCountOf(record.attributes.ApproximateReceiveCount);
        if (count < maxReceives || !source || !owner || owner.dlq)
          throw new RetryRecordError(outcome.error.message);
        // Its last receive: dead-lettered here, so the rest of its group runs now rather than
        // follow it into the DLQ at their next receive.
        const reason = retriesExhausted(count, outcome.error.message);
        await deadLetter(record, source, owner.fn, reason);
        log.warn('dead-lettered', { deadLetterReason: reason });
        return 'dead-letter';
      }
      case 'malformed': {
        if (!source || !owner) {
          // Not one of our queues: let the queue's own redrive policy take it.
          throw new RetryRecordError(`malformed message on a foreign queue: ${outcome.reason}`);
        }
        await deadLetter(record, source, owner.fn, outcome.reason);
        log.warn('dead-lettered', { deadLetterReason: outcome.reason });
        return 'dead-letter';
      }
    }
  };

  // Records of the batches being handled that a later record of their batch supersedes (coalesce.ts).
  const superseded = new WeakSet<SQSRecord>();
  const recordHandler = async (record: SQSRecord): Promise<void> => {
    const source = parseQueueArn(record.eventSourceARN);
    const owner = source ? functionOfQueue(source.name, opts.naming) : undefined;
    const group = record.attributes.MessageGroupId;
    if (superseded.delete(record)) {
      // A later record of this batch names the same key: it runs, this one is acknowledged.
      if (owner && !owner.dlq) opts.metrics?.messages.inc({ function: owner.fn, outcome: 'coalesced' });
      opts.onDelivered?.({ outcome: 'coalesced', seconds: undefined });
      return;
    }
    const ctx = opts.context();
    // Every line of this record's processing names the delivery (dispatch adds the function and object).
    const log = ctx.log.child({
      messageId: record.messageId,
      ...(group ? { messageGroupId: group } : {}),
      receiveCount: receiveCountOf(record.attributes.ApproximateReceiveCount),
    });
    const started = performance.now();
    const outcome = await dispatch(opts.fns, { ...ctx, log }, record.body, {
      expect: owner && !owner.dlq ? owner.fn : undefined,
      metrics: opts.metrics,
      // A FIFO queue's event source runs one batch of a group at a time, in order.
      group: source?.name.endsWith('.fifo') ? group : undefined,
    });
    const seconds = outcome.kind === 'malformed' ? undefined : (performance.now() - started) / 1000;
    opts.onOutcome?.(outcome, record);
    const about = outcome.kind === 'malformed' ? log : log.child(messageLogFields(outcome.msg));
    let delivered: DeliveryOutcome = 'retry';
    try {
      delivered = await settle(record, { source, owner }, outcome, about);
    } finally {
      about.debug('handled', { outcome: delivered, ...(seconds === undefined ? {} : { seconds }) });
      opts.onDelivered?.({ outcome: delivered, seconds });
    }
  };

  return async (event, context) => {
    const fifo = event.Records[0]?.eventSourceARN.endsWith('.fifo') ?? false;
    if (fifo) {
      const batch = event.Records.map((record) => ({
        record,
        body: record.body,
        group: record.attributes.MessageGroupId,
      }));
      for (const s of supersededInBatch(batch, Date.now())) superseded.add(s.record);
    }
    const response = fifo
      ? await processPartialResponse(event, recordHandler, new SqsFifoPartialProcessorAsync(), {
          ...(context ? { context } : {}),
          skipGroupOnError: true,
          throwOnFullBatchFailure: false,
        })
      : await processPartialResponse(event, recordHandler, new BatchProcessor(EventType.SQS), {
          ...(context ? { context } : {}),
          throwOnFullBatchFailure: false,
        });
    const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
    const held = event.Records.filter((r) => failed.has(r.messageId));
    if (held.length > 0) await backOff(held, fifo);
    return response;
  };
}

export interface RequeueForwarderOptions {
  sqs: SqsClientSource;
  naming?: QueueNaming | undefined;
}

/**
 * The small Lambda on the standard requeue queue: forwards due messages into their function's
 * FIFO queue and sends early ones round again (chained hops beyond 900 s). Queue URLs are looked up
 * by name on first use, so it needs no configuration beyond the prefix.
 */
export function createRequeueForwarder(
  opts: RequeueForwarderOptions,
): (event: SQSEvent) => Promise<SQSBatchResponse> {
  const sqs = lazySqs(opts.sqs);
  const urlOf = queueUrlCache(sqs);
  return async (event) =>
    processPartialResponse(
      event,
      async (record: SQSRecord) => {
        const source = parseQueueArn(record.eventSourceARN);
        if (!source) throw new Error(`not an SQS queue ARN: ${record.eventSourceARN}`);
        // The function is read from the body here only to find its queue; forwardOne validates it.
        const named = stringOf(recordOf(JSON.parse(record.body)).function);
        if (!named || !isFunctionName(named)) throw new Error(`requeue message names no function`);
        const fn = named;
        const main = { [fn]: await urlOf(queueName(fn, opts.naming), source.account) };
        const requeue = await urlOf(source.name, source.account);
        const [client, { forwardOne }] = await Promise.all([sqs(), sqsParts()]);
        await forwardOne(
          client,
          { main, requeue },
          record.body,
          record.messageAttributes[ATTR_GROUP]?.stringValue,
        );
      },
      new BatchProcessor(EventType.SQS),
      { throwOnFullBatchFailure: false },
    );
}

/** The requeue forwarder's Lambda handler, configured from its environment (ADR 002). */
export const requeueForwarderHandler = () =>
  // readEnv at module load: a bad setting fails INIT (ADR 026).
  createRequeueForwarder({ sqs: sqsClientOnFirstUse, naming: { prefix: readEnv().QUEUE_PREFIX } });
