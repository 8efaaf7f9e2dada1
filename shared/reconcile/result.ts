/**
 * What a reconcile core returns (controller-runtime's Result, Metacontroller's resyncAfterSeconds):
 * done, requeue after a delay (a safety net; waits are woken by events), or a terminal error that
 * has been recorded on the object and must not be retried. Transient failures are thrown.
 */
export type ReconcileResult =
  | { kind: 'done'; note?: string }
  /** `notBefore` (ms since epoch), when given, is the due time itself (requeueAt). */
  | { kind: 'requeue'; afterSeconds: number; reason: string; notBefore?: number }
  | { kind: 'terminal'; reason: string; message: string };

export const done = (note?: string): ReconcileResult => (note ? { kind: 'done', note } : { kind: 'done' });
export const requeueAfter = (afterSeconds: number, reason: string): ReconcileResult => ({
  kind: 'requeue',
  afterSeconds,
  reason,
});
/**
 * Requeue for a due time the core computed from what it read, not from its clock: every pass that
 * decides the same gets the same `notBefore`, so the requeues carry one deduplication id and the
 * FIFO queue delivers one of them (ADR 025).
 */
export const requeueAt = (notBefore: number, nowMs: number, reason: string): ReconcileResult => ({
  kind: 'requeue',
  afterSeconds: Math.max(0, (notBefore - nowMs) / 1000),
  reason,
  notBefore,
});
export const terminal = (reason: string, message: string): ReconcileResult => ({
  kind: 'terminal',
  reason,
  message,
});
