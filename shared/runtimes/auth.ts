/**
 * Authentication of the HTTP runtime: a bearer token (Knative Trigger → Service with a token from a
 * Secret) or an HMAC-SHA256 signature of the body (`X-Metal3fn-Signature: sha256=<hex>`). Every
 * comparison is constant-time over fixed-length digests, so neither length nor content leaks.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-metal3fn-signature';

export interface AuthOptions {
  /** Accepted bearer tokens (several, so tokens can be rotated without downtime). */
  bearerTokens?: readonly string[] | undefined;
  /** Shared secret for body signatures. */
  hmacSecret?: string | undefined;
}

const digest = (s: string | Buffer): Buffer => createHash('sha256').update(s).digest();

export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

export function signBody(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export function authConfigured(o: AuthOptions): boolean {
  return (o.bearerTokens?.length ?? 0) > 0 || Boolean(o.hmacSecret);
}

/** True when the request carries a valid token or signature. */
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
