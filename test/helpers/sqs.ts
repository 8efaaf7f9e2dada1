/**
 * A real SQS server for tests (fauxqs on 127.0.0.1, or LocalStack with SQS_TEST_BACKEND=localstack)
 * and the few calls the queue tests make on it directly: send raw bodies to a FIFO queue, receive
 * what is there.
 */
import {
  type Message,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll } from 'vitest';
import { type LocalSqs, type SqsBackendSetting, startLocalSqs } from '../../infra/local/sqs.ts';
import { createSqsClient } from '../../shared/queue/sqs.ts';

export type TestSqs = LocalSqs & { sqs: SQSClient };

let backendOfThisFile: SqsBackendSetting | undefined;

/** The backend startSqs starts in this test file (localstack.test.ts runs the queue tests on LocalStack). */
export function useSqsBackend(backend: SqsBackendSetting): void {
  backendOfThisFile = backend;
}

/** fauxqs, or LocalStack when SQS_TEST_BACKEND=localstack (or useSqsBackend) says so. */
export async function startSqs(): Promise<TestSqs> {
  const local = await startLocalSqs({
    backend: backendOfThisFile ?? (process.env.SQS_TEST_BACKEND === 'localstack' ? 'localstack' : 'fauxqs'),
  });
  return { ...local, sqs: createSqsClient({ endpoint: local.endpoint, region: 'us-east-1' }) };
}

/** One SQS server for the calling file (hooks registered here); the holder is filled by beforeAll. */
export function useSqs(): TestSqs {
  const holder = {} as TestSqs;
  beforeAll(async () => {
    Object.assign(holder, await startSqs());
  });
  afterAll(async () => {
    holder.sqs?.destroy();
    await holder.stop?.();
  });
  return holder;
}

/** Sends raw bodies to a FIFO queue, each in its group, with unique deduplication ids; throws on a refusal. */
export async function sendBodies(
  sqs: SQSClient,
  url: string,
  bodies: readonly { body: string; group: string }[],
): Promise<void> {
  for (let i = 0; i < bodies.length; i += 10) {
    const chunk = bodies.slice(i, i + 10);
    const r = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: chunk.map((b, j) => ({
          Id: String(j),
          MessageBody: b.body,
          MessageGroupId: b.group,
          MessageDeduplicationId: `${b.group}-${i + j}-${Date.now()}-${Math.random()}`,
        })),
      }),
    );
    if (r.Failed?.length) throw new Error(`send refused: ${JSON.stringify(r.Failed)}`);
  }
}

/** Receives until `n` messages came or `timeoutMs` passed, with every attribute; holds them `visibility` s. */
export async function receiveAll(
  sqs: SQSClient,
  url: string,
  n: number,
  opts: { timeoutMs?: number; visibility?: number } = {},
): Promise<Message[]> {
  const out: Message[] = [];
  const end = Date.now() + (opts.timeoutMs ?? 5_000);
  while (out.length < n && Date.now() < end) {
    const r = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: Math.min(10, n - out.length),
        WaitTimeSeconds: 1,
        VisibilityTimeout: opts.visibility ?? 30,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
    );
    out.push(...(r.Messages ?? []));
  }
  return out;
}
