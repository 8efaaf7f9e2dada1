/**
 * Malformed messages, mixed into one batch with good ones, through the two queue runtimes with the
 * real cores, a real SQS server (fauxqs) and the embedded API server:
 *   - the Lambda adapter (`createSqsHandler`) on an SQS event built from messages received from the
 *     queue, and the local worker polling the queue;
 *   - not JSON, wrong schema, unknown function, unknown kind, oversized, a message for another
 *     function: each lands in the function's DLQ with its reason as a message attribute;
 *   - a message naming an object that does not exist is acknowledged and writes nothing;
 *   - a machine with bad input gets its terminal error on the object and is acknowledged;
 *   - no batch-mate fails: the good machine is provisioned, the partial batch response is empty;
 *   - nothing partial: the only BareMetalHost writes are those of the good machine's host.
 */
import { type Message, ReceiveMessageCommand, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FUNCTIONS } from '../../bin/function-table.ts';
import { MAX_MESSAGE_BYTES } from '../../events/envelope.ts';
import { createSampleHosts } from '../../infra/local/sim/bmo.ts';
import { R } from '../../shared/api/resources.ts';
import { ensureQueues, type QueueUrls, queueArn } from '../../shared/queue/ensure.ts';
import type { ReconcileContext } from '../../shared/reconcile/context.ts';
import { createSqsHandler } from '../../shared/runtimes/lambda.ts';
import { Worker } from '../../shared/runtimes/worker.ts';
import { startTestCluster, type TestCluster } from '../helpers/cluster.ts';
import { startSqs } from '../helpers/sqs.ts';
import { until } from '../helpers/wait.ts';
import { createCluster, createMachinePair } from '../integration/host-lifecycle/harness.ts';
import { envelopeFor, makeCtx, NS, statusOf, writes } from './harness.ts';

let tc: TestCluster;
let ctx: ReconcileContext;
let local: Awaited<ReturnType<typeof startSqs>>;

beforeAll(async () => {
  [tc, local] = await Promise.all([startTestCluster(), startSqs()]);
  ctx = makeCtx(tc.client);
  await createCluster(tc.client);
  await createSampleHosts(tc.client, NS, 4);
});
afterAll(async () => {
  local?.sqs.destroy();
  await Promise.all([tc?.stop(), local?.stop()]);
});

const machineMsg = (name: string) => JSON.stringify(envelopeFor('selectHost', R.Metal3Machine, name));

interface Poison {
  label: string;
  body: string;
  reason: RegExp;
}

/** The bad messages of one batch (every one must end in the DLQ with its reason). */
function poisons(): Poison[] {
  const good = JSON.parse(machineMsg('x')) as Record<string, unknown>;
  return [
    {
      label: 'not JSON',
      body: '{"function":"selectHost","kind":"Metal3Machine"',
      reason: /message is not JSON/,
    },
    { label: 'not an object', body: '[1,2,3]', reason: /invalid message/ },
    {
      label: 'missing name',
      body: JSON.stringify({ ...good, name: undefined }),
      reason: /invalid message: name/,
    },
    {
      label: 'unknown field',
      body: JSON.stringify({ ...good, payload: { spec: {} } }),
      reason: /invalid message.*payload/i,
    },
    {
      label: 'bad name',
      body: JSON.stringify({ ...good, name: '../../etc/passwd' }),
      reason: /name must be a DNS-1123/,
    },
    {
      label: 'unknown function',
      body: JSON.stringify({ ...good, function: 'formatDisks' }),
      reason: /invalid message: function/,
    },
    {
      label: 'unknown kind',
      body: JSON.stringify({ ...good, apiVersion: 'v1', kind: 'Pod' }),
      reason: /unknown kind 'Pod'/,
    },
    {
      label: 'oversized',
      body: JSON.stringify(good).replace('{', `{${' '.repeat(MAX_MESSAGE_BYTES)}`),
      reason: /message too large/,
    },
    {
      label: 'for another function',
      body: JSON.stringify(envelopeFor('renderData', R.Metal3Data, 'nodepool-0')),
      reason: /message for function 'renderData' reached selectHost/,
    },
  ];
}

async function send(url: string, bodies: string[]): Promise<void> {
  for (let i = 0; i < bodies.length; i += 10) {
    const chunk = bodies.slice(i, i + 10);
    const r = await local.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: chunk.map((body, j) => ({
          Id: String(j),
          MessageBody: body,
          MessageGroupId: `g-${i + j}`,
          MessageDeduplicationId: `d-${i + j}-${Date.now()}`,
        })),
      }),
    );
    expect(r.Failed ?? []).toEqual([]);
  }
}

async function receive(url: string, n: number, timeoutMs = 10_000): Promise<Message[]> {
  const out: Message[] = [];
  const end = Date.now() + timeoutMs;
  while (out.length < n && Date.now() < end) {
    const r = await local.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
        VisibilityTimeout: 30,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
    );
    out.push(...(r.Messages ?? []));
  }
  return out;
}

function sqsEvent(messages: Message[], arn: string): SQSEvent {
  return {
    Records: messages.map((m) => ({
      messageId: m.MessageId!,
      receiptHandle: m.ReceiptHandle!,
      body: m.Body!,
      attributes: {
        ApproximateReceiveCount: m.Attributes?.ApproximateReceiveCount ?? '1',
        SentTimestamp: m.Attributes?.SentTimestamp ?? '0',
        SenderId: 'test',
        ApproximateFirstReceiveTimestamp: m.Attributes?.ApproximateFirstReceiveTimestamp ?? '0',
        MessageGroupId: m.Attributes?.MessageGroupId,
        MessageDeduplicationId: m.Attributes?.MessageDeduplicationId,
        SequenceNumber: m.Attributes?.SequenceNumber,
      },
      messageAttributes: {},
      md5OfBody: m.MD5OfBody!,
      eventSource: 'aws:sqs',
      eventSourceARN: arn,
      awsRegion: 'us-east-1',
    })),
  };
}

