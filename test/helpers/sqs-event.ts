/**
 * A Lambda SQS event carrying one message for `fn` about `<namespace>/<name>` of the function's
 * main kind, as the FIFO event source delivers it: what the cold-start bench and the Lambda bundle
 * test hand a freshly loaded bundle.
 */
import { MAIN_KIND } from '../../bin/commands/replay.ts';
import type { FunctionName } from '../../events/envelope.ts';
import { apiVersionOf, R } from '../../shared/api/resources.ts';

export function sqsEventFor(fn: FunctionName, name: string, namespace = 'default') {
  const kind = MAIN_KIND[fn];
  return {
    Records: [
      {
        messageId: 'm-1',
        receiptHandle: 'r-1',
        body: JSON.stringify({
          v: 1,
          function: fn,
          cluster: 'management',
          apiVersion: apiVersionOf(R[kind]),
          kind,
          namespace,
          name,
          reason: 'modified',
        }),
        attributes: {
          ApproximateReceiveCount: '1',
          SentTimestamp: '0',
          SenderId: 'x',
          ApproximateFirstReceiveTimestamp: '0',
          MessageGroupId: 'g',
          MessageDeduplicationId: 'd',
        },
        messageAttributes: {},
        md5OfBody: '',
        eventSource: 'aws:sqs',
        eventSourceARN: `arn:aws:sqs:us-east-1:000000000000:metal3fn-${fn}.fifo`,
        awsRegion: 'us-east-1',
      },
    ],
  };
}
