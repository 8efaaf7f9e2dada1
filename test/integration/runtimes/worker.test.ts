/** The runtime contract on the local worker, against a real SQS server (fauxqs). */
import { useSqs } from '../../helpers/sqs.ts';
import { runtimeContract } from './contract.ts';
import { workerHarness } from './harness/worker.ts';

const local = useSqs();
runtimeContract({ name: 'worker', make: () => workerHarness(local), groupsOverlap: true });
