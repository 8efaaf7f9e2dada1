/**
 * Every write to a host after the claim is conditioned twice: on its resourceVersion (the
 * optimistic update) and on the consumer still holding it (re-checked on each fresh copy), so a
 * stale pass never writes a host that was released or taken meanwhile.
 */
import type { BareMetalHost } from '../api/baremetalhost.ts';
import { R } from '../api/resources.ts';
import type { KubeClient } from '../kube/client.ts';
import { optimisticUpdate, SKIP, type UpdateOutcome } from '../kube/optimistic.ts';
import { type HostConsumer, hostHeldBy } from './consumer.ts';

/** Applies `mutate` to `host` while `consumer` holds it; `skipped` when it no longer does. */
export function updateHeldHost(
  client: KubeClient,
  host: BareMetalHost,
  consumer: Pick<HostConsumer, 'apiVersion' | 'kind' | 'namespace' | 'name'>,
  mutate: (h: BareMetalHost) => void | typeof SKIP,
): Promise<UpdateOutcome<BareMetalHost>> {
  return optimisticUpdate(
    client,
    R.BareMetalHost,
    host.metadata.namespace,
    host.metadata.name!,
    (h) => (hostHeldBy(h, consumer) ? mutate(h) : SKIP),
    { current: host, expectedUid: host.metadata.uid },
  );
}
