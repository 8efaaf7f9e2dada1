/**
 * The embedded server's authentication beyond the conformance suite: what happens when RBAC is
 * not enforced (authentication still runs, authorization is AlwaysAllow, as on a real server
 * started with --authorization-mode=AlwaysAllow), the signing key kept with the data file, a
 * static-token user's `--as` refused under RBAC, and the bearer-header parsing rules.
 */
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compactVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelopeOf, R } from '../../../../shared/api/resources.ts';
import { KubeClient } from '../../../../shared/kube/client.ts';
import { kubectlExit } from '../../../../test/helpers/kubectl.ts';
import { type ApiServerHandle, startApiServer } from '../index.ts';
import { bearerToken } from './authenticate.ts';

const SA = envelopeOf({
  group: '',
  version: 'v1',
  kind: 'ServiceAccount',
  plural: 'serviceaccounts',
  namespaced: true,
  statusSubresource: false,
});

async function post(url: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

const whoami = (url: string, headers: Record<string, string> = {}) =>
  post(
    url,
    '/apis/authentication.k8s.io/v1/selfsubjectreviews',
    { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    headers,
  );

async function tokenFor(url: string, ns: string, name: string): Promise<string> {
  const r = await post(url, `/api/v1/namespaces/${ns}/serviceaccounts/${name}/token`, { spec: {} });
  expect(r.status).toBe(201);
  return r.body.status.token;
}

describe('authentication without RBAC enforcement (AlwaysAllow)', () => {
  let server: ApiServerHandle;
  let admin: KubeClient;
  beforeAll(async () => {
    server = await startApiServer();
    admin = KubeClient.fromString(server.kubeconfig());
    await admin.create(SA, { metadata: { name: 'robot', namespace: 'default' } });
  });
  afterAll(() => server.stop());

  it('no credentials: system:anonymous, allowed; an unknown token: 401; the admin token: admin', async () => {
    expect(await whoami(server.url)).toMatchObject({
      status: 201,
      body: { status: { userInfo: { username: 'system:anonymous', groups: ['system:unauthenticated'] } } },
    });
    expect((await whoami(server.url, { authorization: 'Bearer nobody-knows-me' })).status).toBe(401);
    expect(
      (await whoami(server.url, { authorization: `Bearer ${server.adminToken}` })).body.status.userInfo,
    ).toEqual({
      username: 'admin',
      groups: ['system:masters', 'system:authenticated'],
    });
  });

  it('service-account and bootstrap tokens authenticate; impersonation needs no grant', async () => {
    const token = await tokenFor(server.url, 'default', 'robot');
    expect(
      (await whoami(server.url, { authorization: `Bearer ${token}` })).body.status.userInfo.username,
    ).toBe('system:serviceaccount:default:robot');
    await admin.create(R.Secret, {
      metadata: { name: 'bootstrap-token-abcdef', namespace: 'kube-system' },
      type: 'bootstrap.kubernetes.io/token',
      stringData: {
        'token-id': 'abcdef',
        'token-secret': '0123456789abcdef',
        'usage-bootstrap-authentication': 'true',
      },
    });
    expect(
      (await whoami(server.url, { authorization: 'Bearer abcdef.0123456789abcdef' })).body.status.userInfo,
    ).toEqual({
      username: 'system:bootstrap:abcdef',
      groups: ['system:bootstrappers', 'system:authenticated'],
    });
    expect((await whoami(server.url, { 'impersonate-user': 'bob' })).body.status.userInfo).toEqual({
      username: 'bob',
      groups: ['system:authenticated'],
    });
  });

  it('kubectl over http sends no credentials: it is system:anonymous, and --as is honoured', async () => {
    const kc = join(mkdtempSync(join(tmpdir(), 'm3fn-authn-')), 'kubeconfig');
    await server.writeKubeconfig(kc);
    const anon = await kubectlExit(kc, ['auth', 'whoami', '-o', 'json']);
    expect(JSON.parse(anon.stdout).status.userInfo.username).toBe('system:anonymous');
    const asBob = await kubectlExit(kc, ['auth', 'whoami', '-o', 'json', '--as', 'bob', '--as-group', 'g']);
    expect(JSON.parse(asBob.stdout).status.userInfo).toEqual({
      username: 'bob',
      groups: ['g', 'system:authenticated'],
    });
  });

  it('auth can-i --list is everything (AlwaysAllow rules); OIDC discovery is not served for an http issuer', async () => {
    const r = await post(server.url, '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
      spec: { namespace: 'default' },
    });
    expect(r.body.status).toEqual({
      resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
      nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
      incomplete: false,
    });
    expect(server.auth.issuer).toBe(server.url);
    expect((await fetch(`${server.url}/.well-known/openid-configuration`)).status).toBe(404);
    expect(() => server.auth.caCertHash()).toThrow(/tls: true/);
  });
});

describe('the signing key lives with the data file', () => {
  it('a token issued before a restart still authenticates after it', async () => {
    const dataFile = join(mkdtempSync(join(tmpdir(), 'm3fn-authn-')), 'state.db');
    const first = await startApiServer({ dataFile });
    let token: string;
    try {
      await KubeClient.fromString(first.kubeconfig()).create(SA, {
        metadata: { name: 'robot', namespace: 'default' },
      });
      token = await tokenFor(first.url, 'default', 'robot');
    } finally {
      await first.stop();
    }
    expect(statSync(`${dataFile}.sa.key`).mode & 0o777).toBe(0o600);
    const second = await startApiServer({ dataFile, port: first.port });
    try {
      expect(
        (await whoami(second.url, { authorization: `Bearer ${token}` })).body.status.userInfo.username,
      ).toBe('system:serviceaccount:default:robot');
    } finally {
      await second.stop();
    }
    const other = await startApiServer({ port: first.port });
    try {
      // Same issuer URL, another key: the signature does not verify.
      expect((await whoami(other.url, { authorization: `Bearer ${token}` })).status).toBe(401);
    } finally {
      await other.stop();
    }
  });
});

describe('cluster-info across a restart with TLS (a new serving CA each start)', () => {
  it('is rewritten with the new CA and re-signed for the signing tokens', async () => {
    const dataFile = join(mkdtempSync(join(tmpdir(), 'm3fn-authn-')), 'state.db');
    const read = async (s: ApiServerHandle) =>
      (await KubeClient.fromString(s.kubeconfig()).get<any>(R.ConfigMap, 'kube-public', 'cluster-info'))!
        .data;
    const first = await startApiServer({ dataFile, tls: true });
    let before: Record<string, string>;
    try {
      await KubeClient.fromString(first.kubeconfig()).create(R.Secret, {
        metadata: { name: 'bootstrap-token-abcdef', namespace: 'kube-system' },
        type: 'bootstrap.kubernetes.io/token',
        stringData: {
          'token-id': 'abcdef',
          'token-secret': '0123456789abcdef',
          'usage-bootstrap-signing': 'true',
        },
      });
      first.settle();
      before = await read(first);
    } finally {
      await first.stop();
    }
    const second = await startApiServer({ dataFile, tls: true });
    try {
      second.settle();
      const after = await read(second);
      expect(after.kubeconfig).not.toBe(before.kubeconfig);
      expect(after.kubeconfig).toContain(Buffer.from(second.auth.ca!).toString('base64'));
      const [head, , mac] = after['jws-kubeconfig-abcdef']!.split('.');
      const jws = `${head}.${Buffer.from(after.kubeconfig!).toString('base64url')}.${mac}`;
      await expect(
        compactVerify(jws, new TextEncoder().encode('0123456789abcdef'), { algorithms: ['HS256'] }),
      ).resolves.toBeDefined();
    } finally {
      await second.stop();
    }
  });
});

describe('impersonation under RBAC', () => {
  it('a static-token user without the impersonate verb is refused, never silently served as itself', async () => {
    const server = await startApiServer({ rbac: { tokens: { 'alice-token': { user: 'alice' } } } });
    try {
      const r = await whoami(server.url, { authorization: 'Bearer alice-token', 'impersonate-user': 'bob' });
      expect(r.status).toBe(403);
      expect(r.body.message).toBe(
        'users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope',
      );
    } finally {
      await server.stop();
    }
  });
});

describe('bearer token parsing (bearertoken.Authenticator)', () => {
  it.each([
    [undefined, undefined],
    ['', undefined],
    ['Bearer abc', 'abc'],
    ['bearer abc', 'abc'],
    ['  Bearer abc  ', 'abc'],
    ['Bearer abc extra', 'abc'],
    ['Bearer  abc', undefined],
    ['Bearer', undefined],
    ['Basic YWxpY2U6cHc=', undefined],
  ])('%j → %j', (header, token) => {
    expect(bearerToken(header)).toBe(token);
  });
});
