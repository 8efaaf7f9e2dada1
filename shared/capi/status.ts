/**
 * Metal3Machine status writes: changes are collected during a pass and written once, through the
 * optimistic helper on /status (skipped when nothing changed, so a repeat pass writes nothing).
 */

import { statusOf } from '../allocation/objects.ts';
import { ConditionsSchema } from '../api/conditions.ts';
import { envelopeOf, K } from '../api/resources.ts';
import { optimisticUpdate } from '../kube/optimistic.ts';
import type { KubeObject } from '../kube/types.ts';
import type { ReconcileContext } from '../reconcile/context.ts';
import type { TerminalError } from '../reconcile/errors.ts';
import { type ReconcileResult, terminal } from '../reconcile/result.ts';
import { COND, type ConditionInput, falseCondition, setMachineCondition } from './conditions.ts';

export type StatusEdit = (status: Record<string, unknown>, now: Date) => void;

export class StatusDraft {
  private readonly edits: StatusEdit[] = [];
  set(field: string, value: unknown): this {
    this.edits.push((s) => {
      if (value === undefined) delete s[field];
      else s[field] = structuredClone(value);
    });
    return this;
  }
  /** A free-form edit, applied to the status as read at write time. */
  edit(fn: StatusEdit): this {
    this.edits.push(fn);
    return this;
  }
  condition(c: ConditionInput): this {
    this.edits.push((s, now) => {
      // Conditions that do not parse (written by hand) are replaced by ours.
      s.conditions = setMachineCondition(ConditionsSchema.safeParse(s.conditions).data, c, now);
    });
    return this;
  }
  get empty(): boolean {
    return this.edits.length === 0;
  }
  apply(obj: KubeObject, now: Date): void {
    const s = statusOf(obj);
    for (const e of this.edits) e(s, now);
  }
  /**
   * Writes the collected edits; true when something was written. The machine is read through its
   * envelope: a status is written whatever its spec holds (a failure is recorded on a machine
   * that fails its schema too).
   */
  async flush(ctx: ReconcileContext, current: KubeObject): Promise<boolean> {
    if (this.empty) return false;
    const now = ctx.now();
    const res = await optimisticUpdate(
      ctx.client,
      METAL3MACHINE_ENVELOPE,
      current.metadata.namespace,
      current.metadata.name!,
      (o) => this.apply(o, now),
      {
        status: true,
        current,
        expectedUid: current.metadata.uid,
      },
    );
    return res.outcome === 'updated';
  }
}

const METAL3MACHINE_ENVELOPE = envelopeOf(K.Metal3Machine);

/**
 * Records a terminal failure on the machine (v1beta1 failureReason/failureMessage, the condition
 * it concerns, Ready) and a Warning Event; the message is acknowledged, never retried. `once`: no
 * write and no Event when the same failure is recorded already (a schema failure, met again on
 * every delivery).
 */
export async function recordTerminal(
  ctx: ReconcileContext,
  m3m: KubeObject,
  err: TerminalError,
  conditionType: string = COND.AssociateBMH,
  opts: { once?: boolean } = {},
): Promise<ReconcileResult> {
  const draft = new StatusDraft()
    .set('failureReason', err.reason)
    .set('failureMessage', err.message)
    .set('ready', false)
    .condition(falseCondition(conditionType, err.reason, 'Error', err.message));
  const written = await draft.flush(ctx, m3m);
  if (written || !opts.once) await ctx.events.record(m3m, 'Warning', err.reason, err.message, opts);
  ctx.log.warn('terminal error recorded', {
    object: `${m3m.metadata.namespace}/${m3m.metadata.name}`,
    reason: err.reason,
    message: err.message,
  });
  return terminal(err.reason, err.message);
}
