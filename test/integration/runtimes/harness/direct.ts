/** The in-process runtime (`metal3fn dev --direct`): the relay's messages handed straight to dispatch. */
import { parseEnvelope } from '../../../../events/envelope.ts';
import { DirectRunner } from '../../../../shared/runtimes/direct.ts';
import { offlineContext } from '../../../helpers/context.ts';
import type { Observed, RuntimeHarness } from '../contract.ts';

export function directHarness(): RuntimeHarness {
  const outcomes: Observed[] = [];
  const dead: { body: string; reason: string }[] = [];
  let runner: DirectRunner | undefined;
  return {
    outcomes,
    async start(fns, limits) {
      const schedule = limits.retryBackoffSeconds;
      runner = new DirectRunner({
        fns,
        context: offlineContext(),
        maxAttempts: limits.maxReceiveCount,
        ...(schedule ? { retryBackoffMs: (n: number) => schedule(n) * 1000 } : {}),
        onOutcome: (_fn, o) => {
          if (o.kind !== 'malformed') outcomes.push({ name: o.msg.name, kind: o.kind });
        },
        onDeadLetter: (msg, reason) => dead.push({ body: JSON.stringify(msg), reason }),
      });
    },
    // The relay hands it parsed envelopes (no bytes travel), in their groups.
    async deliver(items) {
      runner!.enqueue(items.map((d) => ({ msg: parseEnvelope(d.body), group: d.group })));
    },
    deadLetters: async () => [...dead],
    requeuesScheduled: async () => runner!.scheduledCount,
    inTransport: async () => runner!.bufferedCount + runner!.runningCount,
    async stop() {
      await runner?.close();
    },
  };
}
