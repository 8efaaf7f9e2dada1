/**
 * Knative's OIDC sender identity at the HTTP runtime, over real sockets: tokens come from the
 * embedded API server's TokenRequest API (as Knative's Broker filter gets one for its Trigger's
 * identity), discovery and JWKS from the same server over https with RBAC enforced, fetched as the
 * functions' service account. A token for the Service's audience is processed; no token, another
 * audience, an expired token and another issuer's token are refused (401) and nothing runs.
 * The JWKS is fetched once for many deliveries, and again when a token names a new key.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessageEnvelope } from '../../../events/envelope.ts';
import { HttpCloudEventSink } from '../../../functions/relay/sink-http.ts';
import { type ApiServerHandle, startApiServer } from '../../../infra/local/apiserver/index.ts';
import { R } from '../../../shared/api/resources.ts';
import { KubeClient } from '../../../shared/kube/client.ts';
import { done } from '../../../shared/reconcile/result.ts';
import { cloudEventRequest, messageCloudEvent } from '../../../shared/runtimes/cloudevents.ts';
import { createHttpApp } from '../../../shared/runtimes/http.ts';
import { OidcVerifier, oidcVerifierFor } from '../../../shared/runtimes/oidc.ts';
import { serviceAccountWithToken } from '../../conformance/identity.ts';
import { startTestCluster, type TestCluster } from '../../helpers/cluster.ts';
import { offlineContext } from '../../helpers/context.ts';
import { envelope } from '../../helpers/messages.ts';

const NS = 'metal3fn-system';
const AUD = 'serving.knative.dev/service/metal3fn-system/metal3fn-select-host';
const SENDER = 'metal3fn-select-host-trigger-oidc'; // the Trigger's OIDC identity
let cluster: TestCluster;
let other: ApiServerHandle;
let base = '';
const servers: { close(): void }[] = [];
const calls: MessageEnvelope[] = [];

async function listen(app: { fetch: (r: Request) => Response | Promise<Response> }): Promise<string> {
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((r) => server.once('listening', () => r()));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const deliver = (url: string, name: string, token?: string) => {
  const { headers, body } = cloudEventRequest(messageCloudEvent(envelope({ name })), 'binary');
  return fetch(url, {
    method: 'POST',
    headers: { ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body,
  });
};
const ran = (name: string) => calls.filter((m) => m.name === name).length;
const served = (path: string) => cluster.server.log.entries.filter((e) => e.path.startsWith(path));

beforeAll(async () => {
  cluster = await startTestCluster({ tls: true, rbac: { tokens: {} }, crds: false, namespaces: [NS] });
  other = await startApiServer({ tls: true });
  // The functions' identity fetches discovery and JWKS: the default issuer-discovery binding suffices.
  const fnToken = (await serviceAccountWithToken(cluster.client, NS, 'metal3fn-functions')).token;
  const fnClient = KubeClient.fromString(cluster.server.kubeconfig({ token: fnToken }));
  const app = createHttpApp({
    fns: {
      selectHost: async (_ctx, msg) => {
        calls.push(msg);
        return done();
      },
    },
    context: offlineContext(),
    auth: { oidc: oidcVerifierFor(fnClient, { audience: AUD }) },
  });
  base = await listen(app);
});

afterAll(async () => {
  for (const s of servers) s.close();
  await other?.stop();
  await cluster?.stop();
});

describe('HTTP runtime: Knative OIDC sender identity', () => {
  it('processes a delivery with a TokenRequest token for the Service audience', async () => {
    const { token } = await serviceAccountWithToken(cluster.client, NS, SENDER, { audiences: [AUD] });
    const r = await deliver(base, 'with-identity', token);
    expect(r.status).toBe(200);
    expect(((await r.json()) as any).results).toEqual([
      { function: 'selectHost', kind: 'Metal3Machine', key: 'metal3/with-identity', outcome: 'done' },
    ]);
    expect(ran('with-identity')).toBe(1);
    // Discovery and JWKS were read from the API server as the functions' service account.
    expect(served('/.well-known/openid-configuration').map((e) => [e.user, e.status])).toEqual([
      ['system:serviceaccount:metal3fn-system:metal3fn-functions', 200],
    ]);
  });

  it('refuses a delivery without a token, and one with a token that is no JWT', async () => {
    for (const [name, token] of [
      ['no-token', undefined],
      ['opaque-token', 'not-a-jwt'],
    ] as const) {
      const r = await deliver(base, name, token);
      expect(r.status).toBe(401);
      expect(r.headers.get('www-authenticate')).toBe('Bearer');
      expect(ran(name)).toBe(0);
    }
  });

  it('refuses a token for another audience (the API server’s own, another Service’s)', async () => {
    for (const [name, audiences] of [
      ['api-audience', []],
      ['other-service', ['serving.knative.dev/service/metal3fn-system/metal3fn-deprovision']],
    ] as const) {
      const { token } = await serviceAccountWithToken(cluster.client, NS, SENDER, { audiences });
      const r = await deliver(base, name, token);
      expect(r.status).toBe(401);
      expect(((await r.json()) as any).error).toMatch(/aud/);
      expect(ran(name)).toBe(0);
    }
  });

  it('refuses an expired token of the right issuer and audience', async () => {
    // Signed by the cluster's own key, issued two hours ago for ten minutes (TokenRequest's minimum).
    const token = await cluster.server.auth.serviceAccountToken(NS, SENDER, {
      audiences: [AUD],
      issuedAt: new Date(Date.now() - 2 * 3600_000),
      expirationSeconds: 600,
    });
    const r = await deliver(base, 'expired', token);
    expect(r.status).toBe(401);
    expect(((await r.json()) as any).error).toMatch(/exp/);
    expect(ran('expired')).toBe(0);
  });

  it('refuses another issuer’s token for the right audience without fetching keys for it', async () => {
    const otherClient = KubeClient.fromString(other.kubeconfig());
    await otherClient.create(R.Namespace, { metadata: { name: NS } });
    const { token } = await serviceAccountWithToken(otherClient, NS, SENDER, { audiences: [AUD] });
    const jwksBefore = served('/openid/v1/jwks').length;
    const r = await deliver(base, 'other-issuer', token);
    expect(r.status).toBe(401);
    expect(((await r.json()) as any).error).toMatch(/another issuer/);
    expect(ran('other-issuer')).toBe(0);
    expect(served('/openid/v1/jwks').length).toBe(jwksBefore);
  });

  it('the relay’s sink reads its (rotated) token for every request', async () => {
    const wrong = (await serviceAccountWithToken(cluster.client, NS, 'metal3fn-relay', { audiences: ['x'] }))
      .token;
    const right = (await serviceAccountWithToken(cluster.client, NS, 'metal3fn-relay', { audiences: [AUD] }))
      .token;
    let current = wrong;
    const sink = new HttpCloudEventSink({ url: base, bearerToken: () => current, mode: 'binary' });
    sink.enqueue([{ msg: envelope({ name: 'sink-old-token' }), group: 'g1' }]);
    await sink.flush();
    expect(sink.stats).toMatchObject({ sent: 0, dropped: 1 });
    current = right; // the kubelet rewrote the projected token file
    sink.enqueue([{ msg: envelope({ name: 'sink-new-token' }), group: 'g2' }]);
    await sink.close();
    expect(sink.stats).toMatchObject({ sent: 1, dropped: 1 });
    expect([ran('sink-old-token'), ran('sink-new-token')]).toEqual([0, 1]);
  });

  it('fetches discovery and the JWKS once for many deliveries', async () => {
    const { token } = await serviceAccountWithToken(cluster.client, NS, SENDER, { audiences: [AUD] });
    for (let i = 0; i < 5; i++) expect((await deliver(base, `cached-${i}`, token)).status).toBe(200);
    expect(served('/.well-known/openid-configuration')).toHaveLength(1);
    expect(served('/openid/v1/jwks')).toHaveLength(1);
  });
});

describe('OIDC verifier: JWKS rotation and an unreachable issuer', () => {
  it('fetches the JWKS again for a token signed with a new key, then accepts it', async () => {
    const first = await generateKeyPair('RS256');
    const second = await generateKeyPair('RS256');
    const published = [{ ...(await exportJWK(first.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }];
    const fetched: string[] = [];
    const issuerServer = createServer((req, res) => {
      fetched.push(req.url ?? '');
      const doc =
        req.url === '/.well-known/openid-configuration'
          ? {
              issuer: issuerUrl,
              jwks_uri: `${issuerUrl}/jwks`,
              id_token_signing_alg_values_supported: ['RS256'],
            }
          : { keys: published };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
    });
    await new Promise<void>((r) => issuerServer.listen(0, '127.0.0.1', () => r()));
    servers.push(issuerServer);
    const issuerUrl = `http://127.0.0.1:${(issuerServer.address() as AddressInfo).port}`;
    const verifier = new OidcVerifier({
      discoveryUrl: issuerUrl,
      audience: AUD,
      jwksCooldownMs: 0,
      get: async (u) => {
        const r = await fetch(u);
        return { status: r.status, body: await r.text() };
      },
    });
    const sign = (key: Parameters<SignJWT['sign']>[0], kid: string) =>
      new SignJWT({ sub: 'system:serviceaccount:x:y' })
        .setProtectedHeader({ alg: 'RS256', kid })
        .setIssuer(issuerUrl)
        .setAudience(AUD)
        .setIssuedAt()
        .setExpirationTime('10m')
        .sign(key);
    expect(await verifier.verify(await sign(first.privateKey, 'k1'))).toEqual({
      ok: true,
      subject: 'system:serviceaccount:x:y',
    });
    expect(await verifier.verify(await sign(first.privateKey, 'k1'))).toMatchObject({ ok: true });
    expect(fetched).toEqual(['/.well-known/openid-configuration', '/jwks']);
    // The issuer rotates: a token names a key the cached set lacks.
    published.push({ ...(await exportJWK(second.publicKey)), kid: 'k2', alg: 'RS256', use: 'sig' });
    expect(await verifier.verify(await sign(second.privateKey, 'k2'))).toMatchObject({ ok: true });
    expect(fetched).toEqual(['/.well-known/openid-configuration', '/jwks', '/jwks']);
    // A key nobody published is refused (after one more look at the set), not accepted.
    const stranger = await generateKeyPair('RS256');
    expect(await verifier.verify(await sign(stranger.privateKey, 'k3'))).toMatchObject({ ok: false });
  });

  it('answers 503 (the Broker retries) when the issuer cannot be reached', async () => {
    const app = createHttpApp({
      fns: { selectHost: async () => done() },
      context: offlineContext(),
      auth: {
        oidc: new OidcVerifier({
          discoveryUrl: 'http://127.0.0.1:9',
          audience: AUD,
          get: async () => ({ status: 500, body: 'down' }),
        }),
      },
    });
    const url = await listen(app);
    const { token } = await serviceAccountWithToken(cluster.client, NS, SENDER, { audiences: [AUD] });
    const r = await deliver(url, 'issuer-down', token);
    expect(r.status).toBe(503);
    expect(((await r.json()) as any).error).toMatch(/OIDC discovery .* HTTP 500/);
  });
});
