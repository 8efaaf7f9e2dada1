/**
 * Typed errors for Kubernetes API failures. The reconcile runtime decides retry vs terminal from
 * the class, never from message text.
 */
import { z } from 'zod';

/** A metav1.Status as an error response carries it (fields we read; the rest passes through). */
const KubeStatusSchema = z.looseObject({
  kind: z.string().optional(),
  status: z.string().optional(),
  message: z.string().optional(),
  reason: z.string().optional(),
  code: z.number().optional(),
  details: z
    .looseObject({
      name: z.string().optional(),
      kind: z.string().optional(),
      group: z.string().optional(),
      causes: z
        .array(
          z.looseObject({
            reason: z.string().optional(),
            message: z.string().optional(),
            field: z.string().optional(),
          }),
        )
        .optional(),
    })
    .optional(),
});
export type KubeStatus = z.infer<typeof KubeStatusSchema>;

/** The Status of an error body (JSON text or already parsed); text that is no Status is its message. */
function statusFrom(body: unknown): KubeStatus {
  let json = body;
  if (typeof body === 'string') {
    try {
      json = JSON.parse(body);
    } catch {
      return { message: body };
    }
  }
  const parsed = KubeStatusSchema.safeParse(json);
  if (parsed.success) return parsed.data;
  return typeof body === 'string' ? { message: body } : {};
}

export class KubeApiError extends Error {
  override readonly name: string = 'KubeApiError';
  readonly code: number;
  readonly reason: string;
  readonly status: KubeStatus;
  /** Seconds from a Retry-After header (429/5xx), when the server sent one. */
  readonly retryAfterSeconds: number | undefined;
  constructor(code: number, status: KubeStatus, retryAfterSeconds?: number) {
    super(status.message || `Kubernetes API error ${code}${status.reason ? ` (${status.reason})` : ''}`);
    this.code = code;
    this.reason = status.reason ?? '';
    this.status = status;
    this.retryAfterSeconds = retryAfterSeconds;
  }
  /** Transient failures are retried by the queue; the rest are the caller's to handle. */
  get transient(): boolean {
    return this.code === 409 || this.code === 429 || this.code >= 500 || this.code === 0;
  }
}

export class ConflictError extends KubeApiError {
  override readonly name = 'ConflictError';
}
export class AlreadyExistsError extends KubeApiError {
  override readonly name = 'AlreadyExistsError';
}
export class NotFoundError extends KubeApiError {
  override readonly name = 'NotFoundError';
}
export class InvalidError extends KubeApiError {
  override readonly name = 'InvalidError';
}
export class ForbiddenError extends KubeApiError {
  override readonly name = 'ForbiddenError';
}
export class GoneError extends KubeApiError {
  override readonly name = 'GoneError';
}

/** Builds the typed error for an HTTP status and its Status body (a JSON string or object). */
export function kubeErrorFrom(code: number, body: unknown, headers?: Record<string, string>): KubeApiError {
  const status = statusFrom(body);
  const retryRaw = headers?.['retry-after'] ?? headers?.['Retry-After'];
  const retryAfter = retryRaw !== undefined && /^\d+$/.test(retryRaw) ? Number(retryRaw) : undefined;
  if (code === 409) {
    return status.reason === 'AlreadyExists'
      ? new AlreadyExistsError(code, status, retryAfter)
      : new ConflictError(code, status, retryAfter);
  }
  if (code === 404) return new NotFoundError(code, status, retryAfter);
  if (code === 422 || code === 400) return new InvalidError(code, status, retryAfter);
  if (code === 403) return new ForbiddenError(code, status, retryAfter);
  if (code === 410) return new GoneError(code, status, retryAfter);
  return new KubeApiError(code, status, retryAfter);
}

export const isConflict = (e: unknown): e is ConflictError => e instanceof ConflictError;
export const isNotFound = (e: unknown): e is NotFoundError => e instanceof NotFoundError;
export const isAlreadyExists = (e: unknown): e is AlreadyExistsError => e instanceof AlreadyExistsError;
export const isForbidden = (e: unknown): e is ForbiddenError => e instanceof ForbiddenError;
