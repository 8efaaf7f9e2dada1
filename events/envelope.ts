/**
 * The message envelope (DESIGN.md §1): a key, never a payload. The handler re-reads the object and
 * reconciles, so duplicates and reordering are harmless. Validated with zod before anything acts.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';

export const FUNCTION_NAMES = [
  'selectHost',
  'allocateIndex',
  'renderData',
  'resolveProviderID',
  'deprovision',
  'reconcileCluster',
] as const;
export type FunctionName = (typeof FUNCTION_NAMES)[number];
export const isFunctionName = (s: string): s is FunctionName => FUNCTION_NAMES.some((n) => n === s);

/** Why the message was sent: a watch event, a resync, a requeue-after or a manual replay. */
export const REASONS = ['added', 'modified', 'deleted', 'resync', 'requeue', 'replay', 'related'] as const;

const dns1123 = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

export const MessageEnvelope = z
  .object({
    /** Schema version of the envelope. */
    v: z.literal(1).default(1),
    function: z.enum(FUNCTION_NAMES),
    /** `management`, or `<namespace>/<cluster>` for an object of a workload cluster. */
    cluster: z.string().min(1).max(300).default('management'),
    apiVersion: z.string().min(1).max(120),
    kind: z.string().regex(/^[A-Z][A-Za-z0-9]*$/, 'kind must be a Kubernetes Kind (CamelCase)'),
    namespace: z.string().max(63).regex(dns1123, 'namespace must be a DNS-1123 label').optional(),
    name: z.string().min(1).max(253).regex(dns1123, 'name must be a DNS-1123 subdomain'),
    uid: z.string().max(64).optional(),
    resourceVersion: z.string().max(64).optional(),
    reason: z.enum(REASONS).default('modified'),
    /** For requeue-after: do not act before this time (ms since epoch); see docs/adr/002. */
    notBefore: z.number().int().nonnegative().optional(),
    /** How many times this key was requeued by a core (not redeliveries). */
    attempt: z.number().int().nonnegative().optional(),
    /**
     * For reason `related`: the event that caused this message, `Kind/namespace/name@resourceVersion`.
     * Part of the deduplication id, so two different causes for one unchanged object both arrive.
     */
    cause: z.string().max(400).optional(),
    /**
     * When the event behind this message was observed (ms since epoch; a requeue: when it was
     * decided): every change the message reflects was committed before it. A shared read from
     * before it is never used for this delivery (ADR 024). Not part of the deduplication id.
     */
    observedAt: z.number().int().nonnegative().optional(),
  })
  .strict();

export type MessageEnvelope = z.infer<typeof MessageEnvelope>;
export type MessageEnvelopeInput = z.input<typeof MessageEnvelope>;

/** Largest accepted message body; SQS allows 256 KiB, a key needs well under 2. */
export const MAX_MESSAGE_BYTES = 8 * 1024;

export class EnvelopeError extends Error {
  override readonly name = 'EnvelopeError';
}

/** Parses a raw message body; throws EnvelopeError with a reason naming the field at fault. */
export function parseEnvelope(body: string | unknown): MessageEnvelope {
  let raw: unknown = body;
  if (typeof body === 'string') {
    if (Buffer.byteLength(body) > MAX_MESSAGE_BYTES) {
      throw new EnvelopeError(
        `message too large: ${Buffer.byteLength(body)} bytes (limit ${MAX_MESSAGE_BYTES})`,
      );
    }
    try {
      raw = JSON.parse(body);
    } catch (e) {
      throw new EnvelopeError(`message is not JSON: ${(e as Error).message}`);
    }
  }
  const r = MessageEnvelope.safeParse(raw);
  if (!r.success) {
    throw new EnvelopeError(
      `invalid message: ${r.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`,
    );
  }
  return r.data;
}

/** The object key a message names, `namespace/name` (or `name`). */
export const envelopeKey = (m: Pick<MessageEnvelope, 'namespace' | 'name'>): string =>
  m.namespace ? `${m.namespace}/${m.name}` : m.name;

/**
 * SQS FIFO deduplication id: `uid/resourceVersion/function`, never the key alone. A requeue's is
 * its key, function and due time only: requeues of one key due at one time are one pass, whichever
 * version or attempt decided them (ADR 037).
 */
export function deduplicationId(m: MessageEnvelope): string {
  const id =
    m.reason === 'requeue'
      ? `${m.uid ?? `${m.kind}/${envelopeKey(m)}`}/${m.function}/requeue-${m.notBefore ?? 0}`
      : `${m.uid ?? envelopeKey(m)}/${m.resourceVersion ?? '0'}/${m.function}${m.reason === 'replay' ? `/${m.reason}-${m.attempt ?? 0}-${m.notBefore ?? 0}` : ''}${m.cause ? `/c-${createHash('sha256').update(m.cause).digest('base64url').slice(0, 16)}` : ''}`;
  // SQS allows 128 characters from [A-Za-z0-9!"#$%&'()*+,-./:;<=>?@[\]^_`{|}~].
  return id.length <= 128 ? id : id.slice(0, 128);
}
