/**
 * Credentials the server issues or recognises: ServiceAccount tokens from the TokenRequest API,
 * their OIDC discovery, and bootstrap tokens with kubeadm's cluster-info. Driven with kubectl
 * (`create token`, `auth whoami`) and with raw HTTPS as a relying party or `kubeadm join` reads.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { compactVerify, createLocalJWKSet, jwtVerify } from 'jose';
import { expect } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { R } from '../../../shared/api/resources.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { kubectl, kubectlExit } from '../../helpers/kubectl.ts';
import { eventually } from '../fixtures.ts';
import {
  ClusterRoleBinding,
  decodeJwt,
  randomToken,
  raw,
  ServiceAccount,
  serviceAccountWithToken,
  tokenKubeconfig,
} from '../identity.ts';
import type { CaseContext, ConformanceCase } from '../suite.ts';

const SA_GROUPS = (ns: string) => [
  'system:serviceaccounts',
  `system:serviceaccounts:${ns}`,
  'system:authenticated',
];
const UNAUTHORIZED = 'error: You must be logged in to the server (Unauthorized)';
/** A real server caches successful token authentications for 10 s (tokencache), so revocation is polled for. */
const REVOCATION_MS = 20_000;

async function whoami(kc: KubeClient, token: string): Promise<{ code: number; user?: any; stderr: string }> {
  const r = await kubectlExit(tokenKubeconfig(kc.kc, token), ['auth', 'whoami', '-o', 'json']);
  return {
    code: r.code,
    stderr: r.stderr,
    ...(r.code === 0 ? { user: JSON.parse(r.stdout).status.userInfo } : {}),
  };
}

const bootstrapSecret = (id: string, secret: string, data: Record<string, string>) => ({
  metadata: { name: `bootstrap-token-${id}`, namespace: 'kube-system' },
  type: 'bootstrap.kubernetes.io/token',
  stringData: { 'token-id': id, 'token-secret': secret, ...data },
});

