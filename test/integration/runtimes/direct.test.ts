/** The runtime contract on the in-process runtime (`metal3fn dev --direct`). */
import { runtimeContract, TESTS } from './contract.ts';
import { directHarness } from './harness/direct.ts';

runtimeContract({
  name: 'direct',
  make: directHarness,
  groupsOverlap: true,
  skip: [
    {
      reason:
        'the relay hands it parsed envelopes in its own process: no bytes travel, so none of these bodies can reach it',
      tests: [TESTS.malformed],
    },
  ],
});
