/**
 * The create-only review kinds about identity, answered and never stored:
 * SelfSubjectReview (`kubectl auth whoami`; pkg/registry/authentication/selfsubjectreview),
 * TokenReview (pkg/registry/authentication/tokenreview) and SelfSubjectRulesReview
 * (`kubectl auth can-i --list`; pkg/registry/authorization/selfsubjectrulesreview with the RBAC
 * authorizer's RulesFor, or AlwaysAllow's `*` rules when RBAC is not enforced).
 */
import { apiVersionOf, type ServedKind } from '../kinds.ts';
import type { PolicyRule } from '../rbac.ts';
import { badRequest } from '../status.ts';
import type { Authenticator } from './authenticate.ts';
import { aggregate, type UserInfo } from './identity.ts';

/** authenticationv1.UserInfo in JSON (every field omitempty). */
function userInfoJson(u: UserInfo): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (u.user) out.username = u.user;
  if (u.uid) out.uid = u.uid;
  if (u.groups.length) out.groups = u.groups;
  if (u.extra && Object.keys(u.extra).length) out.extra = u.extra;
  return out;
}

export function selfSubjectReview(kind: ServedKind, user: UserInfo, timestamp: string): unknown {
  return {
    kind: kind.kind,
    apiVersion: apiVersionOf(kind),
    metadata: { creationTimestamp: timestamp },
    status: { userInfo: userInfoJson(user) },
  };
}

export async function tokenReview(
  kind: ServedKind,
  namespace: string | undefined,
  body: any,
  authn: Authenticator,
): Promise<unknown> {
  if (namespace) throw badRequest(`namespace is not allowed on this type: ${namespace}`);
  const spec = body?.spec ?? {};
  if (!spec.token) throw badRequest('token is required for TokenReview in authentication');
  const audiences: string[] =
    Array.isArray(spec.audiences) && spec.audiences.length ? spec.audiences : [...authn.apiAudiences];
  const r = await authn.authenticateToken(String(spec.token), audiences);
  const status: Record<string, unknown> = {};
  if (r.ok) {
    status.authenticated = true;
    status.user = userInfoJson(r.user);
    if (r.audiences.length) status.audiences = r.audiences;
  } else {
    status.user = {};
    status.error = r.error;
  }
  return {
    kind: kind.kind,
    apiVersion: apiVersionOf(kind),
    metadata: { creationTimestamp: null },
    spec,
    status,
  };
}

/** What RulesFor returns: the rules, and the errors met (bindings to missing roles). */
export type RulesFor = (u: UserInfo, namespace: string) => { rules: PolicyRule[]; errors: string[] };

/** alwaysAllowAuthorizer.RulesFor: everything, when RBAC is not enforced. */
export const allowAllRules: RulesFor = () => ({
  rules: [
    { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
    { verbs: ['*'], nonResourceURLs: ['*'] },
  ],
  errors: [],
});

export function selfSubjectRulesReview(
  kind: ServedKind,
  body: any,
  user: UserInfo,
  rulesFor: RulesFor,
): unknown {
  const namespace = body?.spec?.namespace;
  if (!namespace) throw badRequest('no namespace on request');
  const { rules, errors } = rulesFor(user, namespace);
  const status: Record<string, unknown> = {
    // RBACAuthorizer.RulesFor: a rule with resources is a resource rule, one with URLs a non-resource rule.
    resourceRules: rules
      .filter((r) => r.resources?.length)
      .map((r) => ({
        verbs: r.verbs ?? null,
        ...(r.apiGroups?.length ? { apiGroups: r.apiGroups } : {}),
        resources: r.resources,
        ...(r.resourceNames?.length ? { resourceNames: r.resourceNames } : {}),
      })),
    nonResourceRules: rules
      .filter((r) => r.nonResourceURLs?.length)
      .map((r) => ({ verbs: r.verbs ?? null, nonResourceURLs: r.nonResourceURLs })),
    incomplete: false,
  };
  if (errors.length) status.evaluationError = aggregate(errors);
  return {
    kind: kind.kind,
    apiVersion: apiVersionOf(kind),
    metadata: { creationTimestamp: null },
    spec: {},
    status,
  };
}
