/**
 * HTTP runtime over a real socket: authentication (bearer, HMAC; 401 otherwise), body limit (413),
 * CloudEvents binary and structured mode with our message type, Knative ApiServerSource Resource
 * and Reference mode routed through the relay's table against the embedded API server.
 */

import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessageEnvelope } from '../../../events/envelope.ts';
import { startRelay } from '../../../functions/relay/relay.ts';
import { HttpCloudEventSink } from '../../../functions/relay/sink-http.ts';
import { envelopeOf, R } from '../../../shared/api/resources.ts';
import { noEvents } from '../../../shared/observability/events.ts';
import { silentLogger } from '../../../shared/observability/logger.ts';
import {
  DEFAULT_CONFIG,
  type ReconcileContext,
  type ReconcileFn,
} from '../../../shared/reconcile/context.ts';
import { TransientError } from '../../../shared/reconcile/errors.ts';
import { done } from '../../../shared/reconcile/result.ts';
import { signBody } from '../../../shared/runtimes/auth.ts';
import { messageCloudEvent } from '../../../shared/runtimes/cloudevents.ts';
import { createHttpApp } from '../../../shared/runtimes/http.ts';
import { startTestCluster, type TestCluster } from '../../helpers/cluster.ts';
import { envelope } from '../../helpers/messages.ts';
import { until } from '../../helpers/wait.ts';

const NS = 'metal3';
const TOKEN = 'test-token-1';
const SECRET = 'hmac-secret';
let cluster: TestCluster;
let base: string;
let close: () => void;
const calls: MessageEnvelope[] = [];

const recording: ReconcileFn = async (_ctx, msg) => {
  calls.push(msg);
  if (msg.name.startsWith('fail')) throw new TransientError('not yet');
  return done();
};

