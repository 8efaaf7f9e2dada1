/**
 * The one home of CloudEvent conversion (the `cloudevents` SDK does the reading and writing, binary
 * and structured mode over HTTP), and what our runtimes make of the event types:
 *   - `io.metal3fn.message`: data is a message envelope (what the relay would have queued); its id
 *     is the envelope's deduplication id, so two distinct messages never share (source, id), which
 *     CloudEvents defines as duplicates;
 *   - Knative ApiServerSource `dev.knative.apiserver.resource.{add,update,delete}` (Resource mode:
 *     data is the whole object) and `dev.knative.apiserver.ref.{add,update,delete}` (Reference mode:
 *     data is an ObjectReference, the object is read back), both routed through the relay's table.
 */
import { CloudEvent, HTTP } from 'cloudevents';
import { deduplicationId, MessageEnvelope } from '../../events/envelope.ts';
import { isRecord, messageOf } from '../api/json.ts';

export { CloudEvent };
export const MESSAGE_EVENT_TYPE = 'io.metal3fn.message';
export const RELAY_SOURCE = 'metal3fn/relay';
const APISERVER_PREFIX = 'dev.knative.apiserver.';

export class CloudEventError extends Error {
  override readonly name = 'CloudEventError';
}

/** An extension attribute (ApiServerSource sets kind, name, namespace, apiversion; we set function). */
export function extensionOf(ce: CloudEvent<unknown>, name: string): string | undefined {
  const v: unknown = Reflect.get(ce, name);
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined;
}

/**
 * Reads a CloudEvent from an HTTP request (headers + raw body) with the SDK, validated against the
 * CloudEvents 1.0 schema. The SDK fills a missing `id` (structured) or `specversion` (binary) with
 * defaults; both are REQUIRED attributes, so their absence is refused here instead.
 */
export function parseCloudEvent(headers: Headers, body: string): CloudEvent<unknown> {
  const h: Record<string, string> = {};
  headers.forEach((v, k) => {
    h[k.toLowerCase()] = v;
  });
  const contentType = h['content-type'] ?? '';
  if (contentType.startsWith('application/cloudevents-batch'))
    throw new CloudEventError('batched CloudEvents are not supported; send one event per request');
  let message: { headers: Record<string, string>; body: unknown };
  if (contentType.startsWith('application/cloudevents')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch (e) {
      throw new CloudEventError(`structured event is not JSON: ${messageOf(e)}`);
    }
    if (!isRecord(parsed)) throw new CloudEventError('structured event must be a JSON object');
    for (const k of ['specversion', 'id'])
      if (typeof parsed[k] !== 'string' || !parsed[k])
        throw new CloudEventError(`structured event lacks '${k}'`);
    message = { headers: h, body: parsed };
  } else {
    for (const k of ['ce-specversion', 'ce-id'])
      if (!h[k]) throw new CloudEventError(`binary event lacks header '${k}'`);
    message = { headers: h, body };
  }
  let ce: CloudEvent<unknown>;
  try {
    const read = HTTP.toEvent<unknown>(message);
    if (!(read instanceof CloudEvent)) throw new CloudEventError('batched CloudEvents are not supported');
    ce = read;
    ce.validate();
  } catch (e) {
    throw e instanceof CloudEventError ? e : new CloudEventError(`invalid CloudEvent: ${messageOf(e)}`);
  }
  // The SDK parses JSON data only for the exact media types it knows (not e.g. `application/json;charset=utf-8`).
  if (typeof ce.data === 'string' && /[/+]json\b/i.test(ce.datacontenttype ?? '')) {
    try {
      const data: unknown = ce.data.length ? JSON.parse(ce.data) : undefined;
      return ce.cloneWith({ data }, false);
    } catch (e) {
      throw new CloudEventError(`event data is not JSON: ${messageOf(e)}`);
    }
  }
  return ce;
}

/** A message envelope as a CloudEvent (what the relay sends to a Broker, and a Trigger delivers). */
export function messageCloudEvent(msg: MessageEnvelope, source = RELAY_SOURCE): CloudEvent<MessageEnvelope> {
  const parsed = MessageEnvelope.parse(msg);
  return new CloudEvent<MessageEnvelope>({
    specversion: '1.0',
    type: MESSAGE_EVENT_TYPE,
    id: deduplicationId(parsed),
    source,
    subject: `${parsed.kind}/${parsed.namespace ?? ''}/${parsed.name}`,
    datacontenttype: 'application/json',
    // Extension attribute: the per-function Triggers filter on it.
    function: parsed.function,
    data: parsed,
  });
}

export type HttpMode = 'binary' | 'structured';

/** A CloudEvent as an HTTP request's headers and body, in either mode. */
export function cloudEventRequest(
  ce: CloudEvent<unknown>,
  mode: HttpMode,
): { headers: Record<string, string>; body: string } {
  const m = mode === 'binary' ? HTTP.binary(ce) : HTTP.structured(ce);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(m.headers)) if (v !== undefined) headers[k] = String(v);
  return { headers, body: typeof m.body === 'string' ? m.body : JSON.stringify(m.body ?? null) };
}

export type ApiServerMode = 'resource' | 'ref';
export type ApiServerVerb = 'add' | 'update' | 'delete';

/** `dev.knative.apiserver.<mode>.<verb>` → its parts, or undefined for other types. */
export function apiServerEventType(type: string): { mode: ApiServerMode; verb: ApiServerVerb } | undefined {
  if (!type.startsWith(APISERVER_PREFIX)) return undefined;
  const [mode, verb] = type.slice(APISERVER_PREFIX.length).split('.');
  if ((mode === 'resource' || mode === 'ref') && (verb === 'add' || verb === 'update' || verb === 'delete')) {
    return { mode, verb };
  }
  return undefined;
}

export const WATCH_TYPE_OF: Record<ApiServerVerb, 'ADDED' | 'MODIFIED' | 'DELETED'> = {
  add: 'ADDED',
  update: 'MODIFIED',
  delete: 'DELETED',
};
