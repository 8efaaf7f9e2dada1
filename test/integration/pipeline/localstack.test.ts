/**
 * The queue tests (the SQS protocol: FIFO groups, deduplication, DLQs, redrive, requeue-after) and
 * the queued runtimes' tests (the Lambda adapter against the event source mapping, the worker) once more on LocalStack through testcontainers, where
 * a container runtime answers. Where none does, this file says so and skips; with
 * SQS_TEST_BACKEND=localstack a missing runtime is an error instead (the other files then run on
 * LocalStack themselves).
 */
import { describe, expect, it } from 'vitest';
import { probeContainerRuntime } from '../../../infra/local/sqs.ts';
import { useSqsBackend } from '../../helpers/sqs.ts';

const probe = await probeContainerRuntime();
const forced = process.env.SQS_TEST_BACKEND === 'localstack';

if (probe.available && !forced) {
  useSqsBackend('localstack');
  await import('./queue.test.ts');
  await import('../runtimes/lambda-adapter.test.ts');
  await import('../runtimes/lambda.test.ts');
  await import('../runtimes/worker-adapter.test.ts');
  await import('../runtimes/worker.test.ts');
} else if (!probe.available && forced) {
  it('SQS_TEST_BACKEND=localstack needs a container runtime', () => {
    expect.fail(`SQS_TEST_BACKEND=localstack, but ${probe.reason}`);
  });
} else {
  const why = probe.available
    ? 'SQS_TEST_BACKEND=localstack: the pipeline test files run on LocalStack themselves'
    : `skipped: ${probe.reason}; they ran on fauxqs only`;
  if (!probe.available) process.stderr.write(`pipeline tests on LocalStack ${why}\n`);
  describe('pipeline tests on LocalStack', () => {
    it.skip(why, () => {});
  });
}
