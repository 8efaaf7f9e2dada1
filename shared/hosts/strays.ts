/**
 * Stray claims: hosts a consumer holds besides the one it is associated with. A concurrent pass of
 * the same consumer (a duplicated or replayed message) claimed one, lost the association race and
 * stopped before giving it back; without this it would stay held until the consumer is deleted.
 */
import type { BareMetalHost } from '../api/baremetalhost.ts';
import type { KubeObject } from '../kube/types.ts';
import type { ReconcileContext } from '../reconcile/context.ts';
import type { HostConsumer } from './consumer.ts';
import { releaseHost } from './release.ts';

/**
 * Gives back every host of `held` besides `kept` whose provisioning was never requested, and
 * records a `ReleasedStrayHost` Event on `recordOn` (the consumer object) for each.
 */
export async function releaseStrays(
  ctx: ReconcileContext,
  recordOn: KubeObject,
  consumer: HostConsumer,
  held: readonly BareMetalHost[],
  kept: BareMetalHost | undefined,
): Promise<void> {
  for (const stray of held) {
    if (stray.metadata.uid === kept?.metadata.uid) continue;
    if (!(await releaseHost(ctx, stray, consumer, { onlyUnprovisioned: true }))) continue;
    await ctx.events.record(
      recordOn,
      'Normal',
      'ReleasedStrayHost',
      `released BareMetalHost ${stray.metadata.namespace}/${stray.metadata.name}: a concurrent pass of this ${consumer.kind} claimed it and lost the association`,
    );
  }
}
