/**
 * What a reconcile core returns (controller-runtime's Result, Metacontroller's resyncAfterSeconds):
 * done, requeue after a delay (a safety net; waits are woken by events), or a terminal error that
 * has been recorded on the object and must not be retried. Transient failures are thrown.
 */
export type ReconcileResult =
  | { kind: 'done'; note?: string }
  | { kind: 'requeue'; afterSeconds: number; reason: string }
  | { kind: 'terminal'; reason: string; message: string };

export const done = (note?: string): ReconcileResult => (note ? { kind: 'done', note } : { kind: 'done' });
export const requeueAfter = (afterSeconds: number, reason: string): ReconcileResult => ({
  kind: 'requeue',
  afterSeconds,
  reason,
});
export const terminal = (reason: string, message: string): ReconcileResult => ({
  kind: 'terminal',
  reason,
  message,
});
