/**
 * Authentication and what hangs on it, wired for one server: the authenticator chain, the
 * impersonation filter, the TokenRequest subresource, the identity reviews, OIDC discovery of
 * the service-account issuer, the default RBAC policy, cluster-info and the bootstrap-token
 * controllers. Authentication always runs; authorization is RBAC when enforced, else AlwaysAllow.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { ServedKind } from '../kinds.ts';
import type { Rbac } from '../rbac.ts';
import type { Rest } from '../rest.ts';
import { accessReview } from '../review.ts';
import type { RequestInfo } from '../server.ts';
import { notFound, unauthorized } from '../status.ts';
import type { StoredEvent } from '../store.ts';
import { Authenticator } from './authenticate.ts';
import { BootstrapControllers } from './bootstrap-controllers.ts';
import { ensureBootstrapPolicy } from './bootstrap-policy.ts';
import { authenticateBootstrapToken } from './bootstrap-tokens.ts';
import { caCertHash, ensureClusterInfo } from './cluster-info.ts';
import type { UserInfo } from './identity.ts';
import { impersonate } from './impersonation.ts';
import { allowAllRules, selfSubjectReview, selfSubjectRulesReview, tokenReview } from './reviews.ts';
import { ServiceAccountTokens } from './service-account-tokens.ts';
import { createTokenRequest } from './token-request.ts';

export { caCertHash } from './cluster-info.ts';
export type { UserInfo } from './identity.ts';

/** What tests and the next issues use: the issuer, its CA, tokens with chosen audiences and times. */
export interface AuthHandle {
  /** The service-account issuer (`iss` of every token) = the server's URL; discovery lives under it (https only). */
  issuer: string;
  /** The audiences the API server itself accepts tokens for (the issuer). */
  apiAudiences: readonly string[];
  /** PEM of the CA that signs the serving certificate (TLS mode only). */
  ca: string | undefined;
  /** `sha256:<hex>` pin of the CA for `kubeadm join --discovery-token-ca-cert-hash` (TLS mode only). */
  caCertHash(): string;
  /**
   * A token for an existing ServiceAccount, signed like TokenRequest's but with any times: a
   * test hook for expired or not-yet-valid tokens, which the API refuses to issue (minimum 10 minutes).
   */
  serviceAccountToken(
    namespace: string,
    name: string,
    opts?: { audiences?: string[]; issuedAt?: Date; expirationSeconds?: number },
  ): Promise<string>;
}

export interface AuthOptions {
  rest: Rest;
  /** Enforced RBAC, or undefined for AlwaysAllow. */
  rbac: Rbac | undefined;
  /** Bearer tokens with fixed identities (the admin token and RbacOptions.tokens). */
  staticTokens: ReadonlyMap<string, UserInfo>;
  /** The server's URL. */
  url: string;
  /** PEM of the serving CA when serving https. */
  ca: string | undefined;
  /** Where the signing key is kept (next to the data file), or undefined for a key per process. */
  keyFile: string | undefined;
}

const JWKS_PATH = '/openid/v1/jwks';
const DISCOVERY_PATH = '/.well-known/openid-configuration';

export class Auth {
  readonly handle: AuthHandle;
  private readonly rest: Rest;
  private readonly rbac: Rbac | undefined;
  private readonly tokens: ServiceAccountTokens;
  private readonly authn: Authenticator;
  private readonly controllers: BootstrapControllers;
  private readonly url: string;
  private readonly ca: string | undefined;

