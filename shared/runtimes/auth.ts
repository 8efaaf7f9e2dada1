/**
 * Authentication of the HTTP runtime: Knative's OIDC sender identity (a service-account JWT for
 * the Service's audience, ./oidc.ts), a static bearer token (direct callers, from a Secret), or an
 * HMAC-SHA256 signature of the body (`X-Metal3fn-Signature: sha256=<hex>`). Every static
 * comparison is constant-time over fixed-length digests, so neither length nor content leaks.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { OidcUnavailableError, type OidcVerifier } from './oidc.ts';

export const SIGNATURE_HEADER = 'x-metal3fn-signature';

export interface AuthOptions {
  /** Accepted bearer tokens (several, so tokens can be rotated without downtime). */
  bearerTokens?: readonly string[] | undefined;
  /** Shared secret for body signatures. */
  hmacSecret?: string | undefined;
  /** Knative's OIDC sender identity: bearer JWTs for this verifier's audience. */
  oidc?: OidcVerifier | undefined;
}

const digest = (s: string | Buffer): Buffer => createHash('sha256').update(s).digest();

export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

export function signBody(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export function authConfigured(o: AuthOptions): boolean {
  return (o.bearerTokens?.length ?? 0) > 0 || Boolean(o.hmacSecret) || Boolean(o.oidc);
}

/** True when the request carries a valid static token or signature. */
export function authenticate(o: AuthOptions, headers: Headers, body: string): boolean {
  const authz = headers.get('authorization') ?? '';
  if (authz.startsWith('Bearer ') && o.bearerTokens?.length) {
    const given = authz.slice('Bearer '.length).trim();
    // Compare against every token (no early exit): timing does not reveal which one matched.
    let ok = false;
    for (const t of o.bearerTokens) ok = safeEqual(given, t) || ok;
    if (ok) return true;
  }
  const sig = headers.get(SIGNATURE_HEADER);
  if (sig && o.hmacSecret) return safeEqual(sig, signBody(o.hmacSecret, body));
  return false;
}

export type AuthVerdict = { ok: true } | { ok: false; status: 401 | 503; error: string };

/**
 * The request's verdict: a valid static token or signature, else a valid OIDC token; 401 when none
 * holds, 503 when the OIDC issuer cannot be reached (the sender retries).
 */
export async function verifyRequest(o: AuthOptions, headers: Headers, body: string): Promise<AuthVerdict> {
  if (authenticate(o, headers, body)) return { ok: true };
  if (!o.oidc) return { ok: false, status: 401, error: 'unauthenticated' };
  const authz = headers.get('authorization') ?? '';
  const token = authz.startsWith('Bearer ') ? authz.slice('Bearer '.length).trim() : undefined;
  try {
    const r = await o.oidc.verify(token);
    return r.ok ? { ok: true } : { ok: false, status: 401, error: `unauthenticated: ${r.reason}` };
  } catch (e) {
    if (e instanceof OidcUnavailableError) return { ok: false, status: 503, error: e.message };
    throw e;
  }
}
