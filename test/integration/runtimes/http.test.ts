/** The runtime contract on the HTTP runtime (Knative), over a real socket. */
import { runtimeContract, TESTS } from './contract.ts';
import { httpHarness } from './harness/http.ts';

runtimeContract({
  name: 'http',
  make: httpHarness,
  groupsOverlap: true,
  skip: [
    {
      reason:
        'no queue: a failure answers 500 and the sender (a Knative Broker, its delivery spec) retries, backs off and dead-letters',
      tests: [TESTS.retry, TESTS.lastReceive, TESTS.outage],
    },
    { reason: 'no message groups: a Broker delivers events unordered', tests: [TESTS.group] },
  ],
});