  constructor(o: AuthOptions) {
    this.rest = o.rest;
    this.rbac = o.rbac;
    this.url = o.url;
    this.ca = o.ca;
    const nowMs = () => Date.parse(o.rest.clock.timestamp());
    this.tokens = new ServiceAccountTokens({ issuer: o.url, keyFile: o.keyFile, store: o.rest.store });
    this.authn = new Authenticator({
      staticTokens: o.staticTokens,
      serviceAccounts: this.tokens,
      bootstrap: (token, now) => authenticateBootstrapToken(o.rest.store, token, now),
      nowMs,
    });
    this.controllers = new BootstrapControllers(o.rest, nowMs);
    const ca = o.ca;
    this.handle = {
      issuer: this.tokens.issuer,
      apiAudiences: this.tokens.apiAudiences,
      ca,
      caCertHash: () => {
        if (!ca) throw new Error('the server has no CA: start it with tls: true to pin one');
        return caCertHash(ca);
      },
      serviceAccountToken: (namespace, name, opts = {}) => {
        const sa = o.rest.store.get('/serviceaccounts', namespace, name);
        if (!sa) return Promise.reject(notFound({ plural: 'serviceaccounts', group: '' }, name));
        return this.tokens.sign({
          namespace,
          name,
          uid: sa.metadata.uid,
          audiences: opts.audiences ?? [...this.tokens.apiAudiences],
          nowMs: opts.issuedAt?.getTime() ?? nowMs(),
          expirationSeconds: opts.expirationSeconds ?? 3600,
          jti: randomUUID(),
        });
      },
    };
  }

  /** The default RBAC policy, and in TLS mode the cluster-info kubeadm's join reads. */
  boot(): void {
    ensureBootstrapPolicy(this.rest);
    if (this.ca) ensureClusterInfo(this.rest, this.url, this.ca);
  }

  authorize = (u: UserInfo, info: RequestInfo): string | undefined => this.rbac?.authorize(u, info);

  /** The user a request acts as: authenticated (401 when refused), then impersonation (403). */
  async authenticate(req: IncomingMessage): Promise<UserInfo> {
    const user = await this.authn.authenticateRequest(req.headers.authorization);
    if (!user) throw unauthorized();
    // headersDistinct builds a new object: only for the requests that ask to impersonate.
    if (!Object.keys(req.headers).some((h) => h.startsWith('impersonate-'))) return user;
    return impersonate(req.headersDistinct, req.url ?? '/', user, this.authorize);
  }

  /** The create-only kinds answered from identity: access, rules, self and token reviews. */
  async review(kind: ServedKind, namespace: string | undefined, body: any, user: UserInfo): Promise<unknown> {
    switch (kind.kind) {
      case 'SelfSubjectReview':
        return selfSubjectReview(kind, user, this.rest.clock.timestamp());
      case 'TokenReview':
        return tokenReview(kind, namespace, body, this.authn);
      case 'SelfSubjectRulesReview':
        return selfSubjectRulesReview(
          kind,
          body,
          user,
          this.rbac ? (u, ns) => this.rbac!.rulesFor(u, ns) : allowAllRules,
        );
      default:
        return accessReview(this.rest.kinds, this.authorize, kind, namespace, body, user);
    }
  }

  /** Subresources beyond status: serviceaccounts/token (create only). */
  subresource(kind: ServedKind, sub: string) {
    if (kind.resource !== '/serviceaccounts' || sub !== 'token') return undefined;
    return {
      create: (ns: string, name: string, body: unknown) =>
        createTokenRequest(this.rest, this.tokens, ns, name, body),
    };
  }

  /**
   * OIDC discovery of the issuer (routes/openidmetadata.go): served only when the issuer is an
   * https URL, as NewOpenIDMetadataProvider requires; otherwise the paths are unknown (404).
   */
  async wellKnown(path: string): Promise<{ headers: Record<string, string>; body: string } | undefined> {
    if (!this.url.startsWith('https://')) return undefined;
    const cache = { 'Cache-Control': 'public, max-age=3600' };
    if (path === DISCOVERY_PATH)
      return {
        headers: { 'Content-Type': 'application/json', ...cache },
        body: JSON.stringify(this.tokens.openidConfiguration(`${this.url}${JWKS_PATH}`)),
      };
    if (path === JWKS_PATH)
      return {
        headers: { 'Content-Type': 'application/jwk-set+json', ...cache },
        body: JSON.stringify(await this.tokens.jwks()),
      };
    return undefined;
  }

  onCommit = (ev: StoredEvent): void => this.controllers.onCommit(ev);
  drain = (): void => this.controllers.drain();
  stop = (): void => this.controllers.stop();
}
