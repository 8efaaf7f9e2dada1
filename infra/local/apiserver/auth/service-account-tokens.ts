/**
 * Service-account tokens as kube-apiserver issues and checks them (k8s.io/kubernetes
 * pkg/serviceaccount: jwt.go JWTTokenGenerator/JWTTokenAuthenticator, claims.go Claims and
 * validator.Validate): RS256 JWTs with `kid` = base64url(SHA-256(DER SPKI)), the public claims
 * aud/exp/iat/iss/jti/nbf/sub and the private `kubernetes.io` claim; accepted as bearer tokens
 * when the signature, issuer, audience, times (go-jose's one-minute leeway) and the bound objects
 * (the ServiceAccount's uid, a bound Secret or Node) all hold. The signing key is generated on
 * first use, or read from (and written to) `keyFile` so tokens survive a restart.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPair, type KeyObject } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { compactVerify, exportJWK, SignJWT } from 'jose';
import type { Store } from '../store.ts';
import {
  goQuoteList,
  intersect,
  serviceAccountGroups,
  serviceAccountUsername,
  type UserInfo,
} from './identity.ts';

/** What a token authenticator says: a user, an error (the token is ours but bad), or nothing (not ours). */
export type TokenOutcome =
  | { ok: true; user: UserInfo; audiences: string[] }
  | { ok: false; error?: string | undefined };

export interface BoundObject {
  kind: 'Secret' | 'Node';
  name: string;
  uid: string;
}

export interface TokenClaimsInput {
  namespace: string;
  name: string;
  /** The ServiceAccount's uid (the token dies with that object). */
  uid: string;
  audiences: string[];
  /** iat = nbf = this time (ms since the epoch); exp = it + expirationSeconds. */
  nowMs: number;
  expirationSeconds: number;
  bound?: BoundObject | undefined;
  /** The jti claim (a uuid). */
  jti: string;
}

interface SigningKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
  kid: string;
}

/** jwt.DefaultLeeway of go-jose, which validator.Validate uses for exp, nbf and iat. */
const LEEWAY_MS = 60_000;
export const CREDENTIAL_ID_KEY = 'authentication.kubernetes.io/credential-id';
const NODE_NAME_KEY = 'authentication.kubernetes.io/node-name';
const NODE_UID_KEY = 'authentication.kubernetes.io/node-uid';

const keyId = (publicKey: KeyObject): string =>
  createHash('sha256')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest('base64url');

async function loadOrCreateKey(file: string | undefined): Promise<SigningKey> {
  let privateKey: KeyObject | undefined;
  if (file) {
    const pem = await readFile(file, 'utf8').catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return undefined;
      throw e;
    });
    if (pem) privateKey = createPrivateKey(pem);
  }
  if (!privateKey) {
    ({ privateKey } = await promisify(generateKeyPair)('rsa', { modulusLength: 2048 }));
    if (file)
      await writeFile(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600, flag: 'wx' });
  }
  const publicKey = createPublicKey(privateKey);
  return { privateKey, publicKey, kid: keyId(publicKey) };
}

/** The payload of a JWT without checking it (jwt.go hasCorrectIssuer does this to pick an authenticator). */
function peekPayload(token: string): Record<string, unknown> | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const v = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8'));
    return v && typeof v === 'object' ? v : undefined;
  } catch {
    return undefined;
  }
}

const numeric = (v: unknown): number | undefined => (typeof v === 'number' ? v * 1000 : undefined);

export class ServiceAccountTokens {
  readonly issuer: string;
  /** --api-audiences: defaults to the issuer, as kube-apiserver does. */
  readonly apiAudiences: string[];
  private readonly keyFile: string | undefined;
  private readonly store: Store;
  private keyPromise: Promise<SigningKey> | undefined;

  constructor(opts: { issuer: string; keyFile?: string | undefined; store: Store }) {
    this.issuer = opts.issuer;
    this.apiAudiences = [opts.issuer];
    this.keyFile = opts.keyFile;
    this.store = opts.store;
  }

  private key(): Promise<SigningKey> {
    this.keyPromise ??= loadOrCreateKey(this.keyFile);
    return this.keyPromise;
  }

  /** A signed token with the claims token.Claims builds (keys in the order Go's JSON encoder writes them). */
  async sign(c: TokenClaimsInput): Promise<string> {
    const { privateKey, kid } = await this.key();
    const iat = Math.floor(c.nowMs / 1000);
    const k8s: Record<string, unknown> = { namespace: c.namespace };
    if (c.bound?.kind === 'Node') k8s.node = { name: c.bound.name, uid: c.bound.uid };
    if (c.bound?.kind === 'Secret') k8s.secret = { name: c.bound.name, uid: c.bound.uid };
    k8s.serviceaccount = { name: c.name, uid: c.uid };
    const payload = {
      aud: c.audiences,
      exp: iat + c.expirationSeconds,
      iat,
      iss: this.issuer,
      jti: c.jti,
      'kubernetes.io': k8s,
      nbf: iat,
      sub: serviceAccountUsername(c.namespace, c.name),
    };
    return new SignJWT(payload).setProtectedHeader({ alg: 'RS256', kid }).sign(privateKey);
  }

