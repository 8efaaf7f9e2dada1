/** The runtime contract on the local worker, against a real SQS server (fauxqs). */
import { afterAll, beforeAll } from 'vitest';
import { startSqs, type TestSqs } from '../../helpers/sqs.ts';
import { runtimeContract } from './contract.ts';
import { workerHarness } from './harness/worker.ts';

let local: TestSqs;
beforeAll(async () => {
  local = await startSqs();
});
afterAll(async () => {
  local?.sqs.destroy();
  await local?.stop();
});

runtimeContract({ name: 'worker', make: () => workerHarness(local), groupsOverlap: true });
