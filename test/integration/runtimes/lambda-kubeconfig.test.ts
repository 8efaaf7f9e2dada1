/**
 * A Lambda function's kubeconfig from AWS Secrets Manager or SSM Parameter Store (Powertools
 * Parameters over the real AWS SDK clients), against AwsParametersDouble, a named test double of
 * those APIs, and the embedded API server with RBAC on: a credential rotated in the store is used
 * once the cache's max age (300 s) has passed and not before, without a new handler (no redeploy).
 * Time is Date's, which Powertools' cache reads: the test sets it (vi.setSystemTime), no waiting.
 */
import type { SQSBatchResponse } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { reconcile } from '../../../functions/metal3-cluster/core.ts';
import { R } from '../../../shared/api/resources.ts';
import { ensureQueues, queueArn } from '../../../shared/queue/ensure.ts';
import { functionHandler } from '../../../shared/runtimes/lambda-entry.ts';
import { type AwsParametersDouble, startAwsParametersDouble } from '../../helpers/aws-parameters-double.ts';
import { startTestCluster, type TestCluster } from '../../helpers/cluster.ts';
import { messageFor } from '../../helpers/messages.ts';
import { useSqs } from '../../helpers/sqs.ts';
import { sqsEvent } from '../../helpers/sqs-event.ts';
import { type CapturedOutput, captureOutput } from '../../helpers/stdout.ts';

const TOKEN = 'kubeconfig-rotation-admin';
const SECRET = 'metal3fn/management-kubeconfig';
const PARAMETER = '/metal3fn/management-kubeconfig';
const PREFIX = 'kc-';
const T0 = Date.parse('2026-11-25T12:00:00Z');

const local = useSqs();
let tc: TestCluster;
let aws: AwsParametersDouble;
let arn: string;
let out: CapturedOutput;

beforeAll(async () => {
  tc = await startTestCluster({ rbac: { tokens: {}, adminToken: TOKEN } });
  aws = await startAwsParametersDouble();
  const urls = await ensureQueues(local.sqs, { prefix: PREFIX, functions: ['reconcileCluster'] });
  arn = await queueArn(local.sqs, urls.main.reconcileCluster);
});

afterAll(async () => {
  await aws?.stop();
  await tc?.stop();
});

beforeEach(() => {
  aws.calls.length = 0;
  aws.failing = false;
  tc.server.log.reset();
  vi.stubEnv('METAL3FN_KUBECONFIG', '');
  vi.stubEnv('QUEUE_PREFIX', PREFIX);
  vi.stubEnv('AWS_REGION', 'us-east-1');
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'test');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'test');
  vi.stubEnv('AWS_ENDPOINT_URL_SQS', local.endpoint);
  vi.stubEnv('AWS_ENDPOINT_URL_SECRETS_MANAGER', aws.url);
  vi.stubEnv('AWS_ENDPOINT_URL_SSM', aws.url);
  vi.stubEnv('LOG_LEVEL', 'info');
  vi.setSystemTime(T0);
  out = captureOutput();
});

afterEach(() => {
  out.restore();
  vi.useRealTimers();
  vi.unstubAllEnvs();
});

/** One event about an absent Metal3Cluster: acknowledged with a valid token, failed (401) with a stale one. */
const event = () =>
  sqsEvent(
    [
      {
        MessageId: 'm-1',
        ReceiptHandle: 'r-1',
        Body: JSON.stringify(messageFor('reconcileCluster', R.Metal3Cluster, 'absent')),
        Attributes: { ApproximateReceiveCount: '1', MessageGroupId: 'Metal3Cluster/metal3/absent' },
      },
    ],
    arn,
  );
const failed = (r: SQSBatchResponse) => r.batchItemFailures.map((f) => f.itemIdentifier);
const at = (seconds: number) => vi.setSystemTime(T0 + seconds * 1000);

