/**
 * The join's tenant side (issue 19, Behaviour 7): the tenant API server's endpoint and CA hash, read
 * from Secret `<vClusterRef>-kubeconfig` (key `value`) in the claim's namespace, and one kubeadm
 * bootstrap token per tenant cluster.
 *
 * The token is kept in a management Secret of a deterministic name per tenant
 * (`<vClusterRef>-vmetal-join-token`, in the claim's namespace): created if absent (two renders
 * racing both read the one that won), rotated by a resourceVersion-checked update once less than
 * half its TTL is left (a node must still join with it after provisioning), and published in the
 * tenant as `kube-system/bootstrap-token-<id>` (create; AlreadyExists of the same token is fine).
 * Old tokens are left to expire (kube-controller-manager's token cleaner deletes them). The
 * token's secret half is never logged or put in a message.
 */
import { createHash, randomInt, X509Certificate } from 'node:crypto';
import type { Secret } from '../api/core.ts';
import { stringOf } from '../api/json.ts';
import { R } from '../api/resources.ts';
import { VMETAL_JOIN_TOKEN_LABEL } from '../api/wellknown.ts';
import type { KubeClient, ObjectReader } from '../kube/client.ts';
import { isAlreadyExists } from '../kube/errors.ts';
import { currentClusterOf } from '../kube/kubeconfig-cluster.ts';
import { optimisticUpdate, SKIP } from '../kube/optimistic.ts';
import { kubeconfigFromSecret, kubeconfigSecretName } from '../kube/workload.ts';
import { TransientError } from '../reconcile/errors.ts';
import { VMetalInputError, VMetalWait } from './errors.ts';
import { joinEndpoint } from './join.ts';

export const BOOTSTRAP_TOKEN_TYPE = 'bootstrap.kubernetes.io/token';
/** The group kubeadm's node bootstrap RBAC (CSR creation and auto-approval) is bound to. */
export const KUBEADM_NODE_TOKEN_GROUP = 'system:bootstrappers:kubeadm:default-node-token';

export interface BootstrapToken {
  id: string;
  secret: string;
  /** RFC 3339, seconds. */
  expiration: string;
}

export const tokenString = (t: BootstrapToken): string => `${t.id}.${t.secret}`;
export const joinTokenSecretName = (vcluster: string): string => `${vcluster}-vmetal-join-token`;
export const tenantTokenSecretName = (id: string): string => `bootstrap-token-${id}`;

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const randomText = (n: number): string => Array.from({ length: n }, () => ALPHABET[randomInt(36)]).join('');
const rfc3339 = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/** A fresh token (`[a-z0-9]{6}.[a-z0-9]{16}`, crypto random) expiring `ttlSeconds` after `now`. */
export function newBootstrapToken(now: Date, ttlSeconds: number): BootstrapToken {
  return {
    id: randomText(6),
    secret: randomText(16),
    expiration: rfc3339(new Date(now.getTime() + ttlSeconds * 1000)),
  };
}

/** Whether a token should be replaced: unreadable, or less than half its TTL left. */
export function tokenNeedsRotation(t: BootstrapToken | undefined, now: Date, ttlSeconds: number): boolean {
  if (!t) return true;
  const expires = Date.parse(t.expiration);
  return !Number.isFinite(expires) || expires - now.getTime() < (ttlSeconds * 1000) / 2;
}

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const dataOf = (s: Secret, key: string): string | undefined => {
  const v = stringOf(s.data?.[key]);
  return v === undefined ? undefined : Buffer.from(v, 'base64').toString('utf8');
};

/** The token a management (or tenant) Secret holds; undefined when a key is missing or malformed. */
export function tokenOfSecret(s: Secret | undefined): BootstrapToken | undefined {
  if (!s) return undefined;
  const id = dataOf(s, 'token-id');
  const secret = dataOf(s, 'token-secret');
  const expiration = dataOf(s, 'expiration');
  if (!id || !secret || !expiration || !/^[a-z0-9]{6}$/.test(id) || !/^[a-z0-9]{16}$/.test(secret))
    return undefined;
  return { id, secret, expiration };
}

function tokenData(t: BootstrapToken): Record<string, string> {
  return { 'token-id': b64(t.id), 'token-secret': b64(t.secret), expiration: b64(t.expiration) };
}

/** The management Secret keeping the tenant's current token. */
export function managementTokenSecret(namespace: string, vcluster: string, t: BootstrapToken): Secret {
  return {
    metadata: {
      name: joinTokenSecretName(vcluster),
      namespace,
      labels: { [VMETAL_JOIN_TOKEN_LABEL]: vcluster },
    },
    type: 'Opaque',
    data: tokenData(t),
  };
}

/** The tenant's `kube-system/bootstrap-token-<id>`, as `kubeadm token create` writes it. */
export function tenantTokenSecret(vcluster: string, t: BootstrapToken): Secret {
  return {
    metadata: {
      name: tenantTokenSecretName(t.id),
      namespace: 'kube-system',
      labels: { [VMETAL_JOIN_TOKEN_LABEL]: vcluster },
    },
    type: BOOTSTRAP_TOKEN_TYPE,
    data: {
      ...tokenData(t),
      description: b64('vMetal NodeClaim join token (metal3-functions)'),
      'usage-bootstrap-authentication': b64('true'),
      'usage-bootstrap-signing': b64('true'),
      'auth-extra-groups': b64(KUBEADM_NODE_TOKEN_GROUP),
    },
  };
}