beforeAll(async () => {
  cluster = await startTestCluster();
  const ctx: ReconcileContext = {
    client: cluster.client,
    workloadClient: async () => cluster.client,
    events: noEvents,
    log: silentLogger,
    config: DEFAULT_CONFIG,
    now: () => new Date(),
  };
  const app = createHttpApp({
    fns: { selectHost: recording, resolveProviderID: recording, deprovision: recording },
    functions: ['selectHost', 'deprovision'],
    context: ctx,
    auth: { bearerTokens: ['old-token', TOKEN], hmacSecret: SECRET },
    maxBodyBytes: 4096,
  });
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((r) => server.once('listening', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = () => server.close();
  await cluster.client.create(envelopeOf(R.Metal3Machine), {
    metadata: { name: 'm-http', namespace: NS },
    spec: {},
  });
});

afterAll(async () => {
  close?.();
  await cluster?.stop();
});

const auth = { authorization: `Bearer ${TOKEN}` };
const structured = (ce: unknown, headers: Record<string, string> = auth) =>
  fetch(base, {
    method: 'POST',
    headers: { 'content-type': 'application/cloudevents+json', ...headers },
    body: JSON.stringify(ce),
  });
const binary = (type: string, data: unknown, headers: Record<string, string> = auth) =>
  fetch(base, {
    method: 'POST',
    headers: {
      'ce-specversion': '1.0',
      'ce-type': type,
      'ce-id': `id-${Math.random()}`,
      'ce-source': 'test',
      'content-type': 'application/json',
      ...headers,
    },
    body: JSON.stringify(data),
  });

describe('HTTP runtime', () => {
  it('serves /healthz without credentials and refuses events without them', async () => {
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect((await binary('io.metal3fn.message', envelope(), {})).status).toBe(401);
    expect((await binary('io.metal3fn.message', envelope(), { authorization: 'Bearer wrong' })).status).toBe(
      401,
    );
    expect(
      (await binary('io.metal3fn.message', envelope(), { authorization: 'Bearer old-token' })).status,
    ).toBe(200);
  });

  it('accepts an HMAC signature of the body, and only a correct one', async () => {
    const ce = messageCloudEvent(envelope({ name: 'signed' }));
    const body = JSON.stringify(ce);
    const ok = await fetch(base, {
      method: 'POST',
      headers: {
        'content-type': 'application/cloudevents+json',
        'x-metal3fn-signature': signBody(SECRET, body),
      },
      body,
    });
    expect(ok.status).toBe(200);
    const bad = await fetch(base, {
      method: 'POST',
      headers: {
        'content-type': 'application/cloudevents+json',
        'x-metal3fn-signature': signBody('other', body),
      },
      body,
    });
    expect(bad.status).toBe(401);
  });

  it('answers 413 for bodies over the limit', async () => {
    const r = await fetch(base, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth },
      body: 'x'.repeat(10_000),
    });
    expect(r.status).toBe(413);
  });

  it('runs message events in binary and structured mode', async () => {
    const before = calls.length;
    const r1 = await binary('io.metal3fn.message', envelope({ name: 'bin-mode' }));
    expect(r1.status).toBe(200);
    expect(((await r1.json()) as any).results).toEqual([
      { function: 'selectHost', kind: 'Metal3Machine', key: `${NS}/bin-mode`, outcome: 'done' },
    ]);
    const r2 = await structured(messageCloudEvent(envelope({ name: 'structured-mode' })));
    expect(r2.status).toBe(200);
    expect(calls.slice(before).map((m) => m.name)).toEqual(['bin-mode', 'structured-mode']);
  });

  it('answers 400 with the reason for malformed events and envelopes, 500 when a function must retry', async () => {
    const noType = await fetch(base, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth },
      body: '{}',
    });
    expect(noType.status).toBe(400);
    expect(((await noType.json()) as any).error).toMatch(/lacks header 'ce-specversion'/);
    const bad = await binary('io.metal3fn.message', { ...envelope(), kind: 'lowercase' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).error).toMatch(/kind/);
    // A function this service does not run is malformed here, not silently dropped.
    expect((await binary('io.metal3fn.message', envelope({ function: 'resolveProviderID' }))).status).toBe(
      400,
    );
    expect((await binary('io.metal3fn.message', envelope({ name: 'fail-1' }))).status).toBe(500);
  });

  it('routes ApiServerSource Resource-mode events through the routing table', async () => {
    const before = calls.length;
    const host = {
      apiVersion: 'metal3.io/v1alpha1',
      kind: 'BareMetalHost',
      metadata: { name: 'h-http', namespace: NS, uid: 'h-uid', resourceVersion: '5' },
      spec: { consumerRef: { kind: 'Metal3Machine', name: 'm-http', namespace: NS } },
    };
    const r = await binary('dev.knative.apiserver.resource.update', host);
    expect(r.status).toBe(200);
    // The host's consumer machine, read by name (no relay cache here: shared/routing/lookup.ts).
    expect(calls.slice(before).map((m) => `${m.function} ${m.name} ${m.reason}`)).toEqual([
      'selectHost m-http related',
    ]);
  });

  it('routes Reference-mode events by reading the object back; a deleted one routes nowhere', async () => {
    const before = calls.length;
    const ref = {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
      kind: 'Metal3Machine',
      name: 'm-http',
      namespace: NS,
    };
    const r = await structured({
      specversion: '1.0',
      type: 'dev.knative.apiserver.ref.add',
      id: '1',
      source: 'apiserversource',
      data: ref,
    });
    expect(r.status).toBe(200);
    expect(calls.slice(before).map((m) => `${m.function} ${m.name} ${m.reason}`)).toEqual([
      'selectHost m-http added',
    ]);
    const gone = await structured({
      specversion: '1.0',
      type: 'dev.knative.apiserver.ref.delete',
      id: '2',
      source: 's',
      data: { ...ref, name: 'gone' },
    });
    expect(gone.status).toBe(200);
    expect(((await gone.json()) as any).results).toEqual([]);
  });

  it('receives the relay through its HTTP CloudEvents sink (a Knative Broker stand-in)', async () => {
    const sink = new HttpCloudEventSink({
      url: base,
      bearerToken: TOKEN,
      functions: ['selectHost', 'deprovision'],
    });
    const relay = await startRelay({
      client: cluster.client,
      sink,
      workloads: false,
      watch: { resyncMs: 0 },
    });
    try {
      await cluster.client.create(envelopeOf(R.Metal3Machine), {
        metadata: { name: 'm-sink', namespace: NS },
        spec: {},
      });
      await until(() => calls.some((m) => m.name === 'm-sink' && m.function === 'selectHost'));
      await relay.flush();
      expect(sink.stats.sent).toBeGreaterThanOrEqual(2); // m-http from the initial list, m-sink from the watch
      expect(sink.stats.dropped).toBe(0);
    } finally {
      await relay.stop();
    }
  });

  it('counts outcomes on /metrics', async () => {
    const text = await (await fetch(`${base}/metrics`)).text();
    expect(text).toMatch(/metal3fn_messages_total\{function="selectHost",outcome="done"\} \d+/);
  });
});
