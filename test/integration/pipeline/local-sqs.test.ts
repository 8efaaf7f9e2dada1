/** infra/local/sqs.ts: picks a backend without hanging, binds loopback only, passes endpoints through. */
import { ListQueuesCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { chooseSqsBackend, probeContainerRuntime, startLocalSqs } from '../../../infra/local/sqs.ts';
import { createSqsClient } from '../../../shared/queue/sqs.ts';

const probe = await probeContainerRuntime();

describe('chooseSqsBackend', () => {
  it.each([
    [{}, {}, { kind: 'fauxqs' }],
    [{}, { SQS_TEST_BACKEND: '' }, { kind: 'fauxqs' }],
    [{}, { SQS_TEST_BACKEND: 'fauxqs' }, { kind: 'fauxqs' }],
    [{}, { SQS_TEST_BACKEND: 'localstack' }, { kind: 'localstack', required: true }],
    [{}, { SQS_TEST_BACKEND: 'auto' }, { kind: 'localstack', required: false }],
    [{ backend: 'fauxqs' as const }, { SQS_TEST_BACKEND: 'localstack' }, { kind: 'fauxqs' }],
    [
      {},
      { AWS_ENDPOINT_URL_SQS: 'http://x:1', SQS_TEST_BACKEND: 'localstack' },
      { kind: 'external', endpoint: 'http://x:1' },
    ],
    [
      { endpoint: 'http://y:2' },
      { AWS_ENDPOINT_URL_SQS: 'http://x:1' },
      { kind: 'external', endpoint: 'http://y:2' },
    ],
  ])('options %j, environment %j -> %j', (opts, env, expected) => {
    expect(chooseSqsBackend(opts, env)).toEqual(expected);
  });

  it('refuses an unknown SQS_TEST_BACKEND, naming the accepted values', () => {
    expect(() => chooseSqsBackend({}, { SQS_TEST_BACKEND: 'docker' })).toThrow(
      "SQS_TEST_BACKEND must be fauxqs, localstack or auto, not 'docker'",
    );
  });
});

describe('startLocalSqs', () => {
  it('uses a named endpoint as is', async () => {
    const s = await startLocalSqs({ endpoint: 'http://127.0.0.1:4566' });
    expect(s).toMatchObject({ endpoint: 'http://127.0.0.1:4566', backend: 'external' });
    await s.stop();
  });

  it('starts fauxqs on 127.0.0.1 by default, a real SQS protocol server', async () => {
    const s = await startLocalSqs({ backend: 'fauxqs' });
    try {
      expect(s.backend).toBe('fauxqs');
      expect(s.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const sqs = createSqsClient({ endpoint: s.endpoint });
      await expect(sqs.send(new ListQueuesCommand({}))).resolves.toBeDefined();
      sqs.destroy();
    } finally {
      await s.stop();
    }
  });

  it.skipIf(probe.available)('without a container runtime: auto falls back to fauxqs', async () => {
    const s = await startLocalSqs({ backend: 'auto' });
    await s.stop();
    expect(s.backend).toBe('fauxqs');
  });

  it.skipIf(probe.available)(
    'without a container runtime: localstack is an error that says why',
    async () => {
      expect(probe).toMatchObject({ available: false, reason: expect.stringMatching(/container runtime/) });
      await expect(startLocalSqs({ backend: 'localstack' })).rejects.toThrow(
        /^SQS_TEST_BACKEND=localstack, but no container runtime answered/,
      );
    },
  );

  it.skipIf(!probe.available)(
    'with a container runtime: localstack starts LocalStack',
    async () => {
      const s = await startLocalSqs({ backend: 'localstack' });
      try {
        expect(s.backend).toBe('localstack');
        const sqs = createSqsClient({ endpoint: s.endpoint });
        await expect(sqs.send(new ListQueuesCommand({}))).resolves.toBeDefined();
        sqs.destroy();
      } finally {
        await s.stop();
      }
    },
    180_000,
  );
});
