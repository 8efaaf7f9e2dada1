/**
 * Knative Eventing's sender identity (`authentication-oidc`), checked as Knative's own receivers
 * check it (knative.dev/eventing pkg/auth verifier): each delivery carries a service-account JWT
 * for the receiver's audience; it is verified against the cluster's issuer, found by OIDC discovery
 * (`<discovery URL>/.well-known/openid-configuration`, by default on the API server, fetched with
 * the cluster's CA and credentials), with the issuer's JWKS (jose's remote key set: cached, fetched
 * again for an unknown `kid` at most once per cooldown), the audience and the times.
 *
 * Outcomes: a verified subject; `refused` (401: no token, bad signature, another issuer, wrong
 * audience, expired); or OidcUnavailableError when the issuer cannot be reached (the runtime
 * answers 503 so the Broker retries instead of dead-lettering a valid delivery).
 */
import { createRemoteJWKSet, customFetch, decodeJwt, errors, type JWTVerifyGetKey, jwtVerify } from 'jose';
import { isRecord, messageOf } from '../api/json.ts';
import type { KubeClient } from '../kube/client.ts';

/** A GET returning status and body (the kube client's `getUrl`, or plain fetch). */
export type UrlGetter = (url: string) => Promise<{ status: number; body: string }>;

export interface OidcOptions {
  /** Where discovery lives: the issuer's base URL (Knative's default is the cluster's API server). */
  discoveryUrl: string;
  /** The audience a delivery's token must name: the receiving Service's (its Trigger's subscriber.audience). */
  audience: string;
  get: UrlGetter;
  /** Clock skew allowed on exp/nbf/iat (default 60 s, go-jose's leeway that kube-apiserver uses). */
  clockToleranceSeconds?: number | undefined;
  /** Least time between two JWKS fetches for unknown key ids (default 30 s). */
  jwksCooldownMs?: number | undefined;
  /** Longest a fetched JWKS is used before it is fetched again (default 10 min). */
  jwksMaxAgeMs?: number | undefined;
}

export type OidcOutcome = { ok: true; subject: string } | { ok: false; reason: string };

export class OidcUnavailableError extends Error {
  override readonly name = 'OidcUnavailableError';
}

interface Provider {
  issuer: string;
  algorithms: string[];
  keys: JWTVerifyGetKey;
}

/** jose's error codes that mean "this token is not acceptable" (the rest: the issuer is unreachable). */
const REFUSALS: ReadonlySet<string> = new Set([
  errors.JWTExpired.code,
  errors.JWTClaimValidationFailed.code,
  errors.JWTInvalid.code,
  errors.JWSInvalid.code,
  errors.JWSSignatureVerificationFailed.code,
  errors.JWKSNoMatchingKey.code,
  errors.JWKSMultipleMatchingKeys.code,
  errors.JOSEAlgNotAllowed.code,
  errors.JOSENotSupported.code,
]);

export class OidcVerifier {
  readonly audience: string;
  private readonly o: OidcOptions;
  private provider: Promise<Provider> | undefined;

  constructor(o: OidcOptions) {
    this.o = o;
    this.audience = o.audience;
  }

  /** Discovery once (again after a failure): the issuer, its algorithms, its remote key set. */
  private discover(): Promise<Provider> {
    this.provider ??= (async () => {
      const url = `${this.o.discoveryUrl.replace(/\/+$/, '')}/.well-known/openid-configuration`;
      const doc = await this.getJson(url, 'OIDC discovery');
      const issuer = doc.issuer;
      const jwksUri = doc.jwks_uri;
      if (typeof issuer !== 'string' || !issuer || typeof jwksUri !== 'string' || !jwksUri)
        throw new OidcUnavailableError(`OIDC discovery at ${url} names no issuer or jwks_uri`);
      const algs = doc.id_token_signing_alg_values_supported;
      const get = this.o.get;
      const keys = createRemoteJWKSet(new URL(jwksUri), {
        cooldownDuration: this.o.jwksCooldownMs ?? 30_000,
        cacheMaxAge: this.o.jwksMaxAgeMs ?? 600_000,
        // Through the same getter as discovery (the cluster's CA and credentials in-cluster).
        [customFetch]: async (u: string) => {
          const r = await get(u);
          return new Response(r.body, { status: r.status });
        },
      });
      return {
        issuer,
        algorithms: Array.isArray(algs) && algs.length ? algs.map(String) : ['RS256'],
        keys,
      };
    })();
    this.provider.catch(() => {
      this.provider = undefined; // try discovery again on the next delivery
    });
    return this.provider;
  }

  private async getJson(url: string, what: string): Promise<Record<string, unknown>> {
    let r: { status: number; body: string };
    try {
      r = await this.o.get(url);
    } catch (e) {
      throw new OidcUnavailableError(`${what} at ${url}: ${messageOf(e)}`);
    }
    if (r.status !== 200) throw new OidcUnavailableError(`${what} at ${url}: HTTP ${r.status}`);
    try {
      const v: unknown = JSON.parse(r.body);
      if (isRecord(v)) return v;
    } catch {
      // reported below
    }
    throw new OidcUnavailableError(`${what} at ${url}: not a JSON object`);
  }

  /** Verifies a bearer token; throws OidcUnavailableError when the issuer cannot be reached. */
  async verify(token: string | undefined): Promise<OidcOutcome> {
    if (!token) return { ok: false, reason: 'no token' };
    let claimed: unknown;
    try {
      claimed = decodeJwt(token).iss;
    } catch {
      return { ok: false, reason: 'not a JWT' };
    }
    const p = await this.discover();
    // Another issuer's token is refused before any key lookup: it cannot make us fetch the JWKS.
    if (claimed !== p.issuer) return { ok: false, reason: 'token from another issuer' };
    try {
      const { payload } = await jwtVerify(token, p.keys, {
        issuer: p.issuer,
        audience: this.o.audience,
        algorithms: p.algorithms,
        clockTolerance: this.o.clockToleranceSeconds ?? 60,
        requiredClaims: ['exp', 'sub'],
      });
      return { ok: true, subject: String(payload.sub) };
    } catch (e) {
      const code = e instanceof errors.JOSEError ? e.code : undefined;
      if (code && REFUSALS.has(code)) return { ok: false, reason: messageOf(e) };
      throw new OidcUnavailableError(`JWKS of ${p.issuer}: ${messageOf(e)}`);
    }
  }
}

/**
 * A verifier for `audience`, discovering at `discoveryUrl` (default: the API server of `client`).
 * Discovery on the API server goes through the kube client (its CA and credentials: the
 * `system:service-account-issuer-discovery` role, bound to every service account by default);
 * another discovery URL is fetched plainly, with the system's CAs.
 */
export function oidcVerifierFor(
  client: KubeClient,
  o: { audience: string; discoveryUrl?: string | undefined } & Partial<OidcOptions>,
): OidcVerifier {
  const server = client.kc.getCurrentCluster()?.server;
  const discoveryUrl = o.discoveryUrl ?? server;
  if (!discoveryUrl) throw new Error('no OIDC discovery URL: the kubeconfig names no cluster');
  const sameOrigin = server !== undefined && new URL(discoveryUrl).origin === new URL(server).origin;
  const plain: UrlGetter = async (url) => {
    const r = await fetch(url, { headers: { accept: 'application/json' }, redirect: 'error' });
    return { status: r.status, body: await r.text() };
  };
  return new OidcVerifier({ ...o, discoveryUrl, get: sameOrigin ? (u) => client.getUrl(u) : plain });
}