describe('the kubeconfig from AWS Secrets Manager', () => {
  it('a rotated value is used after the max age, not before, by the same handler', async () => {
    aws.putSecret(SECRET, tc.server.kubeconfig({ token: 'stale-token' }));
    vi.stubEnv('METAL3FN_KUBECONFIG_SECRET', SECRET);
    const handler = functionHandler('reconcileCluster', reconcile);
    expect(failed(await handler(event()))).toEqual(['m-1']);
    expect(aws.calls).toEqual([{ target: 'secretsmanager.GetSecretValue', name: SECRET }]);

    aws.putSecret(SECRET, tc.server.kubeconfig({ token: TOKEN }));
    at(299);
    expect(failed(await handler(event()))).toEqual(['m-1']);
    expect(aws.calls).toHaveLength(1);

    at(301);
    expect(failed(await handler(event()))).toEqual([]);
    expect(aws.calls).toHaveLength(2);
    // A value is never logged.
    expect(out.text()).not.toContain(TOKEN);
  });

  it('a store that fails after the max age keeps the last kubeconfig in use, and says so', async () => {
    aws.putSecret(SECRET, tc.server.kubeconfig({ token: TOKEN }));
    vi.stubEnv('METAL3FN_KUBECONFIG_SECRET', SECRET);
    const handler = functionHandler('reconcileCluster', reconcile);
    expect(failed(await handler(event()))).toEqual([]);
    aws.failing = true;
    at(301);
    expect(failed(await handler(event()))).toEqual([]);
    expect(aws.calls.length).toBeGreaterThan(1);
    const warned = out
      .json()
      .filter((l) => l.message === 'kubeconfig not refreshed; the last one stays in use');
    expect(warned).toEqual([
      expect.objectContaining({
        level: 'WARN',
        source: `Secrets Manager secret '${SECRET}'`,
        error: expect.stringContaining(`kubeconfig from Secrets Manager secret '${SECRET}'`),
      }),
    ]);
    expect(out.text()).not.toContain(TOKEN);
  });

  it('a secret that does not exist fails the invocation with its name, before any record runs', async () => {
    vi.stubEnv('METAL3FN_KUBECONFIG_SECRET', 'metal3fn/nope');
    const handler = functionHandler('reconcileCluster', reconcile);
    await expect(handler(event())).rejects.toThrow(
      /^kubeconfig from Secrets Manager secret 'metal3fn\/nope': .*can't find the specified secret/,
    );
    expect(
      tc.server.log.entries.filter((e) => e.resource === 'metal3clusters' && e.name === 'absent'),
    ).toEqual([]);
  });
});

describe('the kubeconfig from SSM Parameter Store', () => {
  it('is read decrypted (base64 here), and a rotation is used after the max age, not before', async () => {
    aws.putParameter(PARAMETER, Buffer.from(tc.server.kubeconfig({ token: TOKEN })).toString('base64'));
    vi.stubEnv('METAL3FN_KUBECONFIG_PARAMETER', PARAMETER);
    vi.stubEnv('METAL3FN_KUBECONFIG_MAX_AGE', '60');
    const handler = functionHandler('reconcileCluster', reconcile);
    expect(failed(await handler(event()))).toEqual([]);
    expect(aws.calls).toEqual([{ target: 'AmazonSSM.GetParameter', name: PARAMETER, withDecryption: true }]);

    aws.putParameter(PARAMETER, tc.server.kubeconfig({ token: 'revoked-token' }));
    at(59);
    expect(failed(await handler(event()))).toEqual([]);
    at(61);
    expect(failed(await handler(event()))).toEqual(['m-1']);
    expect(aws.calls).toHaveLength(2);
  });
});

describe('the kubeconfig source is one, and valid', () => {
  it('a secret and a parameter together are refused when the handler is made', () => {
    vi.stubEnv('METAL3FN_KUBECONFIG_SECRET', SECRET);
    vi.stubEnv('METAL3FN_KUBECONFIG_PARAMETER', PARAMETER);
    expect(() => functionHandler('reconcileCluster', reconcile)).toThrow(
      'set one of METAL3FN_KUBECONFIG_SECRET, METAL3FN_KUBECONFIG_PARAMETER, not several: which kubeconfig is meant?',
    );
  });

  it('a max age that is not a whole number of seconds is refused', () => {
    vi.stubEnv('METAL3FN_KUBECONFIG_SECRET', SECRET);
    vi.stubEnv('METAL3FN_KUBECONFIG_MAX_AGE', '0.5');
    expect(() => functionHandler('reconcileCluster', reconcile)).toThrow(
      "METAL3FN_KUBECONFIG_MAX_AGE='0.5': expected a whole number of seconds ≥ 1",
    );
  });
});
