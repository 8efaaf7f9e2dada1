/**
 * Kubernetes Status objects and the typed error that carries one out of a handler. Messages
 * follow the real kube-apiserver's text (clients and people match on them).
 */
import type { ServedKind } from './kinds.ts';

export interface StatusCause {
  reason: string;
  message: string;
  field?: string;
}

export interface StatusBody {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message: string;
  reason: string;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    uid?: string;
    causes?: StatusCause[];
    retryAfterSeconds?: number;
  };
  code: number;
}

export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly code: number;
  readonly body: StatusBody;
  readonly headers: Record<string, string>;
  constructor(
    code: number,
    reason: string,
    message: string,
    details?: StatusBody['details'],
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.code = code;
    this.headers = headers;
    this.body = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
    if (details) this.body.details = details;
  }
}

/**
 * A failure the real server answers in text/plain rather than as a Status (responsewriters
 * InternalError, e.g. the impersonation filter's): http.Error's headers and trailing newline.
 */
export class PlainTextError extends Error {
  override readonly name = 'PlainTextError';
  readonly code: number;
  constructor(code: number, message: string) {
    // responsewriters' sanitizer: nothing in the text may look like HTML.
    super(message.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'));
    this.code = code;
  }
}

/** `<plural>.<group>` or `<plural>` for the core group: how the server names a resource. */
export const qualified = (k: Pick<ServedKind, 'plural' | 'group'>): string =>
  k.group ? `${k.plural}.${k.group}` : k.plural;

/** `<Kind>.<group>` or `<Kind>`: how the server names a kind in "is invalid" messages. */
const qualifiedKind = (k: Pick<ServedKind, 'kind' | 'group'>): string =>
  k.group ? `${k.kind}.${k.group}` : k.kind;

const details = (k: Pick<ServedKind, 'plural' | 'group'>, name: string): StatusBody['details'] => {
  const d: NonNullable<StatusBody['details']> = { name };
  if (k.group) d.group = k.group;
  d.kind = k.plural;
  return d;
};

export const notFound = (k: Pick<ServedKind, 'plural' | 'group'>, name: string): ApiError =>
  new ApiError(404, 'NotFound', `${qualified(k)} "${name}" not found`, details(k, name));

export const alreadyExists = (k: Pick<ServedKind, 'plural' | 'group'>, name: string): ApiError =>
  new ApiError(409, 'AlreadyExists', `${qualified(k)} "${name}" already exists`, details(k, name));

export const conflict = (k: Pick<ServedKind, 'plural' | 'group'>, name: string, why?: string): ApiError =>
  new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualified(k)} "${name}": ${why ?? 'the object has been modified; please apply your changes to the latest version and try again'}`,
    details(k, name),
  );

export const invalid = (
  k: Pick<ServedKind, 'kind' | 'group'>,
  name: string,
  causes: StatusCause[],
): ApiError => {
  const text = causes.map(causeText).join(', ');
  const message = `${qualifiedKind(k)} "${name}" is invalid: ${causes.length > 1 ? `[${text}]` : text}`;
  const d: NonNullable<StatusBody['details']> = { name };
  if (k.group) d.group = k.group;
  d.kind = k.kind;
  d.causes = causes;
  return new ApiError(422, 'Invalid', message, d);
};

/** One field error as field/validation formats it; the cause's message omits the field, as the real server's do. */
export function fieldError(
  type:
    | 'Required'
    | 'Invalid'
    | 'TypeInvalid'
    | 'Forbidden'
    | 'NotSupported'
    | 'TooLong'
    | 'TooMany'
    | 'Duplicate',
  field: string,
  detail: string,
  value?: unknown,
): StatusCause {
  switch (type) {
    case 'Required':
      return { reason: 'FieldValueRequired', message: `Required value${detail ? `: ${detail}` : ''}`, field };
    case 'Forbidden':
      return { reason: 'FieldValueForbidden', message: `Forbidden: ${detail}`, field };
    case 'NotSupported':
      return {
        reason: 'FieldValueNotSupported',
        message: `Unsupported value: ${fmtValue(value)}: ${detail}`,
        field,
      };
    case 'TooLong':
      return { reason: 'FieldValueTooLong', message: `Too long: ${detail}`, field };
    case 'TooMany':
      return {
        reason: 'FieldValueTooMany',
        message: `Too many: ${value === undefined ? '' : `${fmtValue(value)}: `}${detail}`,
        field,
      };
    case 'Duplicate':
      return { reason: 'FieldValueDuplicate', message: `Duplicate value: ${fmtValue(value)}`, field };
    case 'TypeInvalid':
      // field.TypeInvalid: same text as Invalid, its own reason.
      return {
        reason: 'FieldValueTypeInvalid',
        message: `Invalid value: ${fmtValue(value)}: ${detail}`,
        field,
      };
    default:
      return { reason: 'FieldValueInvalid', message: `Invalid value: ${fmtValue(value)}: ${detail}`, field };
  }
}

/** `field: message` as the Status message lists a cause. */
export const causeText = (c: StatusCause): string => (c.field ? `${c.field}: ${c.message}` : c.message);

/** Values print like Go's %#v for strings and %v otherwise, as field errors do. */
export function fmtValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'object') return `"${Array.isArray(v) ? 'array' : 'object'}"`;
  return String(v);
}

export const badRequest = (message: string): ApiError => new ApiError(400, 'BadRequest', message);

export const methodNotAllowed = (): ApiError =>
  new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');

export const notFoundPath = (): ApiError =>
  new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});

export const unsupportedMediaType = (_type: string, accepted: string[]): ApiError =>
  new ApiError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
    {},
  );

export const expired = (message: string): ApiError => new ApiError(410, 'Expired', message);

export const tooOld = (requested: number, oldest: number): ApiError =>
  expired(`too old resource version: ${requested} (${oldest})`);

export const unauthorized = (): ApiError => new ApiError(401, 'Unauthorized', 'Unauthorized');

export const forbidden = (
  message: string,
  k?: Pick<ServedKind, 'plural' | 'group'>,
  name?: string,
): ApiError =>
  new ApiError(
    403,
    'Forbidden',
    message,
    k ? { ...(name ? { name } : {}), ...(k.group ? { group: k.group } : {}), kind: k.plural } : {},
  );

/** 500; `wrapped` adds the "Internal error occurred:" prefix of errors the server did not expect. */
export const internalError = (message: string, wrapped = true): ApiError =>
  wrapped
    ? new ApiError(500, 'InternalError', `Internal error occurred: ${message}`, {
        causes: [{ reason: 'UnexpectedServerResponse', message }],
      })
    : new ApiError(500, '', message);

export const serviceUnavailable = (
  message = 'the server is currently unable to handle the request',
): ApiError => new ApiError(503, 'ServiceUnavailable', message);

export const tooManyRequests = (retryAfterSeconds: number): ApiError =>
  new ApiError(
    429,
    'TooManyRequests',
    'the server has received too many requests and has asked us to try again later',
    { retryAfterSeconds },
    { 'Retry-After': String(retryAfterSeconds) },
  );

/**
 * What a DELETE answers when the object is gone at once and its store does not return deleted
 * objects (k8s.io/apiserver registry/generic/registry/store.go finalizeDelete): Status Success
 * with the name, group, resource (as `kind`) and uid; no code, message or reason.
 */
export const deletedStatus = (k: Pick<ServedKind, 'plural' | 'group'>, name: string, uid: string) => ({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Success',
  details: { name, ...(k.group ? { group: k.group } : {}), kind: k.plural, uid },
});
