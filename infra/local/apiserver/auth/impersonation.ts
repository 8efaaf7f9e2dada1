/**
 * Impersonation (`kubectl --as/--as-group/--as-uid`, the Impersonate-* headers), as
 * k8s.io/apiserver pkg/endpoints/filters/impersonation.go WithImpersonation does it: each
 * requested user, service account, group, extra value and uid is authorized with the verb
 * `impersonate` (403 with the authorizer's message when refused), then the request runs as the
 * impersonated user, with `system:authenticated` (or `system:unauthenticated` for
 * system:anonymous) added unless the groups already say so.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { ServedKind } from '../kinds.ts';
import type { RequestInfo } from '../server.ts';
import { forbidden, PlainTextError } from '../status.ts';
import {
  ALL_AUTHENTICATED,
  ALL_UNAUTHENTICATED,
  ANONYMOUS,
  serviceAccountGroups,
  serviceAccountUsername,
  splitServiceAccountUsername,
  type UserInfo,
} from './identity.ts';

const AUTHN_V1 = 'authentication.k8s.io/v1';
const EXTRA_PREFIX = 'impersonate-extra-';

/** v1.ObjectReference as buildImpersonationRequests fills it. */
interface ImpersonationRequest {
  kind: 'ServiceAccount' | 'User' | 'Group' | 'UserExtra' | 'UID';
  namespace?: string;
  name: string;
  apiVersion?: string;
  fieldPath?: string;
}

/** Go's %v of a v1.ObjectReference value: its seven string fields in order, space-separated. */
const goRef = (r: ImpersonationRequest): string =>
  `{${[r.kind, r.namespace ?? '', r.name, '', r.apiVersion ?? '', '', r.fieldPath ?? ''].join(' ')}}`;

/** url.PathUnescape, keeping the raw key when it is malformed (unescapeExtraKey). */
function unescapeExtraKey(key: string): string {
  try {
    return decodeURIComponent(key);
  } catch {
    return key;
  }
}

/** buildImpersonationRequests: what the headers ask for, in the order the filter checks them. */
function buildRequests(headers: NodeJS.Dict<string[]>): ImpersonationRequest[] | string {
  const out: ImpersonationRequest[] = [];
  const user = headers['impersonate-user']?.[0] ?? '';
  if (user) {
    const sa = splitServiceAccountUsername(user);
    out.push(sa ? { kind: 'ServiceAccount', namespace: sa[0], name: sa[1] } : { kind: 'User', name: user });
  }
  const groups = headers['impersonate-group'] ?? [];
  for (const g of groups) out.push({ kind: 'Group', name: g });
  let hasExtra = false;
  for (const [header, values] of Object.entries(headers)) {
    if (!header.startsWith(EXTRA_PREFIX)) continue;
    hasExtra = true;
    const key = unescapeExtraKey(header.slice(EXTRA_PREFIX.length));
    for (const v of values ?? [])
      out.push({ kind: 'UserExtra', apiVersion: AUTHN_V1, name: v, fieldPath: key });
  }
  const uid = headers['impersonate-uid']?.[0] ?? '';
  if (uid) out.push({ kind: 'UID', name: uid, apiVersion: AUTHN_V1 });
  if ((groups.length || hasExtra || uid) && !user)
    return `requested [${out.map(goRef).join(' ')}] without impersonating a user`;
  return out;
}

/** The authorization attributes of one impersonation request (resource, group, subresource). */
function attributes(r: ImpersonationRequest): RequestInfo {
  const [resource, group] =
    r.kind === 'ServiceAccount'
      ? ['serviceaccounts', '']
      : r.kind === 'User'
        ? ['users', '']
        : r.kind === 'Group'
          ? ['groups', '']
          : r.kind === 'UserExtra'
            ? ['userextras', 'authentication.k8s.io']
            : ['uids', 'authentication.k8s.io'];
  return {
    verb: 'impersonate',
    kind: { group, plural: resource } as ServedKind,
    resource,
    group,
    subresource: r.kind === 'UserExtra' ? r.fieldPath : undefined,
    namespace: r.namespace,
    name: r.name,
    path: '',
  };
}

/**
 * The user a request acts as: `requestor` itself without Impersonate-* headers, else the
 * impersonated user once every part is allowed. Throws 403 (refused) or the filter's plain-text
 * 500 (groups, extras or uid without a user).
 */
export function impersonate(
  headers: NodeJS.Dict<string[]> | IncomingHttpHeaders,
  requestUri: string,
  requestor: UserInfo,
  authorize: (u: UserInfo, info: RequestInfo) => string | undefined,
): UserInfo {
  const requests = buildRequests(headers as NodeJS.Dict<string[]>);
  if (typeof requests === 'string')
    throw new PlainTextError(500, `Internal Server Error: ${JSON.stringify(requestUri)}: ${requests}`);
  if (!requests.length) return requestor;
  const groupsSpecified = (headers as NodeJS.Dict<string[]>)['impersonate-group']?.length ?? 0;
  let username = '';
  let groups: string[] = [];
  const extra: Record<string, string[]> = {};
  let uid = '';
  for (const r of requests) {
    if (r.kind === 'ServiceAccount') {
      username = serviceAccountUsername(r.namespace!, r.name);
      if (!groupsSpecified) groups = serviceAccountGroups(r.namespace!);
    } else if (r.kind === 'User') username = r.name;
    else if (r.kind === 'Group') groups.push(r.name);
    else if (r.kind === 'UserExtra') extra[r.fieldPath!] = [...(extra[r.fieldPath!] ?? []), r.name];
    else uid = r.name;
    const info = attributes(r);
    const denied = authorize(requestor, info);
    if (denied) throw forbidden(denied, info.kind, r.name);
  }
  if (username !== ANONYMOUS) {
    if (!groups.includes(ALL_AUTHENTICATED) && !groups.includes(ALL_UNAUTHENTICATED))
      groups.push(ALL_AUTHENTICATED);
  } else if (!groups.includes(ALL_UNAUTHENTICATED)) groups.push(ALL_UNAUTHENTICATED);
  return {
    user: username,
    groups,
    ...(uid ? { uid } : {}),
    ...(Object.keys(extra).length ? { extra } : {}),
  };
}
