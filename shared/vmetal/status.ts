/**
 * A NodeClaim's status (phase, reason, message, conditions Scheduled / Provisioned / Joined), written
 * through /status with the optimistic helper, and how a decision's wait or bad input shows on it.
 */

import { isRecord } from '../api/json.ts';
import type { KubeObject } from '../api/meta.ts';
import { envelopeOf, R } from '../api/resources.ts';
import type { NodeClaim, NodeClaimStatus } from '../api/vmetal/nodeclaim.ts';
import { type ConditionInput, getCondition, setCondition } from '../capi/conditions.ts';
import { optimisticUpdate, SKIP } from '../kube/optimistic.ts';
import type { ReconcileContext } from '../reconcile/context.ts';
import type { TerminalError } from '../reconcile/errors.ts';
import { type ReconcileResult, requeueAfter, terminal } from '../reconcile/result.ts';
import { outcomeOf } from './errors.ts';

export const CLAIM_COND = {
  Scheduled: 'Scheduled',
  Provisioned: 'Provisioned',
  Joined: 'Joined',
} as const;

/**
 * The Provisioned reason of a claim that failed after it took a host (a bad template, override or
 * cloud-config found while rendering): its host and address are released and it is never given
 * another (a claim in error is not replaced automatically; deleting it ends it).
 */
export const RENDER_FAILED = 'RenderFailed';

export const isRenderFailed = (claim: NodeClaim): boolean => {
  const c = getCondition(claim.status?.conditions, CLAIM_COND.Provisioned);
  return claim.status?.phase === 'Failed' && c?.status === 'False' && c.reason === RENDER_FAILED;
};

/** Whether the claim holds a host by selectHost's record (`status.host`, Scheduled=True). */
export const isScheduled = (claim: NodeClaim): boolean =>
  Boolean(claim.status?.host) &&
  getCondition(claim.status?.conditions, CLAIM_COND.Scheduled)?.status === 'True';

/** How often a waiting claim looks again when no event wakes it (a safety net; events do). */
export const WAIT_RECHECK_SECONDS = 60;

export interface StatusChange {
  phase?: NodeClaimStatus['phase'];
  reason?: string | undefined;
  message?: string | undefined;
  fields?: Partial<NodeClaimStatus>;
  conditions?: ConditionInput[];
}

/** Applies `change` to the claim's status (skipping the write when nothing changes). */
export async function updateClaimStatus(
  ctx: ReconcileContext,
  claim: NodeClaim,
  change: StatusChange,
): Promise<NodeClaim | undefined> {
  const res = await optimisticUpdate(
    ctx.client,
    R.NodeClaim,
    claim.metadata.namespace,
    claim.metadata.name!,
    (c) => {
      const s: NodeClaimStatus = { ...(c.status ?? {}), ...(change.fields ?? {}) };
      if (change.phase !== undefined) s.phase = change.phase;
      if ('reason' in change) {
        if (change.reason) s.reason = change.reason;
        else delete s.reason;
      }
      if ('message' in change) {
        if (change.message) s.message = change.message;
        else delete s.message;
      }
      let conds = s.conditions;
      for (const cond of change.conditions ?? []) conds = setCondition(conds, cond, ctx.now());
      if (conds) s.conditions = conds;
      c.status = s;
    },
    { status: true, current: claim, expectedUid: claim.metadata.uid },
  );
  return res.outcome === 'gone' ? undefined : res.object;
}

/**
 * Shows a decision's wait (Pending, condition False with the reason, a recheck) or bad input
 * (Failed, terminal: not retried until the claim changes) on the claim; rethrows anything else.
 */
export async function recordClaimOutcome(
  ctx: ReconcileContext,
  claim: NodeClaim,
  e: unknown,
  condition: string,
): Promise<ReconcileResult> {
  const outcome = outcomeOf(e);
  if (!outcome) throw e;
  await updateClaimStatus(ctx, claim, {
    phase: outcome.phase,
    reason: outcome.reason,
    message: outcome.message,
    conditions: [
      {
        type: condition,
        status: 'False',
        reason: outcome.reason,
        message: outcome.message,
        severity: outcome.phase === 'Failed' ? 'Error' : 'Info',
      },
    ],
  });
  if (outcome.phase === 'Failed') return terminal(outcome.reason, outcome.message);
  return requeueAfter(WAIT_RECHECK_SECONDS, outcome.message);
}

/** The opening's recorder for a claim that fails its schema: Failed naming the problem, once. */
export async function recordClaimFailure(
  ctx: ReconcileContext,
  obj: KubeObject,
  err: TerminalError,
): Promise<ReconcileResult> {
  await optimisticUpdate(
    ctx.client,
    envelopeOf(R.NodeClaim),
    obj.metadata.namespace,
    obj.metadata.name!,
    (c) => {
      const status = isRecord(c.status) ? c.status : {};
      if (status.phase === 'Failed' && status.reason === err.reason && status.message === err.message)
        return SKIP;
      c.status = { ...status, phase: 'Failed', reason: err.reason, message: err.message };
    },
    { status: true, expectedUid: obj.metadata.uid },
  );
  await ctx.events.record(obj, 'Warning', err.reason, err.message, { once: true });
  return terminal(err.reason, err.message);
}
