/** The runtime contract on the Lambda adapter, against a real SQS server (fauxqs). */
import { afterAll, beforeAll } from 'vitest';
import { startSqs, type TestSqs } from '../../helpers/sqs.ts';
import { runtimeContract } from './contract.ts';
import { lambdaHarness } from './harness/lambda.ts';

let local: TestSqs;
beforeAll(async () => {
  local = await startSqs();
});
afterAll(async () => {
  local?.sqs.destroy();
  await local?.stop();
});

runtimeContract({ name: 'lambda', make: () => lambdaHarness(local), groupsOverlap: false });
