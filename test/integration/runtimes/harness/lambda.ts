/**
 * The Lambda adapter as AWS runs it: this harness plays the SQS event source mapping against the
 * real queue protocol (receive a batch with the queue's own visibility timeout, hand the handler the
 * SQS event, delete what the partial batch response does not name as failed).
 */
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { queueArn } from '../../../../shared/queue/ensure.ts';
import { createSqsHandler } from '../../../../shared/runtimes/lambda.ts';
import { offlineContext } from '../../../helpers/context.ts';
import { sendBodies, type TestSqs } from '../../../helpers/sqs.ts';
import { sqsEvent } from '../../../helpers/sqs-event.ts';
import type { Observed, RuntimeHarness } from '../contract.ts';
import { observed, TestQueues } from './queues.ts';

/** serverless.yml's visibility timeout: a record the handler does not back off comes back after it. */
const VISIBILITY_TIMEOUT = 180;

export function lambdaHarness(local: TestSqs): RuntimeHarness {
  const q = new TestQueues(local);
  const outcomes: Observed[] = [];
  let running = false;
  let loop: Promise<void> | undefined;
  return {
    outcomes,
    async start(fns, limits) {
      const urls = await q.create(limits, VISIBILITY_TIMEOUT);
      const arn = await queueArn(local.sqs, urls.main.selectHost);
      const context = offlineContext();
      const handler = createSqsHandler({
        fns,
        context: () => context,
        sqs: local.sqs,
        naming: { prefix: q.prefix },
        requeueUrl: urls.requeue,
        maxReceiveCount: limits.maxReceiveCount,
        retryBackoffSeconds: limits.retryBackoffSeconds,
        onOutcome: (o, r) => outcomes.push(observed(o, r.body)),
      });
      running = true;
      loop = (async () => {
        while (running) {
          const r = await local.sqs.send(
            new ReceiveMessageCommand({
              QueueUrl: urls.main.selectHost,
              MaxNumberOfMessages: 10,
              WaitTimeSeconds: 1,
              MessageSystemAttributeNames: ['All'],
              MessageAttributeNames: ['All'],
            }),
          );
          const messages = r.Messages ?? [];
          if (messages.length === 0) continue;
          const res: SQSBatchResponse = await handler(sqsEvent(messages, arn) as SQSEvent);
          const failed = new Set(res.batchItemFailures.map((f) => f.itemIdentifier));
          await q.deleteAll(
            urls.main.selectHost,
            messages.filter((m) => !failed.has(m.MessageId!)),
          );
        }
      })();
    },
    deliver: (items) => sendBodies(local.sqs, q.urls.main.selectHost, items),
    deadLetters: () => q.deadLetters(),
    requeuesScheduled: () => q.requeuesScheduled(),
    inTransport: () => q.inTransport(),
    async stop() {
      running = false;
      await loop;
    },
  };
}
