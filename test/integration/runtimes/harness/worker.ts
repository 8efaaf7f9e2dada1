/** The local worker polling its queue, as `metal3fn worker` runs it. */
import { Worker } from '../../../../shared/runtimes/worker.ts';
import { offlineContext } from '../../../helpers/context.ts';
import { sendBodies, type TestSqs } from '../../../helpers/sqs.ts';
import type { Observed, RuntimeHarness } from '../contract.ts';
import { observed, TestQueues } from './queues.ts';

export function workerHarness(local: TestSqs): RuntimeHarness {
  const q = new TestQueues(local);
  const outcomes: Observed[] = [];
  let worker: Worker | undefined;
  return {
    outcomes,
    async start(fns, limits) {
      const urls = await q.create(limits, 30);
      worker = new Worker({
        sqs: local.sqs,
        fns,
        context: offlineContext(),
        queues: urls,
        functions: ['selectHost'],
        waitTimeSeconds: 1,
        maxReceiveCount: limits.maxReceiveCount,
        retryBackoffSeconds: limits.retryBackoffSeconds,
        // Requeues stay in the delay queue, where the suite counts them.
        forwardRequeues: false,
        onOutcome: (_fn, o, m) => outcomes.push(observed(o, m.Body ?? '')),
      }).start();
    },
    deliver: (items) => sendBodies(local.sqs, q.urls.main.selectHost, items),
    deadLetters: () => q.deadLetters(),
    requeuesScheduled: () => q.requeuesScheduled(),
    inTransport: () => q.inTransport(),
    async stop() {
      await worker?.stop({ graceMs: 2_000 });
    },
  };
}
