/**
 * What `kubeadm join <endpoint> --token <id>.<secret> --discovery-token-ca-cert-hash sha256:<h>`
 * does before the kubelet registers (the kubelet simulator's part; test and dev only), against the
 * tenant's API server:
 *
 * 1. token discovery: an anonymous GET of `kube-public/cluster-info` over TLS without trusting the
 *    server yet; the detached JWS `jws-kubeconfig-<id>` must be the HS256 signature of its
 *    kubeconfig under the token secret (cluster-bootstrap's jws), and the kubeconfig's CA must
 *    match the pinned public-key hash (kubeadm's pubkeypin). Written here, not borrowed from the
 *    server's signer, so a signer bug shows as a failed join.
 * 2. TLS bootstrap: the token is used as a bearer credential against the now trusted server; a
 *    wrong, unknown or expired token is a 401 there. (A real kubelet then creates a CSR; the
 *    embedded server serves no certificates.k8s.io, see ADR 018 "The join in local runs".)
 *
 * Every failure is a `JoinRefused` naming the step: the node does not join.
 */
import { createHash, createHmac, timingSafeEqual, X509Certificate } from 'node:crypto';
import { parse } from 'yaml';
import type { ConfigMap } from '../../../shared/api/core.ts';
import { type KubeObject, KubeObjectSchema } from '../../../shared/api/meta.ts';
import { apiVersionOf, R, type Resource, view } from '../../../shared/api/resources.ts';
import { KubeClient } from '../../../shared/kube/client.ts';
import type { ParsedJoin } from '../../../shared/vmetal/join.ts';

export class JoinRefused extends Error {
  override readonly name = 'JoinRefused';
}

const SELF_SUBJECT_REVIEW: Resource = view(
  Object.freeze({
    group: 'authentication.k8s.io',
    version: 'v1',
    kind: 'SelfSubjectReview',
    plural: 'selfsubjectreviews',
    namespaced: false,
    statusSubresource: false,
  }),
  KubeObjectSchema,
);

const kubeconfigYaml = (server: string, auth: { ca?: string; token?: string }): string =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'tenant',
        cluster: {
          server,
          ...(auth.ca
            ? { 'certificate-authority-data': Buffer.from(auth.ca).toString('base64') }
            : { 'insecure-skip-tls-verify': true }),
        },
      },
    ],
    users: [{ name: 'u', user: auth.token ? { token: auth.token } : {} }],
    contexts: [{ name: 'x', context: { cluster: 'tenant', user: 'u' } }],
    'current-context': 'x',
  });

const b64url = (s: string): string => Buffer.from(s).toString('base64url');

/** Whether `jws` (`<header>..<signature>`) is the HS256 detached signature of `content` for the token. */
export function verifyDetachedJws(
  jws: string,
  content: string,
  tokenId: string,
  tokenSecret: string,
): boolean {
  const [header, payload, mac, ...rest] = jws.split('.');
  if (header === undefined || payload !== '' || mac === undefined || rest.length > 0) return false;
  let h: unknown;
  try {
    h = JSON.parse(Buffer.from(header, 'base64url').toString('utf8'));
  } catch {
    return false;
  }
  if (!h || typeof h !== 'object' || !('alg' in h) || h.alg !== 'HS256' || !('kid' in h) || h.kid !== tokenId)
    return false;
  const want = createHmac('sha256', tokenSecret)
    .update(`${header}.${b64url(content)}`)
    .digest();
  const got = Buffer.from(mac, 'base64url');
  return got.length === want.length && timingSafeEqual(got, want);
}

/** kubeadm's pubkeypin: sha256 of the certificate's SubjectPublicKeyInfo, hex. */
const spkiHash = (pem: string): string =>
  createHash('sha256')
    .update(new X509Certificate(pem).publicKey.export({ type: 'spki', format: 'der' }))
    .digest('hex');

const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));

export interface Discovered {
  /** The server named in cluster-info (what the kubelet then talks to). */
  server: string;
  ca: string;
}

/** Step 1: token discovery. */
export async function discover(join: ParsedJoin): Promise<Discovered> {
  const [id, secret] = join.token.split('.') as [string, string | undefined];
  if (!secret) throw new JoinRefused('the token is not <id>.<secret>');
  const anonymous = KubeClient.fromString(kubeconfigYaml(`https://${join.endpoint}`, {}));
  let cm: ConfigMap | undefined;
  try {
    cm = await anonymous.get(R.ConfigMap, 'kube-public', 'cluster-info');
  } catch (e) {
    throw new JoinRefused(`cannot read kube-public/cluster-info at ${join.endpoint}: ${errorText(e)}`);
  }
  const data = (cm?.data ?? {}) as Record<string, string>;
  const content = data.kubeconfig;
  if (!content) throw new JoinRefused(`kube-public/cluster-info at ${join.endpoint} has no kubeconfig`);
  const sig = data[`jws-kubeconfig-${id}`];
  if (!sig)
    throw new JoinRefused(
      `cluster-info has no JWS signature for token id ${id} (unknown or expired token, or not a signing token)`,
    );
  if (!verifyDetachedJws(sig, content, id, secret))
    throw new JoinRefused(
      `the cluster-info signature for token id ${id} does not verify with the token secret`,
    );
  const doc = parse(content) as { clusters?: { cluster?: Record<string, string> }[] } | null;
  const cluster = doc?.clusters?.[0]?.cluster;
  const caData = cluster?.['certificate-authority-data'];
  const server = cluster?.server;
  if (!caData || !server) throw new JoinRefused('the cluster-info kubeconfig names no server or CA');
  const ca = Buffer.from(caData, 'base64').toString('utf8');
  const pinned = join.caCertHash.replace(/^sha256:/, '').toLowerCase();
  if (spkiHash(ca) !== pinned)
    throw new JoinRefused(`the cluster CA does not match --discovery-token-ca-cert-hash sha256:${pinned}`);
  return { server, ca };
}

/** Step 2: the token as a credential against the trusted server: the identity it authenticates as. */
export async function authenticateWithToken(
  discovered: Discovered,
  token: string,
): Promise<{ username: string; groups: string[] }> {
  const client = KubeClient.fromString(kubeconfigYaml(discovered.server, { ca: discovered.ca, token }));
  let review: KubeObject;
  try {
    review = await client.create(SELF_SUBJECT_REVIEW, {
      apiVersion: apiVersionOf(SELF_SUBJECT_REVIEW),
      kind: 'SelfSubjectReview',
      metadata: {},
    });
  } catch (e) {
    throw new JoinRefused(`the bootstrap token is refused by ${discovered.server}: ${errorText(e)}`);
  }
  const info = (review.status as { userInfo?: { username?: string; groups?: string[] } } | undefined)
    ?.userInfo;
  const username = info?.username ?? '';
  const groups = info?.groups ?? [];
  if (!username.startsWith('system:bootstrap:') || !groups.includes('system:bootstrappers'))
    throw new JoinRefused(`the token authenticated as ${username || 'nobody'}, not a bootstrap token`);
  return { username, groups };
}

/** Both steps: what a successful `kubeadm join` established before the kubelet registers. */
export async function kubeadmJoin(join: ParsedJoin): Promise<Discovered & { username: string }> {
  const discovered = await discover(join);
  const { username } = await authenticateWithToken(discovered, join.token);
  return { ...discovered, username };
}
