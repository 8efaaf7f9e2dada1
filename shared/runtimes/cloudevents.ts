/**
 * CloudEvents 1.0 over HTTP, binary and structured mode, and what our HTTP runtime makes of them:
 *   - `io.metal3fn.message`: data is a message envelope (what the relay would have queued);
 *   - Knative ApiServerSource `dev.knative.apiserver.resource.{add,update,delete}` (Resource mode:
 *     data is the whole object) and `dev.knative.apiserver.ref.{add,update,delete}` (Reference mode:
 *     data is an ObjectReference, the object is read back), both routed through the relay's table.
 */
import { isRecord, messageOf, stringOf } from '../api/json.ts';

export const MESSAGE_EVENT_TYPE = 'io.metal3fn.message';
const APISERVER_PREFIX = 'dev.knative.apiserver.';

export interface CloudEvent {
  specversion: string;
  type: string;
  id: string;
  source: string;
  subject?: string | undefined;
  datacontenttype?: string | undefined;
  data?: unknown;
  /** Extension attributes (ApiServerSource sets kind, name, namespace, apiversion). */
  extensions: Record<string, string>;
}

export class CloudEventError extends Error {
  override readonly name = 'CloudEventError';
}

const REQUIRED = ['specversion', 'type', 'id', 'source'] as const;
const CORE = new Set([
  'specversion',
  'type',
  'id',
  'source',
  'subject',
  'datacontenttype',
  'data',
  'data_base64',
  'time',
  'dataschema',
]);

function parseData(text: string, contentType: string | undefined): unknown {
  if (!contentType || /json/i.test(contentType)) {
    if (text.length === 0) return undefined;
    try {
      return JSON.parse(text);
    } catch (e) {
      throw new CloudEventError(`event data is not JSON: ${messageOf(e)}`);
    }
  }
  return text;
}

/** Reads a CloudEvent from an HTTP request (headers + raw body). */
export function parseCloudEvent(headers: Headers, body: string): CloudEvent {
  const contentType = headers.get('content-type') ?? undefined;
  if (contentType?.startsWith('application/cloudevents-batch')) {
    throw new CloudEventError('batched CloudEvents are not supported; send one event per request');
  }
  if (contentType?.startsWith('application/cloudevents')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch (e) {
      throw new CloudEventError(`structured event is not JSON: ${messageOf(e)}`);
    }
    if (!isRecord(parsed)) throw new CloudEventError('structured event must be a JSON object');
    const raw = parsed;
    for (const k of REQUIRED) {
      if (typeof raw[k] !== 'string' || !raw[k]) throw new CloudEventError(`structured event lacks '${k}'`);
    }
    let data = raw.data;
    if (data === undefined && typeof raw.data_base64 === 'string') {
      data = parseData(
        Buffer.from(raw.data_base64, 'base64').toString('utf8'),
        stringOf(raw.datacontenttype),
      );
    } else if (typeof data === 'string' && /json/i.test(String(raw.datacontenttype ?? ''))) {
      data = parseData(data, 'application/json');
    }
    const extensions: Record<string, string> = {};
    for (const [k, v] of Object.entries(raw))
      if (!CORE.has(k) && typeof v !== 'object') extensions[k] = String(v);
    return {
      specversion: String(raw.specversion),
      type: String(raw.type),
      id: String(raw.id),
      source: String(raw.source),
      subject: stringOf(raw.subject),
      datacontenttype: stringOf(raw.datacontenttype),
      data,
      extensions,
    };
  }
  // Binary mode: attributes in ce-* headers, data in the body.
  const attr = (k: string) => headers.get(`ce-${k}`) ?? undefined;
  for (const k of REQUIRED) if (!attr(k)) throw new CloudEventError(`binary event lacks header 'ce-${k}'`);
  const extensions: Record<string, string> = {};
  headers.forEach((v, k) => {
    const name = k.toLowerCase();
    if (name.startsWith('ce-') && !CORE.has(name.slice(3))) extensions[name.slice(3)] = v;
  });
  return {
    specversion: attr('specversion')!,
    type: attr('type')!,
    id: attr('id')!,
    source: attr('source')!,
    subject: attr('subject'),
    datacontenttype: contentType,
    data: parseData(body, contentType),
    extensions,
  };
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
