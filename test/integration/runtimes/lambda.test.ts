/** The runtime contract on the Lambda adapter, against a real SQS server (fauxqs). */
import { useSqs } from '../../helpers/sqs.ts';
import { runtimeContract } from './contract.ts';
import { lambdaHarness } from './harness/lambda.ts';

const local = useSqs();
runtimeContract({ name: 'lambda', make: () => lambdaHarness(local), groupsOverlap: false });
