/**
 * AWS Lambda adapter: an SQS event in, a partial batch response out (ReportBatchItemFailures),
 * with Powertools' batch processing. FIFO queues use SqsFifoPartialProcessorAsync with
 * skipGroupOnError, so a failure holds back only later messages of its own group.
 *
 * A malformed record is moved to its queue's DLQ here, with the reason as a message attribute, and
 * acknowledged: it neither waits five receives for the redrive nor fails its batch-mates.
 */
import {
  BatchProcessor,
  EventType,
  processPartialResponse,
  SqsFifoPartialProcessorAsync,
} from '@aws-lambda-powertools/batch';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { isFunctionName } from '../../events/envelope.ts';
import { recordOf, stringOf } from '../api/json.ts';
import { ATTR_GROUP } from '../queue/message.ts';
import { dlqName, functionOfQueue, parseQueueArn, type QueueNaming, queueName } from '../queue/names.ts';
import type { ReconcileContext } from '../reconcile/context.ts';
import { dispatch, type FunctionTable } from './dispatch.ts';
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
}

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

  const recordHandler = async (record: SQSRecord): Promise<void> => {
    const source = parseQueueArn(record.eventSourceARN);
    const owner = source ? functionOfQueue(source.name, opts.naming) : undefined;
    const group = record.attributes.MessageGroupId;
    const outcome = await dispatch(opts.fns, opts.context(), record.body, {
      expect: owner && !owner.dlq ? owner.fn : undefined,
      metrics: opts.metrics,
      // A FIFO queue's event source runs one batch of a group at a time, in order.
      group: source?.name.endsWith('.fifo') ? group : undefined,
    });
    switch (outcome.kind) {
      case 'done':
      case 'terminal':
        return;
      case 'requeue': {
        const url = await requeueUrl();
        // Misconfigured (no REQUEUE_QUEUE_URL): fall back to a redelivery after the visibility timeout.
        if (!url)
          throw new RetryRecordError(
            `requeue requested (${outcome.reason}) but no requeue queue is configured`,
          );
        const [client, { scheduleRequeue }] = await Promise.all([sqs(), sqsParts()]);
        await scheduleRequeue(client, url, outcome.msg, group, outcome.afterSeconds);
        return;
      }
      case 'retry':
        throw new RetryRecordError(outcome.error.message);
      case 'malformed': {
        if (!source || !owner) {
          // Not one of our queues: let the queue's own redrive policy take it.
          throw new RetryRecordError(`malformed message on a foreign queue: ${outcome.reason}`);
        }
        const dlqUrl = await urlOf(dlqName(owner.fn, opts.naming), source.account);
        const [client, { sendToDlq }] = await Promise.all([sqs(), sqsParts()]);
        await sendToDlq(client, dlqUrl, {
          body: record.body,
          reason: outcome.reason,
          group,
          sourceQueue: source.name,
          sourceMessageId: record.messageId,
        });
        return;
      }
    }
  };

  return async (event, context) => {
    const fifo = event.Records[0]?.eventSourceARN.endsWith('.fifo') ?? false;
    if (fifo) {
      return processPartialResponse(event, recordHandler, new SqsFifoPartialProcessorAsync(), {
        ...(context ? { context } : {}),
        skipGroupOnError: true,
        throwOnFullBatchFailure: false,
      });
    }
    return processPartialResponse(event, recordHandler, new BatchProcessor(EventType.SQS), {
      ...(context ? { context } : {}),
      throwOnFullBatchFailure: false,
    });
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
  createRequeueForwarder({ sqs: sqsClientOnFirstUse, naming: { prefix: process.env.QUEUE_PREFIX } });
