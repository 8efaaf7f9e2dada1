/**
 * What a function's Lambda `handler` is, built once for every function: each
 * `functions/<step>/lambda.ts` is one line over this.
 */
import type { FunctionName } from '../../events/envelope.ts';
import type { ReconcileContext, ReconcileFn } from '../reconcile/context.ts';
import { buildContext } from './context.ts';
import { createSqsHandler, sqsClientOnFirstUse } from './lambda.ts';

/** The SQS handler of one function: its core, the context built on the first event. */
export function functionHandler(fn: FunctionName, reconcile: ReconcileFn) {
  let context: ReconcileContext | undefined;
  return createSqsHandler({
    fns: { [fn]: reconcile },
    context: () => {
      context ??= buildContext({ component: fn });
      return context;
    },
    sqs: sqsClientOnFirstUse,
    naming: { prefix: process.env.QUEUE_PREFIX },
    requeueUrl: process.env.REQUEUE_QUEUE_URL ?? '',
    // The queue's redrive limit, set next to it in serverless.yml (ADR 017).
    maxReceiveCount: Number(process.env.MAX_RECEIVE_COUNT) || undefined,
  });
}
