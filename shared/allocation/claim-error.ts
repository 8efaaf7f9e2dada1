/**
 * Bad input on a claim (Metal3DataClaim or IPClaim): the message goes to status.errorMessage (a
 * sticky error, as the reference does), a Warning Event is recorded, and the result is terminal.
 */
import type { ResourceType } from '../api/resources.ts';
import { optimisticUpdate } from '../kube/optimistic.ts';
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
): Promise<ReconcileResult> {
  await optimisticUpdate(
    ctx.client,
    t,
    raw.metadata.namespace,
    raw.metadata.name!,
    (o) => {
      statusOf(o).errorMessage = message;
    },
    { current: raw, expectedUid: raw.metadata.uid, status: true },
  );
  await ctx.events.record(raw, 'Warning', eventReason, message);
  return terminal(failureReason, message);
}