  /**
   * JWTTokenAuthenticator.AuthenticateToken: not ours (other issuer, not a JWS) → no opinion;
   * ours but invalid → the error the real server records; valid → the ServiceAccount's user.
   */
  async authenticate(token: string, requested: readonly string[], nowMs: number): Promise<TokenOutcome> {
    const peek = peekPayload(token);
    if (!peek || peek.iss !== this.issuer) return { ok: false };
    let claims: Record<string, any>;
    try {
      const { publicKey } = await this.key();
      const { payload } = await compactVerify(token, publicKey, { algorithms: ['RS256'] });
      claims = JSON.parse(new TextDecoder().decode(payload));
    } catch {
      return { ok: false, error: 'go-jose/go-jose: error in cryptographic primitive' };
    }
    const tokenAuds: string[] = Array.isArray(claims.aud)
      ? claims.aud
      : typeof claims.aud === 'string'
        ? [claims.aud]
        : [];
    const auds = intersect(tokenAuds.length ? tokenAuds : this.apiAudiences, requested);
    if (!auds.length)
      return {
        ok: false,
        error: `token audiences ${goQuoteList(tokenAuds.length ? tokenAuds : this.apiAudiences)} is invalid for the target audiences ${goQuoteList(requested)}`,
      };
    const timeError = validateTimes(claims, nowMs);
    if (timeError) return { ok: false, error: timeError };
    return this.validateObjects(claims, auds, nowMs);
  }

  /** The second half of validator.Validate: the ServiceAccount and the bound object still exist, same uid. */
  private validateObjects(claims: Record<string, any>, auds: string[], nowMs: number): TokenOutcome {
    // Objects deleted (deletionTimestamp set) more than the leeway ago no longer back a token.
    const gone = (o: any): boolean =>
      !!o.metadata.deletionTimestamp && Date.parse(o.metadata.deletionTimestamp) < nowMs - LEEWAY_MS;
    const k8s = claims['kubernetes.io'] ?? {};
    const ns: string = k8s.namespace ?? '';
    const saRef = k8s.serviceaccount ?? {};
    const sa = this.store.get('/serviceaccounts', ns, saRef.name ?? '');
    if (!sa) return { ok: false, error: `serviceaccounts "${saRef.name ?? ''}" not found` };
    if (gone(sa)) return { ok: false, error: `service account ${ns}/${saRef.name} has been deleted` };
    if (sa.metadata.uid !== saRef.uid)
      return {
        ok: false,
        error: `service account UID (${sa.metadata.uid}) does not match claim (${saRef.uid})`,
      };
    // A bound Secret or Node must still be there, the same object (validator.Validate).
    const boundError = (
      kind: 'secret' | 'node',
      resource: string,
      bns: string | undefined,
    ): string | undefined => {
      const ref = k8s[kind];
      if (!ref) return undefined;
      const obj = this.store.get(resource, bns, ref.name ?? '');
      if (!obj || gone(obj)) return 'service account token has been invalidated';
      if (obj.metadata.uid !== ref.uid)
        return `${kind} UID (${obj.metadata.uid}) does not match service account ${kind} ref claim (${ref.uid})`;
      return undefined;
    };
    const error = boundError('secret', '/secrets', ns) ?? boundError('node', '/nodes', undefined);
    if (error) return { ok: false, error };
    const extra: Record<string, string[]> = {};
    if (k8s.node) {
      extra[NODE_NAME_KEY] = [k8s.node.name];
      extra[NODE_UID_KEY] = [k8s.node.uid];
    }
    if (typeof claims.jti === 'string' && claims.jti) extra[CREDENTIAL_ID_KEY] = [`JTI=${claims.jti}`];
    return {
      ok: true,
      audiences: auds,
      user: {
        user: serviceAccountUsername(ns, saRef.name),
        uid: saRef.uid,
        groups: serviceAccountGroups(ns),
        ...(Object.keys(extra).length ? { extra } : {}),
      },
    };
  }

  /** /openid/v1/jwks (serviceaccount/openidmetadata.go): the public key as a JWK set. */
  async jwks(): Promise<{ keys: Record<string, unknown>[] }> {
    const { publicKey, kid } = await this.key();
    const { n, e } = await exportJWK(publicKey);
    return { keys: [{ use: 'sig', kty: 'RSA', kid, alg: 'RS256', n, e }] };
  }

  /** /.well-known/openid-configuration (openidmetadata.go openIDMetadata). */
  openidConfiguration(jwksUri: string): Record<string, unknown> {
    return {
      issuer: this.issuer,
      jwks_uri: jwksUri,
      response_types_supported: ['id_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
    };
  }
}

/** go-jose Claims.ValidateWithLeeway(Expected{Time: now}, DefaultLeeway), with validator.Validate's messages. */
function validateTimes(claims: Record<string, unknown>, nowMs: number): string | undefined {
  const nbf = numeric(claims.nbf);
  const exp = numeric(claims.exp);
  const iat = numeric(claims.iat);
  if (nbf !== undefined && nowMs + LEEWAY_MS < nbf) return 'service account token is not valid yet';
  if (exp !== undefined && nowMs - LEEWAY_MS > exp) return 'service account token has expired';
  if (iat !== undefined && nowMs + LEEWAY_MS < iat) return 'service account token is issued in the future';
  return undefined;
}
