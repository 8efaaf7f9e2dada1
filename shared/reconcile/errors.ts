/** Typed errors of the reconcile layer (the Powertools habit: one errors.ts, classes not strings). */
import type { KubeObject } from '../api/meta.ts';

/** Bad user input: recorded on the object, the message is acknowledged, never retried. */
export class TerminalError extends Error {
  override readonly name = 'TerminalError';
  /** Machine-readable reason (CAPI failureReason style, e.g. InvalidConfiguration). */
  readonly reason: string;
  constructor(reason: string, message: string) {
    super(message);
    this.reason = reason;
  }
}

/** A message that cannot be acted on (not JSON, wrong schema, unknown function): goes to the DLQ. */
export class MalformedMessageError extends Error {
  override readonly name = 'MalformedMessageError';
}

/** A transient condition worth retrying with backoff (the queue redelivers). */
export class TransientError extends Error {
  override readonly name = 'TransientError';
}

/**
 * Schema violation of a Kubernetes object: names the object and the field path. `object` is its
 * envelope (kind, metadata) when that much parses, so the failure can be recorded on it.
 */
export class InvalidObjectError extends TerminalError {
  readonly objectRef: string;
  readonly issues: { path: string; message: string }[];
  readonly kind: string | undefined;
  readonly object: KubeObject | undefined;
  constructor(
    objectRef: string,
    issues: { path: string; message: string }[],
    subject: { kind?: string; object?: KubeObject | undefined } = {},
  ) {
    super(
      'InvalidConfiguration',
      `${objectRef} is invalid: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
    );
    this.objectRef = objectRef;
    this.issues = issues;
    this.kind = subject.kind;
    this.object = subject.object;
  }

  /** Is this the failure of the object `kind` `namespace/name` (and not of another it read)? */
  concerns(kind: string, namespace: string | undefined, name: string): boolean {
    const m = this.object?.metadata;
    return this.kind === kind && m?.name === name && (m.namespace ?? undefined) === (namespace || undefined);
  }
}