/** The dead letters: every poison exactly once, each with its reason and source queue. */
async function expectDeadLetters(urls: QueueUrls, prefix: string, expected: Poison[]): Promise<void> {
  const dead = await receive(urls.dlq.selectHost!, expected.length);
  expect(dead).toHaveLength(expected.length);
  for (const p of expected) {
    const d = dead.find((m) => m.Body === p.body);
    expect(d, `${p.label} should be dead-lettered`).toBeDefined();
    expect(d?.MessageAttributes?.reason?.StringValue, p.label).toMatch(p.reason);
    expect(d?.MessageAttributes?.['source-queue']?.StringValue).toBe(`${prefix}metal3fn-selectHost.fifo`);
  }
  expect(await receive(urls.dlq.selectHost!, 1, 1_000)).toEqual([]);
}

/** The good machine holds exactly one host; the bad one failed terminally and holds none. */
async function expectMachines(good: string, bad: string): Promise<string> {
  const g = await tc.client.get(R.Metal3Machine, NS, good);
  const hostKey = g?.metadata.annotations?.['metal3.io/BareMetalHost'];
  expect(hostKey, `${good} should hold a host`).toBeDefined();
  const host = await tc.client.get(R.BareMetalHost, NS, hostKey!.split('/')[1]!);
  expect((host?.spec as { consumerRef?: { name?: string } } | undefined)?.consumerRef?.name).toBe(good);
  expect((host?.spec as { image?: { url?: string } } | undefined)?.image?.url).toBeTruthy();
  const b = await tc.client.get(R.Metal3Machine, NS, bad);
  expect(statusOf(b)).toMatchObject({ failureReason: 'InvalidConfiguration' });
  expect(String(statusOf(b).failureMessage)).toMatch(/image\.checksum/);
  expect(b?.metadata.annotations?.['metal3.io/BareMetalHost']).toBeUndefined();
  return hostKey!.split('/')[1]!;
}

function expectOnlyHostWrites(hostName: string): void {
  const hostWrites = writes(tc.server.log, ['baremetalhosts']);
  expect(hostWrites.length).toBeGreaterThan(0);
  expect(hostWrites.filter((w) => w.name !== hostName).map((w) => `${w.verb} ${w.name}`)).toEqual([]);
  // The message naming a machine that does not exist read it once and wrote nothing about it.
  expect(tc.server.log.entries.filter((e) => e.name === 'ghost' && e.verb !== 'get')).toEqual([]);
}

describe('a batch mixing good and malformed messages', () => {
  it('Lambda adapter: poison to the DLQ with reasons, terminal on the object, batch-mates succeed', async () => {
    const prefix = 'badin-lambda-';
    const urls = await ensureQueues(local.sqs, { prefix });
    await createMachinePair(tc.client, 'good-l');
    await createMachinePair(tc.client, 'bad-l', {
      m3mSpec: { image: { url: 'http://172.22.0.1/node.img' } },
    });
    const bad = poisons();
    await send(urls.main.selectHost!, [
      machineMsg('good-l'),
      machineMsg('bad-l'),
      machineMsg('ghost'),
      ...bad.map((p) => p.body),
    ]);
    const received = await receive(urls.main.selectHost!, bad.length + 3);
    expect(received).toHaveLength(bad.length + 3);

    tc.server.log.reset();
    const handler = createSqsHandler({
      fns: FUNCTIONS,
      context: () => ctx,
      sqs: local.sqs,
      naming: { prefix },
      requeueUrl: urls.requeue,
    });
    const res = await handler(sqsEvent(received, await queueArn(local.sqs, urls.main.selectHost!)));
    expect(res.batchItemFailures).toEqual([]);

    await expectDeadLetters(urls, prefix, bad);
    const host = await expectMachines('good-l', 'bad-l');
    expectOnlyHostWrites(host);
  });

  it('local worker: the same batch, the same outcome', async () => {
    const prefix = 'badin-worker-';
    const urls = await ensureQueues(local.sqs, { prefix, visibilityTimeoutSeconds: 5 });
    await createMachinePair(tc.client, 'good-w');
    await createMachinePair(tc.client, 'bad-w', {
      m3mSpec: { image: { url: 'http://172.22.0.1/node.img' } },
    });
    const bad = poisons();
    tc.server.log.reset();
    const worker = new Worker({
      sqs: local.sqs,
      fns: FUNCTIONS,
      context: ctx,
      queues: urls,
      functions: ['selectHost'],
      waitTimeSeconds: 1,
      retryBackoffSeconds: () => 0,
    }).start();
    try {
      await send(urls.main.selectHost!, [
        machineMsg('good-w'),
        machineMsg('bad-w'),
        machineMsg('ghost'),
        ...bad.map((p) => p.body),
      ]);
      await until(() => {
        const s = worker.stats;
        return s.done + s.terminal + s.malformed + s.requeued >= bad.length + 3 || undefined;
      }, 20_000);
      expect(worker.stats).toMatchObject({ malformed: bad.length, terminal: 1, retried: 0 });
    } finally {
      await worker.stop({ graceMs: 5_000 });
    }
    await expectDeadLetters(urls, prefix, bad);
    const host = await expectMachines('good-w', 'bad-w');
    expectOnlyHostWrites(host);
  });
});
