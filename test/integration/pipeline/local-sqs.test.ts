/** infra/local/sqs.ts: picks a backend without hanging, binds loopback only, passes endpoints through. */
import { ListQueuesCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { startLocalSqs } from '../../../infra/local/sqs.ts';
import { createSqsClient } from '../../../shared/queue/sqs.ts';

describe('startLocalSqs', () => {
  it('uses a named endpoint as is', async () => {
    const s = await startLocalSqs({ endpoint: 'http://127.0.0.1:4566' });
    expect(s).toMatchObject({ endpoint: 'http://127.0.0.1:4566', backend: 'external' });
    await s.stop();
  });

  it('falls back to fauxqs on 127.0.0.1 when no container runtime answers (auto)', async () => {
    const s = await startLocalSqs({
      backend: process.env.SQS_TEST_BACKEND === 'localstack' ? 'localstack' : 'auto',
    });
    try {
      if (s.backend === 'fauxqs') {
        expect(s.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      }
      const sqs = createSqsClient({ endpoint: s.endpoint });
      await expect(sqs.send(new ListQueuesCommand({}))).resolves.toBeDefined();
      sqs.destroy();
    } finally {
      await s.stop();
    }
  });
});
