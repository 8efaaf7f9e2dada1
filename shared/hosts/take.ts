/**
 * Claiming one chosen host (the lock of claim.ts for consumers that choose by their own rules, a
 * vMetal NodeClaim): a resourceVersion-checked write of the consumerRef and labels (`takeHost`),
 * made only while `stillEligible` holds on the fresh copy; `alsoWrite` changes the host in that
 * same write. A conflict re-reads and re-checks, so the host is never held by two consumers.
 */
import type { BareMetalHost } from '../api/baremetalhost.ts';
import { R } from '../api/resources.ts';
import type { KubeClient } from '../kube/client.ts';
import { optimisticUpdate, SKIP } from '../kube/optimistic.ts';
import { takeHost } from './claim.ts';
import { type HostConsumer, hostHeldBy } from './consumer.ts';

export type TakeOutcome =
  | { kind: 'claimed'; host: BareMetalHost }
  | { kind: 'own'; host: BareMetalHost }
  /** Taken by someone else, gone, or no longer eligible: choose again. */
  | { kind: 'lost' };

export async function takeChosenHost(
  client: KubeClient,
  host: BareMetalHost,
  consumer: HostConsumer,
  stillEligible: (h: BareMetalHost) => boolean,
  alsoWrite?: (h: BareMetalHost) => void,
): Promise<TakeOutcome> {
  const res = await optimisticUpdate(
    client,
    R.BareMetalHost,
    host.metadata.namespace,
    host.metadata.name!,
    (h) => {
      if (hostHeldBy(h, consumer) || !stillEligible(h)) return SKIP;
      takeHost(h, consumer);
      alsoWrite?.(h);
    },
    { current: host, expectedUid: host.metadata.uid },
  );
  if (res.outcome === 'updated') return { kind: 'claimed', host: res.object };
  if (res.outcome === 'gone') return { kind: 'lost' };
  return hostHeldBy(res.object, consumer) ? { kind: 'own', host: res.object } : { kind: 'lost' };
}
