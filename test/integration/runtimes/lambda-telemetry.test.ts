/**
 * What a Lambda function writes to stdout for one SQS event, through its real handler
 * (functions/metal3-cluster/lambda.ts) against the embedded API server: Powertools Logger lines that
 * all name the delivery (message id, FIFO group, receive count), the function and the object, and
 * EMF metrics (namespace, bounded dimensions, names and values) for the outcome, the duration and
 * every kube client request — the requests checked against the API server's own request log.
 */
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { envelopeOf, R } from '../../../shared/api/resources.ts';
import { startTestCluster, type TestCluster } from '../../helpers/cluster.ts';
import { lambdaContext } from '../../helpers/lambda-context.ts';
import { messageFor } from '../../helpers/messages.ts';
import { sqsEvent } from '../../helpers/sqs-event.ts';
import { captureOutput, emfLines } from '../../helpers/stdout.ts';

const GROUP = 'Metal3Cluster/metal3/bad';
let tc: TestCluster;
let lines: Record<string, unknown>[];
let response: SQSBatchResponse;
/** What the API server served during the invocation: `<our verb> <resource> <status>` → count. */
let served: Record<string, number>;

beforeAll(async () => {
  tc = await startTestCluster();
  // A control plane endpoint without a host: reconcileCluster records a terminal failure.
  await tc.client.create(envelopeOf(R.Metal3Cluster), {
    metadata: { name: 'bad', namespace: 'metal3' },
    spec: { controlPlaneEndpoint: { host: '', port: 6443 } },
  });
  vi.stubEnv('METAL3FN_KUBECONFIG', tc.kubeconfig);
  vi.stubEnv('LOG_LEVEL', 'debug');
  vi.stubEnv('AWS_REGION', 'us-east-1');
  // What Lambda sets for an on-demand start (Powertools reads it for cold_start).
  vi.stubEnv('AWS_LAMBDA_INITIALIZATION_TYPE', 'on-demand');
  const event: SQSEvent = sqsEvent(
    [
      {
        MessageId: 'm-1',
        ReceiptHandle: 'r-1',
        Body: JSON.stringify(messageFor('reconcileCluster', R.Metal3Cluster, 'bad')),
        Attributes: { ApproximateReceiveCount: '2', MessageGroupId: GROUP, MessageDeduplicationId: 'd-1' },
      },
    ],
    'arn:aws:sqs:us-east-1:000000000000:metal3fn-reconcileCluster.fifo',
  );
  const out = captureOutput();
  try {
    const { handler } = await import('../../../functions/metal3-cluster/lambda.ts');
    tc.server.log.reset();
    response = await handler(event, lambdaContext('metal3fn-reconcileCluster', 'req-1'));
    lines = out.json();
  } finally {
    out.restore();
  }
  served = {};
  for (const e of tc.server.log.entries) {
    const [resource, sub] = e.resource.split('/');
    const k = `${e.verb}${sub ? `-${sub}` : ''} ${resource} ${e.status}`;
    served[k] = (served[k] ?? 0) + 1;
  }
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await tc?.stop();
});

describe('one SQS event through a Lambda handler', () => {
  it('is handled: the terminal failure is recorded and the record acknowledged', async () => {
    expect(response).toEqual({ batchItemFailures: [] });
    const m3c = await tc.client.get(R.Metal3Cluster, 'metal3', 'bad');
    expect(m3c?.status).toMatchObject({ failureReason: 'InvalidConfiguration' });
  });

  it('every log line names the delivery, the function and the object, beside the invocation', () => {
    const logs = lines.filter((l) => !('_aws' in l));
    expect(logs.map((l) => l.message)).toEqual(expect.arrayContaining(['terminal', 'handled']));
    for (const l of logs) {
      expect(l).toMatchObject({
        service: 'metal3-functions',
        function_name: 'metal3fn-reconcileCluster',
        function_request_id: 'req-1',
        cold_start: true,
        messageId: 'm-1',
        messageGroupId: GROUP,
        receiveCount: 2,
        function: 'reconcileCluster',
        kind: 'Metal3Cluster',
        key: 'metal3/bad',
      });
    }
    expect(logs.find((l) => l.message === 'terminal')).toMatchObject({
      level: 'WARN',
      failureReason: 'InvalidConfiguration',
    });
    expect(logs.find((l) => l.message === 'handled')).toMatchObject({ level: 'DEBUG', outcome: 'terminal' });
  });

  it('EMF: the outcome and the duration, under the function dimension', () => {
    const emf = emfLines(lines);
    const outcome = emf.filter((l) => 'metal3fn_messages_total' in l);
    expect(outcome).toEqual([
      {
        _aws: {
          Timestamp: expect.any(Number),
          CloudWatchMetrics: [
            {
              Namespace: 'Metal3Functions',
              Dimensions: [['function', 'outcome']],
              Metrics: [{ Name: 'metal3fn_messages_total', Unit: 'Count' }],
            },
          ],
        },
        function: 'reconcileCluster',
        outcome: 'terminal',
        metal3fn_messages_total: 1,
      },
    ]);
    const duration = emf.filter((l) => 'metal3fn_reconcile_duration_seconds' in l);
    expect(duration).toHaveLength(1);
    expect(duration[0]).toMatchObject({
      _aws: { CloudWatchMetrics: [{ Dimensions: [['function']], Metrics: [{ Unit: 'Seconds' }] }] },
      function: 'reconcileCluster',
    });
    expect(duration[0]!.metal3fn_reconcile_duration_seconds).toBeGreaterThan(0);
  });

  it('EMF: every kube client request, by verb, resource and code, as the API server served them', () => {
    const emf = emfLines(lines);
    const counted: Record<string, number> = {};
    const timed: Record<string, number> = {};
    for (const l of emf) {
      const dims = (l._aws as { CloudWatchMetrics: { Dimensions: string[][] }[] }).CloudWatchMetrics[0]!
        .Dimensions;
      if ('rest_client_requests_total' in l) {
        expect(dims).toEqual([['function', 'verb', 'resource', 'code']]);
        counted[`${l.verb} ${l.resource} ${l.code}`] = l.rest_client_requests_total as number;
      }
      if ('rest_client_request_duration_seconds' in l) {
        expect(dims).toEqual([['function', 'verb', 'resource']]);
        const v = l.rest_client_request_duration_seconds;
        timed[`${l.verb} ${l.resource}`] = Array.isArray(v) ? v.length : 1;
      }
    }
    expect(Object.keys(served).length).toBeGreaterThanOrEqual(3);
    expect(counted).toEqual(served);
    const perVerb: Record<string, number> = {};
    for (const [k, n] of Object.entries(served)) {
      const vr = k.split(' ').slice(0, 2).join(' ');
      perVerb[vr] = (perVerb[vr] ?? 0) + n;
    }
    expect(timed).toEqual(perVerb);
  });

  it('dimensions are only function, outcome, verb, resource and code; no object name is one', () => {
    for (const l of emfLines(lines)) {
      const dims = (l._aws as { CloudWatchMetrics: { Dimensions: string[][] }[] }).CloudWatchMetrics[0]!
        .Dimensions;
      for (const d of dims.flat()) {
        expect(['function', 'outcome', 'verb', 'resource', 'code']).toContain(d);
        expect(String(l[d])).not.toMatch(/bad|metal3\//);
      }
    }
  });
});
