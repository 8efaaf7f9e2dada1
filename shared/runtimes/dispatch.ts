/**
 * The one core every runtime wraps (Lambda, HTTP, local worker, replay): validate the message with
 * zod before acting, run the function, and map what happened to what the transport must do.
 *
 *   done / terminal      → ack (terminal also logs and counts; the core recorded it on the object)
 *   requeue              → ack + schedule the requeue (the transport knows how)
 *   thrown error         → retry: the transport fails the record so the queue redelivers with backoff
 *   malformed message    → dead-letter with the reason; never fails the record's batch-mates
 *
 * One delivery of a key (function + object) runs at a time in the process (exclusive.ts), and the
 * core learns which object its transport serializes the delivery by (`ctx.serializedBy`, read from
 * the FIFO group the message came in).
 */
import {
  EnvelopeError,
  type FunctionName,
  type MessageEnvelope,
  parseEnvelope,
} from '../../events/envelope.ts';
import { resourceFor } from '../api/kinds.ts';
import { KubeApiError } from '../kube/errors.ts';
import { groupObject, messageKey } from '../queue/message.ts';
import type { ReconcileContext, ReconcileFn } from '../reconcile/context.ts';
import { MalformedMessageError, TerminalError, TransientError } from '../reconcile/errors.ts';
import type { ReconcileResult } from '../reconcile/result.ts';
import { type KeyedExclusion, processExclusion } from './exclusive.ts';
import type { PipelineMetrics } from './metrics.ts';

export type FunctionTable = Partial<Record<FunctionName, ReconcileFn>>;

export type DispatchOutcome =
  | { kind: 'done'; msg: MessageEnvelope; result: ReconcileResult }
  | { kind: 'terminal'; msg: MessageEnvelope; reason: string; message: string }
  | { kind: 'requeue'; msg: MessageEnvelope; afterSeconds: number; reason: string; notBefore?: number }
  | { kind: 'retry'; msg: MessageEnvelope; error: Error; errorClass: 'transient' | 'api' | 'unknown' }
  | { kind: 'malformed'; reason: string };

export interface DispatchOptions {
  /** The function this transport serves (a queue's own function); a message for another is malformed. */
  expect?: FunctionName | readonly FunctionName[] | undefined;
  metrics?: PipelineMetrics | undefined;
  /** Clock for notBefore checks (tests). */
  now?: () => number;
  /** The FIFO group the message came in, where the transport serializes by group. */
  group?: string | undefined;
  /** One delivery of a key at a time (default: the process's). */
  exclusion?: KeyedExclusion | undefined;
}

/** What every log line about a message names: its function, and its object (`kind` + `ns/name`). */
export const messageLogFields = (msg: MessageEnvelope): Record<string, string> => ({
  function: msg.function,
  kind: msg.kind,
  key: msg.namespace ? `${msg.namespace}/${msg.name}` : msg.name,
  reason: msg.reason,
});

/** Messages a little early (clock skew, whole-second hops) still run. */
const EARLY_SLACK_MS = 1_000;

/** A requeue-after message that arrived before its time (beyond the slack): it goes round again. */
export const notYetDue = <M extends Pick<MessageEnvelope, 'notBefore'>>(
  msg: M,
  now: number,
): msg is M & { notBefore: number } => msg.notBefore !== undefined && msg.notBefore > now + EARLY_SLACK_MS;

export async function dispatch(
  fns: FunctionTable,
  ctx: ReconcileContext,
  raw: string | unknown,
  opts: DispatchOptions = {},
): Promise<DispatchOutcome> {
  const outcome = await dispatchInner(fns, ctx, raw, opts);
  const fn = outcome.kind === 'malformed' ? 'unknown' : outcome.msg.function;
  opts.metrics?.messages.inc({ function: fn, outcome: outcome.kind });
  return outcome;
}

async function dispatchInner(
  fns: FunctionTable,
  ctx: ReconcileContext,
  raw: string | unknown,
  opts: DispatchOptions,
): Promise<DispatchOutcome> {
  let msg: MessageEnvelope;
  try {
    msg = parseEnvelope(raw);
  } catch (e) {
    if (e instanceof EnvelopeError) return { kind: 'malformed', reason: e.message };
    throw e;
  }
  const expected = opts.expect === undefined ? undefined : ([] as FunctionName[]).concat(opts.expect);
  if (expected && !expected.includes(msg.function)) {
    return {
      kind: 'malformed',
      reason: `message for function '${msg.function}' reached ${expected.join(',')}`,
    };
  }
  const fn = fns[msg.function];
  if (!fn) return { kind: 'malformed', reason: `function '${msg.function}' is not served here` };
  if (!resourceFor(msg.apiVersion, msg.kind)) {
    // Not a kind any function reconciles (the relay never sends one): dead-letter it with the
    // reason rather than acknowledge it silently as done.
    return { kind: 'malformed', reason: `unknown kind '${msg.kind}' (apiVersion '${msg.apiVersion}')` };
  }

  const now = (opts.now ?? Date.now)();
  if (notYetDue(msg, now)) {
    // Arrived early (a transport without delays): send it round again for the time that is left.
    return {
      kind: 'requeue',
      msg,
      afterSeconds: Math.ceil((msg.notBefore - now) / 1000),
      reason: 'not yet due',
      // The same due time (not one rounded up from now): its deduplication id stays the same.
      notBefore: msg.notBefore,
    };
  }

  const log = ctx.log.child(messageLogFields(msg));
  const runCtx: ReconcileContext = {
    ...ctx,
    log,
    serializedBy: opts.group === undefined ? undefined : groupObject(opts.group),
    reads: ctx.sharedReads?.scope(msg.function).forMessage(msg.observedAt),
  };
  const end = opts.metrics?.duration.startTimer({ function: msg.function });
  try {
    const result = await (opts.exclusion ?? processExclusion).run(messageKey(msg), () => fn(runCtx, msg));
    switch (result.kind) {
      case 'done':
        return { kind: 'done', msg, result };
      case 'requeue':
        return {
          kind: 'requeue',
          msg,
          afterSeconds: result.afterSeconds,
          reason: result.reason,
          ...(result.notBefore !== undefined ? { notBefore: result.notBefore } : {}),
        };
      case 'terminal':
        log.warn('terminal', { failureReason: result.reason, failureMessage: result.message });
        return { kind: 'terminal', msg, reason: result.reason, message: result.message };
      default:
        throw new Error(`function returned an unknown result: ${JSON.stringify(result)}`);
    }
  } catch (e) {
    if (e instanceof TerminalError) {
      log.warn('terminal', { failureReason: e.reason, failureMessage: e.message });
      return { kind: 'terminal', msg, reason: e.reason, message: e.message };
    }
    if (e instanceof MalformedMessageError || e instanceof EnvelopeError) {
      return { kind: 'malformed', reason: e.message };
    }
    const error = e instanceof Error ? e : new Error(String(e));
    const errorClass =
      e instanceof TransientError ? 'transient' : e instanceof KubeApiError ? 'api' : 'unknown';
    const level = errorClass === 'unknown' || (e instanceof KubeApiError && !e.transient) ? 'error' : 'info';
    log[level]('will retry', {
      error: error.message,
      errorClass,
      ...(e instanceof KubeApiError ? { code: e.code } : {}),
    });
    return { kind: 'retry', msg, error, errorClass };
  } finally {
    end?.();
  }
}
