/**
 * Lambda SQS events as the event source mapping builds them: from messages received from a queue,
 * or one message for `fn` about `<namespace>/<name>` of the function's main kind (what the cold-start
 * bench and the Lambda bundle test hand a freshly loaded bundle).
 */
import { MAIN_KIND } from '../../bin/commands/replay.ts';
import type { FunctionName } from '../../events/envelope.ts';
import { toSqsEvent } from '../../infra/local/lambda-esm.ts';
import { apiVersionOf, R } from '../../shared/api/resources.ts';

/** The SQS event Lambda would build from received messages of the queue `arn` (the emulator's own). */
export const sqsEvent = toSqsEvent;

export function sqsEventFor(fn: FunctionName, name: string, namespace = 'default') {
  const kind = MAIN_KIND[fn];
  return sqsEvent(
    [
      {
        MessageId: 'm-1',
        ReceiptHandle: 'r-1',
        Body: JSON.stringify({
          v: 1,
          function: fn,
          cluster: 'management',
          apiVersion: apiVersionOf(R[kind]),
          kind,
          namespace,
          name,
          reason: 'modified',
        }),
        Attributes: { ApproximateReceiveCount: '1', MessageGroupId: 'g', MessageDeduplicationId: 'd' },
      },
    ],
    `arn:aws:sqs:us-east-1:000000000000:metal3fn-${fn}.fifo`,
  );
}
