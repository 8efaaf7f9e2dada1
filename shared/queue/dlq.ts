/**
 * Dead letters. A malformed message is moved to its function's DLQ by the runtime itself, with the
 * reason as a message attribute, and acknowledged, so it never fails its batch-mates. Redrive moves
 * DLQ messages back: SQS StartMessageMoveTask where the endpoint has it, otherwise our own
 * receive → send → delete loop (fauxqs has no move tasks).
 */
import {
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { recordOf, stringOf } from '../api/json.ts';
import { queueArn } from './ensure.ts';
import { ATTR_REASON, ATTR_SOURCE_MESSAGE_ID, ATTR_SOURCE_QUEUE, stringAttr } from './message.ts';

export interface DeadLetter {
  body: string;
  reason: string;
  /** FIFO group of the original (a malformed message may have none: `malformed`). */
  group?: string | undefined;
  sourceQueue?: string | undefined;
  sourceMessageId?: string | undefined;
}

export async function sendToDlq(sqs: SQSClient, dlqUrl: string, d: DeadLetter): Promise<void> {
  const fifo = dlqUrl.endsWith('.fifo');
  await sqs.send(
    new SendMessageCommand({
      QueueUrl: dlqUrl,
      // The body is kept verbatim (even when it is not JSON) so a human sees what arrived.
      MessageBody: d.body.length > 0 ? d.body : '(empty body)',
      MessageAttributes: {
        [ATTR_REASON]: stringAttr(d.reason.slice(0, 1000) || 'unknown'),
        ...(d.sourceQueue ? { [ATTR_SOURCE_QUEUE]: stringAttr(d.sourceQueue) } : {}),
        ...(d.sourceMessageId ? { [ATTR_SOURCE_MESSAGE_ID]: stringAttr(d.sourceMessageId) } : {}),
      },
      ...(fifo
        ? {
            MessageGroupId: d.group || 'malformed',
            // One DLQ entry per original delivery, however often the move itself is retried.
            MessageDeduplicationId: `dlq-${d.sourceMessageId ?? Date.now().toString(36)}`.slice(0, 128),
          }
        : {}),
    }),
  );
}

export interface RedriveResult {
  method: 'move-task' | 'copy';
  moved: number;
  taskHandle?: string | undefined;
}

/** Errors meaning "this endpoint has no StartMessageMoveTask (for this queue type)". */
function moveTaskUnsupported(e: unknown): boolean {
  const err = recordOf(e);
  const text = `${stringOf(err.name) ?? ''} ${stringOf(err.message) ?? ''}`;
  return /InvalidAction|Unknown action|UnsupportedOperation|not supported|InvalidParameterValue|UnknownOperation/i.test(
    text,
  );
}

export interface RedriveOptions {
  /** 'auto' tries StartMessageMoveTask first; 'copy' uses our own loop only. */
  method?: 'auto' | 'move-task' | 'copy';
  /** Stop after this many messages (copy method). */
  max?: number | undefined;
}

export async function redrive(
  sqs: SQSClient,
  dlqUrl: string,
  targetUrl: string,
  opts: RedriveOptions = {},
): Promise<RedriveResult> {
  const method = opts.method ?? 'auto';
  if (method !== 'copy') {
    try {
      const r = await sqs.send(
        new StartMessageMoveTaskCommand({
          SourceArn: await queueArn(sqs, dlqUrl),
          DestinationArn: await queueArn(sqs, targetUrl),
        }),
      );
      return { method: 'move-task', moved: -1, taskHandle: r.TaskHandle };
    } catch (e) {
      if (method === 'move-task' || !moveTaskUnsupported(e)) throw e;
    }
  }
  return {
    method: 'copy',
    moved: await copyBack(sqs, dlqUrl, targetUrl, opts.max ?? Number.POSITIVE_INFINITY),
  };
}

/** receive → send (same group, fresh dedup id) → delete, until the DLQ answers empty. */
async function copyBack(sqs: SQSClient, dlqUrl: string, targetUrl: string, max: number): Promise<number> {
  const fifo = targetUrl.endsWith('.fifo');
  let moved = 0;
  while (moved < max) {
    const r = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: dlqUrl,
        MaxNumberOfMessages: Math.min(10, max - moved),
        WaitTimeSeconds: 0,
        VisibilityTimeout: 60,
        MessageSystemAttributeNames: ['MessageGroupId'],
        MessageAttributeNames: ['All'],
      }),
    );
    const msgs: Message[] = r.Messages ?? [];
    if (msgs.length === 0) break;
    const sent = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: targetUrl,
        Entries: msgs.map((m, i) => ({
          Id: String(i),
          MessageBody: m.Body ?? '',
          // The dead-letter reason stays behind: the message gets a clean retry.
          MessageAttributes: Object.fromEntries(
            Object.entries(m.MessageAttributes ?? {}).filter(([k]) => k !== ATTR_REASON),
          ),
          ...(fifo
            ? {
                MessageGroupId: m.Attributes?.MessageGroupId ?? 'redrive',
                MessageDeduplicationId: `redrive-${m.MessageId}`.slice(0, 128),
              }
            : {}),
        })),
      }),
    );
    const okIds = new Set((sent.Successful ?? []).map((s) => s.Id));
    const toDelete = msgs.filter((_, i) => okIds.has(String(i)));
    if (toDelete.length > 0) {
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: dlqUrl,
          Entries: toDelete.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })),
        }),
      );
    }
    moved += toDelete.length;
    if (toDelete.length < msgs.length) break; // the target refuses: stop rather than spin
  }
  return moved;
}
