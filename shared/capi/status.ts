/**
 * Metal3Machine status writes: changes are collected during a pass and written once, through the
 * optimistic helper on /status (skipped when nothing changed, so a repeat pass writes nothing).
 */
import type { Condition } from '../api/conditions.ts';
import { R } from '../api/resources.ts';
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
      s.conditions = setMachineCondition(s.conditions as Condition[] | undefined, c, now);
    });
    return this;
  }
  get empty(): boolean {
    return this.edits.length === 0;
  }
  apply(obj: KubeObject, now: Date): void {
    obj.status ??= {};
    const s = obj.status as Record<string, unknown>;
    for (const e of this.edits) e(s, now);
  }
  /** Writes the collected edits; returns the object as written (or as it was). */
  async flush(ctx: ReconcileContext, current: KubeObject): Promise<KubeObject> {
    if (this.empty) return current;
    const now = ctx.now();
    const res = await optimisticUpdate(
      ctx.client,
      R.Metal3Machine,
      current.metadata.namespace,
      current.metadata.name!,
      (o) => this.apply(o, now),
      {
        status: true,
        current,
        expectedUid: current.metadata.uid,
      },
    );
    return res.outcome === 'gone' ? current : res.object;
  }
}

/**
 * Records a terminal failure on the machine (v1beta1 failureReason/failureMessage, the condition
 * it concerns, Ready) and a Warning Event; the message is acknowledged, never retried.
 */
export async function recordTerminal(
  ctx: ReconcileContext,
  m3m: KubeObject,
  err: TerminalError,
  conditionType: string = COND.AssociateBMH,
): Promise<ReconcileResult> {
  const draft = new StatusDraft()
    .set('failureReason', err.reason)
    .set('failureMessage', err.message)
    .set('ready', false)
    .condition(falseCondition(conditionType, err.reason, 'Error', err.message));
  await draft.flush(ctx, m3m);
  await ctx.events.record(m3m, 'Warning', err.reason, err.message);
  ctx.log.warn('terminal error recorded', {
    object: `${m3m.metadata.namespace}/${m3m.metadata.name}`,
    reason: err.reason,
    message: err.message,
  });
  return terminal(err.reason, err.message);
}