/** A bootstrap token that exists only for the duration of `fn` (kube-system is shared: always deleted). */
async function withBootstrapToken(
  { client, now }: Pick<CaseContext, 'client' | 'now'>,
  data: Record<string, string>,
  fn: (id: string, secret: string) => Promise<void>,
  secret = randomToken(16),
): Promise<void> {
  const id = randomToken(6);
  const soon = new Date(now() + 15 * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  await client.create(R.Secret, bootstrapSecret(id, secret, { expiration: soon, ...data }));
  try {
    await fn(id, secret);
  } finally {
    await client.delete(R.Secret, 'kube-system', `bootstrap-token-${id}`).catch(() => undefined);
  }
}

export const AUTH_TOKEN_CASES: ConformanceCase[] = [
  {
    // pkg/registry/core/serviceaccount/storage/token.go TokenREST.Create; pkg/serviceaccount/claims.go
    // Claims; jwt.go JWTTokenGenerator; SelfSubjectReview (pkg/registry/authentication/selfsubjectreview).
    name: 'kubectl create token: an RS256 JWT with the requested audience and duration, accepted as the ServiceAccount',
    requires: ['kubectl'],
    async run({ client, kubeconfigPath, ns }) {
      const sa = await client.create<any>(ServiceAccount, { metadata: { name: 'robot', namespace: ns } });
      const token = (
        await kubectl(kubeconfigPath, ['create', 'token', 'robot', '-n', ns, '--duration', '20m'])
      ).trim();
      const { header, claims } = decodeJwt(token);
      expect(header).toMatchObject({ alg: 'RS256' });
      expect(typeof header.kid).toBe('string');
      expect(claims).toMatchObject({
        sub: `system:serviceaccount:${ns}:robot`,
        'kubernetes.io': { namespace: ns, serviceaccount: { name: 'robot', uid: sa.metadata.uid } },
      });
      expect(claims.exp - claims.iat).toBe(1200);
      expect(claims.nbf).toBe(claims.iat);
      expect(Array.isArray(claims.aud) && claims.aud.length > 0).toBe(true);
      expect(typeof claims.jti).toBe('string');
      expect(Object.keys(claims).sort()).toEqual([
        'aud',
        'exp',
        'iat',
        'iss',
        'jti',
        'kubernetes.io',
        'nbf',
        'sub',
      ]);

      const me = await whoami(client, token);
      expect(me.user).toEqual({
        username: `system:serviceaccount:${ns}:robot`,
        uid: sa.metadata.uid,
        groups: SA_GROUPS(ns),
        extra: { 'authentication.kubernetes.io/credential-id': [`JTI=${claims.jti}`] },
      });

      const other = (
        await kubectl(kubeconfigPath, ['create', 'token', 'robot', '-n', ns, '--audience', 'vault'])
      ).trim();
      const oc = decodeJwt(other).claims;
      expect(oc.aud).toEqual(['vault']);
      expect(oc.exp - oc.iat).toBe(3600);
    },
  },
  {
    // jwt.go JWTTokenAuthenticator.AuthenticateToken (audiences), claims.go validator.Validate
    // (the ServiceAccount and the bound Secret still exist with the token's uids);
    // pkg/registry/authentication/tokenreview.
    name: 'a token for another audience, of a deleted or recreated ServiceAccount, or bound to a deleted Secret or Node is refused',
    requires: ['kubectl'],
    async run({ client, kubeconfigPath, ns }) {
      await client.create(ServiceAccount, { metadata: { name: 'robot', namespace: ns } });
      const vault = (
        await kubectl(kubeconfigPath, ['create', 'token', 'robot', '-n', ns, '--audience', 'vault'])
      ).trim();
      const refused = await whoami(client, vault);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain(UNAUTHORIZED);
      // Its own audience accepts it, through TokenReview; the API server's audience does not.
      const review = async (token: string, audiences?: string[]) => {
        const r = await raw(client.kc, {
          method: 'POST',
          path: '/apis/authentication.k8s.io/v1/tokenreviews',
          body: {
            apiVersion: 'authentication.k8s.io/v1',
            kind: 'TokenReview',
            spec: { token, ...(audiences ? { audiences } : {}) },
          },
        });
        expect(r.status).toBe(201);
        return r.json().status;
      };
      expect(await review(vault, ['vault'])).toMatchObject({
        authenticated: true,
        audiences: ['vault'],
        user: { username: `system:serviceaccount:${ns}:robot`, groups: SA_GROUPS(ns) },
      });
      const wrongAud = await review(vault);
      expect(wrongAud.authenticated).toBeUndefined();
      expect(wrongAud.error).toMatch(
        /^token audiences \["vault"\] is invalid for the target audiences \[".+"\]$/,
      );

      await client.create(R.Secret, { metadata: { name: 'anchor', namespace: ns }, stringData: { a: 'b' } });
      const bound = (
        await kubectl(kubeconfigPath, [
          'create',
          'token',
          'robot',
          '-n',
          ns,
          '--bound-object-kind',
          'Secret',
          '--bound-object-name',
          'anchor',
        ])
      ).trim();
      const anchor = await client.get<any>(R.Secret, ns, 'anchor');
      expect(decodeJwt(bound).claims['kubernetes.io'].secret).toEqual({
        name: 'anchor',
        uid: anchor.metadata.uid,
      });
      expect((await whoami(client, bound)).user?.username).toBe(`system:serviceaccount:${ns}:robot`);
      await client.delete(R.Secret, ns, 'anchor');
      await eventually(
        async () => (await whoami(client, bound)).code !== 0,
        'bound token refused',
        REVOCATION_MS,
      );

      const mismatch = await kubectlExit(kubeconfigPath, [
        ...['create', 'token', 'robot', '-n', ns, '--bound-object-kind', 'Secret'],
        ...['--bound-object-name', 'gone', '--bound-object-uid', 'wrong'],
      ]);
      expect(mismatch.stderr.trim()).toBe('error: failed to create token: secrets "gone" not found');

      // Bound to a Node (ServiceAccountTokenNodeBinding, on by default since 1.31): the user names it.
      const nodeName = `${ns}-node`;
      const node = await client.create<any>(R.Node, { metadata: { name: nodeName } });
      try {
        const conflict = await kubectlExit(kubeconfigPath, [
          ...['create', 'token', 'robot', '-n', ns, '--bound-object-kind', 'Node'],
          ...['--bound-object-name', nodeName, '--bound-object-uid', 'not-the-uid'],
        ]);
        expect(conflict.stderr.trim()).toBe(
          `error: failed to create token: Operation cannot be fulfilled on Node "${nodeName}": the UID in the bound object reference (not-the-uid) does not match the UID in record. The object might have been deleted and then recreated`,
        );
        const onNode = (
          await kubectl(kubeconfigPath, [
            ...['create', 'token', 'robot', '-n', ns],
            ...['--bound-object-kind', 'Node', '--bound-object-name', nodeName],
          ])
        ).trim();
        const nodeClaims = decodeJwt(onNode).claims;
        expect(nodeClaims['kubernetes.io'].node).toEqual({ name: nodeName, uid: node.metadata.uid });
        expect((await whoami(client, onNode)).user?.extra).toEqual({
          'authentication.kubernetes.io/credential-id': [`JTI=${nodeClaims.jti}`],
          'authentication.kubernetes.io/node-name': [nodeName],
          'authentication.kubernetes.io/node-uid': [node.metadata.uid],
        });
        await client.delete(R.Node, undefined, nodeName);
        await eventually(
          async () => (await whoami(client, onNode)).code !== 0,
          'node-bound token refused',
          REVOCATION_MS,
        );
      } finally {
        await client.delete(R.Node, undefined, nodeName).catch(() => undefined);
      }

      const plain = (await kubectl(kubeconfigPath, ['create', 'token', 'robot', '-n', ns])).trim();
      expect((await whoami(client, plain)).code).toBe(0);
      await client.delete(ServiceAccount, ns, 'robot');
      await client.create(ServiceAccount, { metadata: { name: 'robot', namespace: ns } });
      await eventually(
        async () => (await whoami(client, plain)).code !== 0,
        'token of the deleted account refused',
        REVOCATION_MS,
      );
      expect((await whoami(client, plain)).stderr).toContain(UNAUTHORIZED);
    },
  },
  {
    // token.go TokenREST.Create; pkg/apis/authentication/validation ValidateTokenRequest.
    name: 'kubectl create token refuses under 10 minutes (422), an unknown ServiceAccount (404), a bound kind it cannot bind (400)',
    requires: ['kubectl'],
    async run({ client, kubeconfigPath, ns }) {
      await client.create(ServiceAccount, { metadata: { name: 'robot', namespace: ns } });
      const short = await kubectlExit(kubeconfigPath, [
        'create',
        'token',
        'robot',
        '-n',
        ns,
        '--duration',
        '1m',
      ]);
      expect(short.code).not.toBe(0);
      expect(short.stderr.trim()).toBe(
        'error: failed to create token: TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes',
      );
      const missing = await kubectlExit(kubeconfigPath, ['create', 'token', 'nobody', '-n', ns]);
      expect(missing.stderr.trim()).toBe('error: failed to create token: serviceaccounts "nobody" not found');
      const r = await raw(client.kc, {
        method: 'POST',
        path: `/api/v1/namespaces/${ns}/serviceaccounts/robot/token`,
        body: {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenRequest',
          spec: { boundObjectRef: { kind: 'ConfigMap', apiVersion: 'v1', name: 'x' } },
        },
      });
      expect(r.status).toBe(400);
      expect(r.json().message).toBe('cannot bind token to object of type /v1, Kind=ConfigMap');
      const get = await raw(client.kc, { path: `/api/v1/namespaces/${ns}/serviceaccounts/robot/token` });
      expect(get.status).toBe(405);
    },
  },
  {
    // go-jose Claims.ValidateWithLeeway (DefaultLeeway = 1 minute) as claims.go validator.Validate uses it.
    name: 'an expired or not-yet-valid ServiceAccount token is refused, within one minute of leeway',
    embeddedOnly:
      'the API refuses to issue tokens shorter than 10 minutes; the server hook signs one with past times',
    async run({ client, embedded, ns, now }) {
      await client.create(ServiceAccount, { metadata: { name: 'robot', namespace: ns } });
      const at = (secondsAgo: number) =>
        embedded!.auth.serviceAccountToken(ns, 'robot', {
          issuedAt: new Date(now() - secondsAgo * 1000),
          expirationSeconds: 600,
        });
      const review = async (token: string) =>
        (
          await raw(client.kc, {
            method: 'POST',
            path: '/apis/authentication.k8s.io/v1/tokenreviews',
            body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
          })
        ).json().status;
      expect((await review(await at(600 + 30))).authenticated).toBe(true);
      expect(await review(await at(600 + 90))).toEqual({
        user: {},
        error: 'service account token has expired',
      });
      expect(await review(await at(-120))).toEqual({
        user: {},
        error: 'service account token is not valid yet',
      });
      expect((await whoami(client, await at(600 + 90))).stderr).toContain(UNAUTHORIZED);
    },
  },
  {
    // pkg/serviceaccount/openidmetadata.go, pkg/routes/openidmetadata.go; the ClusterRole and
    // ClusterRoleBinding system:service-account-issuer-discovery of bootstrappolicy/policy.go.
    name: 'OIDC discovery and JWKS verify the tokens; anonymous reads them only once system:unauthenticated is bound',
    async run({ client, ns, now }) {
      const { token } = await serviceAccountWithToken(client, ns, 'robot');
      const { header, claims } = decodeJwt(token);
      const asSa = { token };
      const disc = await raw(client.kc, { path: '/.well-known/openid-configuration', as: asSa });
      expect(disc.status).toBe(200);
      expect(disc.headers['content-type']).toBe('application/json');
      expect(disc.headers['cache-control']).toBe('public, max-age=3600');
      const doc = disc.json();
      expect(doc).toEqual({
        issuer: claims.iss,
        jwks_uri: expect.stringMatching(/^https:\/\/.+\/openid\/v1\/jwks$/),
        response_types_supported: ['id_token'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
      });
      const jwks = await raw(client.kc, { path: '/openid/v1/jwks', as: asSa });
      expect(jwks.status).toBe(200);
      expect(jwks.headers['content-type']).toBe('application/jwk-set+json');
      const set = jwks.json();
      expect(set.keys.find((k: any) => k.kid === header.kid)).toMatchObject({
        use: 'sig',
        kty: 'RSA',
        alg: 'RS256',
        e: 'AQAB',
      });
      // What a relying party does: the signature, issuer and audience check out with the published keys.
      const verified = await jwtVerify(token, createLocalJWKSet(set), {
        issuer: doc.issuer,
        audience: claims.aud[0],
        currentDate: new Date(now()),
      });
      expect(verified.payload.sub).toBe(`system:serviceaccount:${ns}:robot`);

      const anon = await raw(client.kc, { path: '/.well-known/openid-configuration', as: 'anonymous' });
      expect(anon.status).toBe(403);
      expect(anon.json().message).toBe(
        'forbidden: User "system:anonymous" cannot get path "/.well-known/openid-configuration"',
      );
      const binding = `${ns}-oidc-public`;
      await client.create(ClusterRoleBinding, {
        metadata: { name: binding },
        roleRef: {
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'ClusterRole',
          name: 'system:service-account-issuer-discovery',
        },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:unauthenticated' }],
      });
      try {
        await eventually(
          async () => (await raw(client.kc, { path: '/openid/v1/jwks', as: 'anonymous' })).status === 200,
          'anonymous JWKS once bound',
          REVOCATION_MS,
        );
      } finally {
        await client.delete(ClusterRoleBinding, undefined, binding);
      }
    },
  },
  {
    // plugin/pkg/auth/authenticator/token/bootstrap/bootstrap.go TokenAuthenticator.AuthenticateToken;
    // k8s.io/cluster-bootstrap secret.GetGroups / GetExpiration / ParseName.
    name: 'bootstrap tokens authenticate as system:bootstrap:<id>; a wrong secret, expiry, no auth usage or a bad group is 401',
    requires: ['kubectl'],
    async run({ client, now }) {
      const extra = 'system:bootstrappers:conformance:nodes';
      await withBootstrapToken(
        { client, now },
        { 'usage-bootstrap-authentication': 'true', 'auth-extra-groups': extra },
        async (id, secret) => {
          const me = await whoami(client, `${id}.${secret}`);
          expect(me.user).toEqual({
            username: `system:bootstrap:${id}`,
            groups: ['system:bootstrappers', extra, 'system:authenticated'],
          });
          const wrong = await whoami(client, `${id}.${randomToken(16)}`);
          expect(wrong.stderr).toContain(UNAUTHORIZED);
        },
      );
      const refusedWith = async (data: Record<string, string>) =>
        withBootstrapToken({ client, now }, data, async (id, secret) => {
          const r = await raw(client.kc, {
            method: 'POST',
            path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
            as: { token: `${id}.${secret}` },
            body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
          });
          expect(r.status, JSON.stringify(data)).toBe(401);
          expect(r.json()).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
        });
      await refusedWith({ 'usage-bootstrap-authentication': 'true', expiration: '2020-01-01T00:00:00Z' });
      await refusedWith({ 'usage-bootstrap-signing': 'true' });
      await refusedWith({
        'usage-bootstrap-authentication': 'true',
        'auth-extra-groups': 'system:bootstrappers:Bad',
      });
      await refusedWith({ 'usage-bootstrap-authentication': 'true', 'auth-extra-groups': 'kubeadm:nodes' });
    },
  },
  {
    // cmd/kubeadm/app/phases/bootstraptoken/clusterinfo (cluster-info, its anonymous Role);
    // pkg/controller/bootstrap/bootstrapsigner.go Signer.signConfigMap with cluster-bootstrap
    // token/jws ComputeDetachedSignature; cmd/kubeadm/app/util/pubkeypin (the CA hash).
    name: 'cluster-info is public and signed (jws-kubeconfig-<id>) for signing tokens only while they exist; the CA pin',
    async run({ client, embedded, now }) {
      const read = async () => {
        const r = await raw(client.kc, {
          path: '/api/v1/namespaces/kube-public/configmaps/cluster-info',
          as: 'anonymous',
        });
        expect(r.status).toBe(200);
        return r.json().data as Record<string, string>;
      };
      const kubeconfig = (await read()).kubeconfig!;
      const cluster = parseYaml(kubeconfig).clusters[0].cluster;
      expect(cluster.server).toMatch(/^https:\/\//);
      const caPem = Buffer.from(cluster['certificate-authority-data'], 'base64').toString('utf8');
      // kubeadm's documented recipe for --discovery-token-ca-cert-hash.
      const spki = execFileSync('openssl', ['pkey', '-pubin', '-outform', 'der'], {
        input: execFileSync('openssl', ['x509', '-pubkey', '-noout'], { input: caPem }),
      });
      const pin = `sha256:${createHash('sha256').update(spki).digest('hex')}`;
      if (embedded) expect(embedded.auth.caCertHash()).toBe(pin);

      const signatures = async () => Object.keys(await read()).filter((k) => k.startsWith('jws-kubeconfig-'));
      // A token without usage-bootstrap-signing first, then one with it: when the signer has
      // signed for the second, it has seen the first and left it out.
      await withBootstrapToken(
        { client, now },
        { 'usage-bootstrap-authentication': 'true' },
        async (authOnly) => {
          let signer = '';
          await withBootstrapToken(
            { client, now },
            { 'usage-bootstrap-signing': 'true' },
            async (id, secret) => {
              signer = id;
              const key = `jws-kubeconfig-${id}`;
              const sig = (await eventually(
                async () => (await read())[key],
                `${key} written`,
                REVOCATION_MS,
              ))!;
              expect(await signatures()).not.toContain(`jws-kubeconfig-${authOnly}`);
              const [head, empty, mac] = sig.split('.');
              expect(empty).toBe('');
              // The exact header kubeadm's own recomputation produces (it compares strings).
              expect(Buffer.from(head!, 'base64url').toString()).toBe(
                JSON.stringify({ alg: 'HS256', kid: id }),
              );
              const jws = `${head}.${Buffer.from(kubeconfig).toString('base64url')}.${mac}`;
              const { payload } = await compactVerify(jws, new TextEncoder().encode(secret), {
                algorithms: ['HS256'],
              });
              expect(new TextDecoder().decode(payload)).toBe(kubeconfig);
            },
          );
          await eventually(
            async () => !(await signatures()).includes(`jws-kubeconfig-${signer}`),
            'the signature removed with its token',
            REVOCATION_MS,
          );
        },
      );
    },
  },
];
