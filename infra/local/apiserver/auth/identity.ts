/**
 * Who a request is: the user record the authenticators produce and the authorizer reads, with
 * the well-known names of k8s.io/apiserver/pkg/authentication/user and .../serviceaccount.
 */
import { validateName } from '../names.ts';

export interface UserInfo {
  user: string;
  groups: string[];
  uid?: string | undefined;
  extra?: Record<string, string[]> | undefined;
}

export const ANONYMOUS = 'system:anonymous';
export const ALL_AUTHENTICATED = 'system:authenticated';
export const ALL_UNAUTHENTICATED = 'system:unauthenticated';
export const MASTERS = 'system:masters';
export const ALL_SERVICE_ACCOUNTS = 'system:serviceaccounts';
const SA_PREFIX = 'system:serviceaccount:';

export const anonymousUser = (): UserInfo => ({ user: ANONYMOUS, groups: [ALL_UNAUTHENTICATED] });

/** serviceaccount.MakeUsername */
export const serviceAccountUsername = (ns: string, name: string): string => `${SA_PREFIX}${ns}:${name}`;

/** serviceaccount.MakeGroupNames */
export const serviceAccountGroups = (ns: string): string[] => [
  ALL_SERVICE_ACCOUNTS,
  `${ALL_SERVICE_ACCOUNTS}:${ns}`,
];

/** serviceaccount.SplitUsername: [namespace, name] of a valid service-account username. */
export function splitServiceAccountUsername(username: string): [string, string] | undefined {
  if (!username.startsWith(SA_PREFIX)) return undefined;
  const parts = username.slice(SA_PREFIX.length).split(':');
  if (parts.length !== 2) return undefined;
  const [ns, name] = parts as [string, string];
  if (validateName(ns, true).length || validateName(name, false).length) return undefined;
  return [ns, name];
}

/** authenticator.AuthenticatedGroupAdder: every authenticated user is in system:authenticated. */
export function withAuthenticatedGroup(u: UserInfo): UserInfo {
  if (u.groups.includes(ALL_AUTHENTICATED) || u.groups.includes(ALL_UNAUTHENTICATED)) return u;
  return { ...u, groups: [...u.groups, ALL_AUTHENTICATED] };
}

/** authenticator.Audiences.Intersect, keeping the order of `a`. */
export const intersect = (a: readonly string[], b: readonly string[]): string[] =>
  a.filter((x) => b.includes(x));

/** Go's %q of a []string: `["a" "b"]`. */
export const goQuoteList = (xs: readonly string[]): string =>
  `[${xs.map((x) => JSON.stringify(x)).join(' ')}]`;

/** utilerrors.NewAggregate(errs).Error(): one message alone, several in brackets. */
export const aggregate = (msgs: readonly string[]): string =>
  msgs.length === 1 ? msgs[0]! : `[${msgs.join(', ')}]`;
