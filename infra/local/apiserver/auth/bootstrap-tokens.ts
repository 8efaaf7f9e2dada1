/**
 * Bootstrap tokens (`<id>.<secret>`), the way kubeadm joins nodes: a Secret
 * `kube-system/bootstrap-token-<id>` of type bootstrap.kubernetes.io/token. The authenticator is
 * k8s.io/kubernetes plugin/pkg/auth/authenticator/token/bootstrap (TokenAuthenticator), with the
 * helpers of k8s.io/cluster-bootstrap (token/util ParseToken, secret GetData, GetExpiration,
 * GetGroups, ParseName): every failure is "not mine", so the request ends as 401 "invalid
 * bearer token", never anonymous.
 */
import { timingSafeEqual } from 'node:crypto';
import type { Store } from '../store.ts';
import type { TokenOutcome } from './service-account-tokens.ts';

export const BOOTSTRAP_TOKEN_TYPE = 'bootstrap.kubernetes.io/token';
export const TOKEN_SECRET_PREFIX = 'bootstrap-token-';
export const KUBE_SYSTEM = 'kube-system';
const TOKEN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
const TOKEN_ID = /^[a-z0-9]{6}$/;
const GROUP = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/;
/** time.RFC3339 as Go's time.Parse accepts it (fractional seconds allowed). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const DEFAULT_GROUP = 'system:bootstrappers';

/** bootstrapsecretutil.GetData: a data key decoded, or "" when absent. */
export const secretData = (secret: any, key: string): string => {
  const v = secret?.data?.[key];
  return typeof v === 'string' ? Buffer.from(v, 'base64').toString('utf8') : '';
};

/** bootstrapsecretutil.ParseName: the token id of `bootstrap-token-<id>`. */
export function tokenIdOfSecretName(name: string): string | undefined {
  if (!name.startsWith(TOKEN_SECRET_PREFIX)) return undefined;
  const id = name.slice(TOKEN_SECRET_PREFIX.length);
  return TOKEN_ID.test(id) ? id : undefined;
}

/**
 * bootstrapsecretutil.GetExpiration: no `expiration` → never expires; one that does not parse as
 * RFC 3339 counts as expired; otherwise the time left (≤ 0 is expired).
 */
export function tokenExpiry(secret: any, nowMs: number): { expired: boolean; remainingMs?: number } {
  const exp = secretData(secret, 'expiration');
  if (!exp) return { expired: false };
  const t = RFC3339.test(exp) ? Date.parse(exp) : Number.NaN;
  if (Number.isNaN(t)) return { expired: true };
  const remainingMs = t - nowMs;
  return remainingMs <= 0 ? { expired: true } : { expired: false, remainingMs };
}

/** bootstrapsecretutil.GetGroups: system:bootstrappers plus valid extra groups, sorted; undefined when one is invalid. */
function tokenGroups(secret: any): string[] | undefined {
  const groups = new Set([DEFAULT_GROUP]);
  const extra = secretData(secret, 'auth-extra-groups');
  if (extra) {
    for (const g of extra.split(',')) {
      if (!GROUP.test(g)) return undefined;
      groups.add(g);
    }
  }
  return [...groups].sort();
}

const sameSecret = (a: string, b: string): boolean => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/** TokenAuthenticator.AuthenticateToken over the Secrets in kube-system. */
export function authenticateBootstrapToken(store: Store, token: string, nowMs: number): TokenOutcome {
  const m = TOKEN.exec(token);
  if (!m) return { ok: false };
  const [, id, tokenSecret] = m as unknown as [string, string, string];
  const secret = store.get('/secrets', KUBE_SYSTEM, `${TOKEN_SECRET_PREFIX}${id}`);
  if (!secret || secret.metadata.deletionTimestamp) return { ok: false };
  if (secret.type !== BOOTSTRAP_TOKEN_TYPE || !secret.data) return { ok: false };
  if (!sameSecret(secretData(secret, 'token-secret'), tokenSecret)) return { ok: false };
  if (secretData(secret, 'token-id') !== id) return { ok: false };
  if (tokenExpiry(secret, nowMs).expired) return { ok: false };
  if (secretData(secret, 'usage-bootstrap-authentication') !== 'true') return { ok: false };
  const groups = tokenGroups(secret);
  if (!groups) return { ok: false };
  return { ok: true, user: { user: `system:bootstrap:${id}`, groups }, audiences: [] };
}
