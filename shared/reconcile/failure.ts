/**
 * Recording a terminal error on an object of a kind without error fields of its own (templates,
 * pools): a Warning Event, once. Kinds with error fields have their own recorders beside the code
 * that writes them (shared/capi/status.ts, shared/allocation/claim-error.ts, renderData's).
 */
import type { KubeObject } from '../api/meta.ts';
import type { ReconcileContext } from './context.ts';
import type { TerminalError } from './errors.ts';
import { type ReconcileResult, terminal } from './result.ts';

export async function recordEventOnly(
  ctx: ReconcileContext,
  obj: KubeObject,
  err: TerminalError,
): Promise<ReconcileResult> {
  await ctx.events.record(obj, 'Warning', err.reason, err.message, { once: true });
  return terminal(err.reason, err.message);
}
