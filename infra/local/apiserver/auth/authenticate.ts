/**
 * Request authentication as kube-apiserver chains it (pkg/kubeapiserver/authenticator/config.go
 * New): the bearer token (staging/.../request/bearertoken) goes through a union of token
 * authenticators — the static tokens (--token-auth-file), service-account JWTs, bootstrap
 * tokens — each static or bootstrap one audience-agnostic (authenticator.WrapAudienceAgnosticToken);
 * whoever succeeds names the user, plus `system:authenticated` (AuthenticatedGroupAdder). A
 * token nobody accepts is 401; a request without a bearer token is `system:anonymous`
 * (anonymous auth, on by default). It runs whether RBAC is enforced or not, as on a real server.
 */
import {
  ALL_AUTHENTICATED,
  aggregate,
  anonymousUser,
  intersect,
  type UserInfo,
  withAuthenticatedGroup,
} from './identity.ts';
import type { ServiceAccountTokens, TokenOutcome } from './service-account-tokens.ts';

type TokenAuthenticator = (
  token: string,
  audiences: readonly string[],
) => TokenOutcome | Promise<TokenOutcome>;

/** An audience-agnostic authenticator answers only for requests aimed at the API server's own audiences. */
function audienceAgnostic(
  apiAudiences: readonly string[],
  fn: (token: string) => TokenOutcome,
): TokenAuthenticator {
  return (token, audiences) => {
    const auds = intersect(apiAudiences, audiences);
    if (!auds.length) return { ok: false };
    const r = fn(token);
    return r.ok ? { ...r, audiences: auds } : r;
  };
}

/** The bearer token of an Authorization header, exactly as bearertoken.Authenticator reads it. */
export function bearerToken(header: string | undefined): string | undefined {
  const auth = (header ?? '').trim();
  if (!auth) return undefined;
  const parts = auth.split(' ');
  if (parts.length < 2 || parts[0]!.toLowerCase() !== 'bearer') return undefined;
  // strings.SplitN(auth, " ", 3): the token is the second part; an empty one is no token.
  return parts[1] || undefined;
}

export interface AuthenticatorDeps {
  staticTokens: ReadonlyMap<string, UserInfo>;
  serviceAccounts: ServiceAccountTokens;
  bootstrap: (token: string, nowMs: number) => TokenOutcome;
  nowMs: () => number;
}

export class Authenticator {
  private readonly chain: TokenAuthenticator[];
  readonly apiAudiences: readonly string[];

  constructor(deps: AuthenticatorDeps) {
    this.apiAudiences = deps.serviceAccounts.apiAudiences;
    // Static users are fixed: their system:authenticated is added once, not per request.
    const statics = new Map([...deps.staticTokens].map(([t, u]) => [t, withAuthenticatedGroup(u)]));
    const staticToken = (token: string): TokenOutcome => {
      const user = statics.get(token);
      return user ? { ok: true, user, audiences: [] } : { ok: false };
    };
    this.chain = [
      audienceAgnostic(this.apiAudiences, staticToken),
      (token, auds) => deps.serviceAccounts.authenticate(token, auds, deps.nowMs()),
      audienceAgnostic(this.apiAudiences, (token) => deps.bootstrap(token, deps.nowMs())),
    ];
  }

  /**
   * tokenunion then bearertoken: the first authenticator that accepts wins; otherwise the errors
   * of those that recognised the token, or "invalid bearer token" when none did.
   */
  async authenticateToken(
    token: string,
    audiences: readonly string[] = this.apiAudiences,
  ): Promise<TokenOutcome> {
    const errors: string[] = [];
    for (const authn of this.chain) {
      const r = await authn(token, audiences);
      if (r.ok)
        return r.user.groups.includes(ALL_AUTHENTICATED) ? r : { ...r, user: withAuthenticatedGroup(r.user) };
      if (r.error) errors.push(r.error);
    }
    return { ok: false, error: errors.length ? aggregate(errors) : 'invalid bearer token' };
  }

  /** The user of a request; undefined means 401 Unauthorized. */
  async authenticateRequest(authorization: string | undefined): Promise<UserInfo | undefined> {
    const token = bearerToken(authorization);
    if (token === undefined) return anonymousUser();
    const r = await this.authenticateToken(token);
    return r.ok ? r.user : undefined;
  }
}
