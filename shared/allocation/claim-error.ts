/**
 * Bad input on a claim (Metal3DataClaim or IPClaim): the message goes to status.errorMessage (a
 * sticky error, as the reference does), a Warning Event is recorded, and the result is terminal.
 * The claim is read through its envelope: the error is recorded whatever its spec holds (a claim
 * that fails its schema too).
 */
import { envelopeOf, type ResourceType } from '../api/resources.ts';
import { optimisticUpdate, SKIP } from '../kube/optimistic.ts';
import type { KubeObject } from '../kube/types.ts';
import type { ReconcileContext } from '../reconcile/context.ts';
import { type ReconcileResult, terminal } from '../reconcile/result.ts';
import { statusOf } from './objects.ts';

export async function recordClaimError(
  ctx: ReconcileContext,
  t: ResourceType,
  raw: KubeObject,
  message: string,
  eventReason: string,
  failureReason: string,
  opts: { once?: boolean } = {},
): Promise<ReconcileResult> {
  const r = await optimisticUpdate(
    ctx.client,
    envelopeOf(t),
    raw.metadata.namespace,
    raw.metadata.name!,
    (o) => {
      const status = statusOf(o);
      if (opts.once && status.errorMessage === message) return SKIP;
      status.errorMessage = message;
    },
    { current: raw, expectedUid: raw.metadata.uid, status: true },
  );
  if (r.outcome === 'updated' || !opts.once)
    await ctx.events.record(raw, 'Warning', eventReason, message, opts);
  return terminal(failureReason, message);
}
