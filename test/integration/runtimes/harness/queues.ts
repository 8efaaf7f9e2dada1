/**
 * What the queue adapters' harnesses (Lambda, worker) share: a fresh set of queues per test on the
 * file's SQS server, and the observations made on the queues themselves — dead letters with their
 * reason, requeues waiting in the delay queue, messages not yet acknowledged.
 */
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  type QueueAttributeName,
} from '@aws-sdk/client-sqs';
import { parseEnvelope } from '../../../../events/envelope.ts';
import { ensureQueues, type QueueUrls } from '../../../../shared/queue/ensure.ts';
import { ATTR_REASON } from '../../../../shared/queue/message.ts';
import type { DispatchOutcome } from '../../../../shared/runtimes/dispatch.ts';
import { receiveAll, type TestSqs } from '../../../helpers/sqs.ts';
import type { Limits, Observed } from '../contract.ts';

let installations = 0;

export class TestQueues {
  readonly local: TestSqs;
  urls!: QueueUrls;
  prefix = '';
  private readonly dead: { body: string; reason: string }[] = [];

  constructor(local: TestSqs) {
    this.local = local;
  }

  /** Queues of their own for one test, the redrive at the test's receive limit. */
  async create(limits: Limits, visibilityTimeoutSeconds: number): Promise<QueueUrls> {
    this.prefix = `c${process.pid}x${installations++}-`;
    this.urls = await ensureQueues(this.local.sqs, {
      prefix: this.prefix,
      functions: ['selectHost'],
      maxReceiveCount: limits.maxReceiveCount,
      visibilityTimeoutSeconds,
    });
    return this.urls;
  }

  /** Dead letters so far (received from the DLQ and kept here). */
  async deadLetters(): Promise<{ body: string; reason: string }[]> {
    const got = await receiveAll(this.local.sqs, this.urls.dlq.selectHost, 10, { timeoutMs: 300 });
    await this.deleteAll(this.urls.dlq.selectHost, got);
    for (const m of got)
      this.dead.push({ body: m.Body ?? '', reason: m.MessageAttributes?.[ATTR_REASON]?.StringValue ?? '' });
    return [...this.dead];
  }

  async requeuesScheduled(): Promise<number> {
    const a = await this.attributes(this.urls.requeue);
    return a.delayed + a.visible + a.notVisible;
  }

  async inTransport(): Promise<number> {
    const a = await this.attributes(this.urls.main.selectHost);
    return a.delayed + a.visible + a.notVisible;
  }

  async deleteAll(url: string, messages: readonly Message[]): Promise<void> {
    for (let i = 0; i < messages.length; i += 10) {
      await this.local.sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: url,
          Entries: messages
            .slice(i, i + 10)
            .map((m, j) => ({ Id: String(j), ReceiptHandle: m.ReceiptHandle! })),
        }),
      );
    }
  }

  private async attributes(url: string) {
    const r = await this.local.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: url,
        AttributeNames: [
          'ApproximateNumberOfMessages',
          'ApproximateNumberOfMessagesNotVisible',
          'ApproximateNumberOfMessagesDelayed',
        ],
      }),
    );
    const n = (k: QueueAttributeName) => Number(r.Attributes?.[k] ?? 0);
    return {
      visible: n('ApproximateNumberOfMessages'),
      notVisible: n('ApproximateNumberOfMessagesNotVisible'),
      delayed: n('ApproximateNumberOfMessagesDelayed'),
    };
  }
}

/** An outcome as the suite records it: the message's object name (or its body when it does not parse). */
export function observed(outcome: DispatchOutcome, body: string): Observed {
  if (outcome.kind !== 'malformed') return { name: outcome.msg.name, kind: outcome.kind };
  try {
    return { name: parseEnvelope(body).name, kind: 'malformed' };
  } catch {
    return { name: body, kind: 'malformed' };
  }
}
