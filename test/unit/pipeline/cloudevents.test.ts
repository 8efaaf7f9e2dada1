/**
 * CloudEvents through the `cloudevents` SDK: a message event written in binary and structured mode
 * reads back to the same envelope, its id is the envelope's deduplication id (distinct messages never
 * share (source, id)), and events lacking a required attribute are refused with the reason.
 */
import { CloudEvent, HTTP } from 'cloudevents';
import { describe, expect, it } from 'vitest';
import { type MessageEnvelope, parseEnvelope } from '../../../events/envelope.ts';
import {
  CloudEventError,
  cloudEventRequest,
  extensionOf,
  MESSAGE_EVENT_TYPE,
  messageCloudEvent,
  parseCloudEvent,
} from '../../../shared/runtimes/cloudevents.ts';

const msg = (over: Partial<MessageEnvelope> = {}): MessageEnvelope =>
  parseEnvelope({
    function: 'selectHost',
    apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
    kind: 'Metal3Machine',
    namespace: 'metal3',
    name: 'm-0',
    uid: 'u-1',
    resourceVersion: '7',
    ...over,
  });

const read = (r: { headers: Record<string, string>; body: string }) =>
  parseCloudEvent(new Headers(r.headers), r.body);

describe('CloudEvents (SDK)', () => {
  it.each(['binary', 'structured'] as const)('a message event round-trips in %s mode', (mode) => {
    const m = msg();
    const wire = cloudEventRequest(messageCloudEvent(m), mode);
    if (mode === 'binary') {
      expect(wire.headers).toMatchObject({
        'ce-specversion': '1.0',
        'ce-type': 'io.metal3fn.message',
        'ce-id': 'u-1/7/selectHost',
        'ce-source': 'metal3fn/relay',
        'ce-function': 'selectHost',
        'content-type': 'application/json',
      });
      expect(JSON.parse(wire.body)).toEqual(m);
    } else {
      expect(wire.headers['content-type']).toMatch(/^application\/cloudevents\+json/);
      expect(JSON.parse(wire.body)).toMatchObject({
        id: 'u-1/7/selectHost',
        function: 'selectHost',
        data: m,
      });
    }
    const ce = read(wire);
    expect(ce.type).toBe(MESSAGE_EVENT_TYPE);
    expect(ce.id).toBe('u-1/7/selectHost');
    expect(ce.subject).toBe('Metal3Machine/metal3/m-0');
    expect(extensionOf(ce, 'function')).toBe('selectHost');
    expect(parseEnvelope(ce.data)).toEqual(m);
  });

  it('reads what another SDK user writes (an ApiServerSource-style binary event)', () => {
    const host = { apiVersion: 'metal3.io/v1alpha1', kind: 'BareMetalHost', metadata: { name: 'h' } };
    const sent = new CloudEvent({
      type: 'dev.knative.apiserver.resource.update',
      source: 'https://kubernetes.default.svc',
      id: 'e-1',
      datacontenttype: 'application/json',
      kind: 'BareMetalHost',
      data: host,
    });
    const m = HTTP.binary(sent);
    const ce = parseCloudEvent(new Headers(m.headers as Record<string, string>), String(m.body));
    expect(ce.data).toEqual(host);
    expect(extensionOf(ce, 'kind')).toBe('BareMetalHost');
  });

  it('parses JSON data under a JSON media type the SDK does not know by name', () => {
    const ok = cloudEventRequest(messageCloudEvent(msg()), 'binary');
    const ce = read({
      headers: { ...ok.headers, 'content-type': 'application/json;charset=utf-8' },
      body: ok.body,
    });
    expect(ce.data).toEqual(msg());
    expect(() =>
      read({ headers: { ...ok.headers, 'content-type': 'application/json;charset=utf-8' }, body: '{x' }),
    ).toThrow(/event data is not JSON/);
  });

  it('gives distinct messages of one object version distinct ids, and one message one id', () => {
    const ids = [
      msg(),
      msg({ function: 'resolveProviderID' }),
      msg({ reason: 'related', cause: 'BareMetalHost/metal3/h-1@10' }),
      msg({ reason: 'related', cause: 'BareMetalHost/metal3/h-2@11' }),
      msg({ reason: 'requeue', attempt: 1, notBefore: 1000 }),
      msg({ reason: 'requeue', attempt: 2, notBefore: 2000 }),
    ].map((m) => messageCloudEvent(m).id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(messageCloudEvent(msg()).id).toBe(messageCloudEvent(msg()).id);
  });

  it('refuses events without a required attribute, and batches, with the reason', () => {
    const ok = cloudEventRequest(messageCloudEvent(msg()), 'binary');
    const without = (h: string) => {
      const { [h]: _drop, ...rest } = ok.headers;
      return () => read({ headers: rest, body: ok.body });
    };
    expect(without('ce-id')).toThrow(/lacks header 'ce-id'/);
    expect(without('ce-specversion')).toThrow(/lacks header 'ce-specversion'/);
    expect(without('ce-source')).toThrow(CloudEventError);
    const structured = JSON.parse(cloudEventRequest(messageCloudEvent(msg()), 'structured').body);
    delete structured.id;
    expect(() =>
      read({ headers: { 'content-type': 'application/cloudevents+json' }, body: JSON.stringify(structured) }),
    ).toThrow(/lacks 'id'/);
    expect(() =>
      read({ headers: { 'content-type': 'application/cloudevents-batch+json' }, body: '[]' }),
    ).toThrow(/batched/);
    expect(() =>
      read({ headers: { ...ok.headers, 'content-type': 'application/json' }, body: '{not json' }),
    ).toThrow(CloudEventError);
  });
});