/** kubeadm's `--discovery-token-ca-cert-hash`: sha256 of the CA certificate's SubjectPublicKeyInfo (DER). */
export function caCertHash(caPem: string): string {
  const spki = new X509Certificate(caPem).publicKey.export({ type: 'spki', format: 'der' });
  return `sha256:${createHash('sha256').update(spki).digest('hex')}`;
}

export interface TenantTarget {
  /** `host:port` for kubeadm. */
  endpoint: string;
  caCertHash: string;
}

/**
 * The tenant's endpoint and CA hash from its kubeconfig Secret (a wait while the Secret or its key
 * is missing). Without `certificate-authority-data` (a server certificate from a public CA) the
 * cluster CA is read from the tenant's `kube-system/kube-root-ca.crt`.
 */
export async function tenantTarget(
  client: ObjectReader,
  tenant: () => Promise<ObjectReader>,
  namespace: string,
  vcluster: string,
): Promise<TenantTarget> {
  const secretName = kubeconfigSecretName(vcluster);
  const field = `Secret ${namespace}/${secretName} data.value`;
  let text: string;
  try {
    text = kubeconfigFromSecret(await client.get(R.Secret, namespace, secretName), namespace, vcluster);
  } catch (e) {
    if (!(e instanceof TransientError)) throw e;
    throw new VMetalWait('TenantClusterNotFound', `${e.message} (spec.vClusterRef)`, {
      kind: 'Secret',
      namespace,
      name: secretName,
    });
  }
  let cluster: ReturnType<typeof currentClusterOf>;
  try {
    cluster = currentClusterOf(text);
  } catch (e) {
    throw new VMetalInputError(
      field,
      `is not a usable kubeconfig: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
  const endpoint = joinEndpoint(cluster.server, `${field} server`);
  let caPem = cluster.caPem;
  if (!caPem) {
    const root = await (await tenant()).get(R.ConfigMap, 'kube-system', 'kube-root-ca.crt');
    caPem = stringOf(root?.data?.['ca.crt']);
    if (!caPem)
      throw new VMetalInputError(
        field,
        'has no certificate-authority-data and the tenant has no kube-root-ca.crt',
      );
  }
  try {
    return { endpoint, caCertHash: caCertHash(caPem) };
  } catch (e) {
    throw new VMetalInputError(
      `${field} certificate-authority-data`,
      `is not a PEM certificate: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
}

/**
 * The tenant's current join token, created or rotated as needed, and present in the tenant.
 * `tenant` gives the tenant's client (its kubeconfig Secret).
 */
export async function ensureJoinToken(
  client: KubeClient,
  tenant: () => Promise<KubeClient>,
  opts: { namespace: string; vcluster: string; now: Date; ttlSeconds: number },
): Promise<BootstrapToken> {
  const { namespace, vcluster, now, ttlSeconds } = opts;
  const name = joinTokenSecretName(vcluster);
  let current = await client.get(R.Secret, namespace, name);
  if (!current) {
    try {
      current = await client.create(
        R.Secret,
        managementTokenSecret(namespace, vcluster, newBootstrapToken(now, ttlSeconds)),
      );
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
      current = await client.get(R.Secret, namespace, name);
      if (!current) throw new TransientError(`Secret ${namespace}/${name} was deleted while being created`);
    }
  }
  let token = tokenOfSecret(current);
  if (!token || tokenNeedsRotation(token, now, ttlSeconds)) {
    // On each fresh copy: a concurrent render that rotated first wins, and its token is used.
    const res = await optimisticUpdate(
      client,
      R.Secret,
      namespace,
      name,
      (s) => {
        if (!tokenNeedsRotation(tokenOfSecret(s), now, ttlSeconds)) return SKIP;
        s.data = { ...(s.data ?? {}), ...tokenData(newBootstrapToken(now, ttlSeconds)) };
      },
      { current },
    );
    if (res.outcome === 'gone') throw new TransientError(`Secret ${namespace}/${name} was deleted meanwhile`);
    token = tokenOfSecret(res.object);
    if (!token) throw new TransientError(`Secret ${namespace}/${name} holds no usable token after rotation`);
  }
  await publishTenantToken(await tenant(), vcluster, token);
  return token;
}

/**
 * Makes sure the tenant has the bootstrap-token Secret; one of that id with another secret is an
 * error (never overwritten). Read first: every render of the tenant's claims uses the same token,
 * and a create of one that exists is a 409 (99 of 100 renders in the claims bench, ADR 025).
 */
async function publishTenantToken(
  tenant: KubeClient,
  vcluster: string,
  token: BootstrapToken,
): Promise<void> {
  const name = tenantTokenSecretName(token.id);
  const check = (s: Secret | undefined) => {
    if (tokenOfSecret(s)?.secret !== token.secret)
      throw new TransientError(`tenant ${vcluster}: kube-system/${name} exists and is not vMetal's token`);
  };
  const present = await tenant.get(R.Secret, 'kube-system', name);
  if (present) return check(present);
  try {
    await tenant.create(R.Secret, tenantTokenSecret(vcluster, token));
  } catch (e) {
    if (!isAlreadyExists(e)) throw e;
    check(await tenant.get(R.Secret, 'kube-system', name));
  }
}
