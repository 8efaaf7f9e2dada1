/**
 * Access reviews (authorization.k8s.io/v1): "may this user do that?", answered by the same
 * authorizer the server enforces, never stored. `kubectl auth can-i` sends a
 * SelfSubjectAccessReview; tests can check a generated ClusterRole with a SubjectAccessReview.
 */
import { apiVersionOf, type KindRegistry, type ServedKind } from './kinds.ts';
import type { RequestInfo, UserInfo } from './server.ts';
import { badRequest } from './status.ts';

export function accessReview(
  kinds: KindRegistry,
  authorize: (u: UserInfo, info: RequestInfo) => string | undefined,
  kind: ServedKind,
  namespace: string | undefined,
  body: any,
  requester: UserInfo,
): unknown {
  const spec = body?.spec ?? {};
  const subject: UserInfo =
    kind.kind === 'SelfSubjectAccessReview'
      ? requester
      : { user: spec.user ?? '', groups: spec.groups ?? [] };
  const ra = spec.resourceAttributes;
  const nra = spec.nonResourceAttributes;
  if (!ra && !nra)
    throw badRequest(
      'spec: Invalid value: exactly one of nonResourceAttributes or resourceAttributes must be specified',
    );
  let info: RequestInfo;
  if (ra) {
    const group = ra.group ?? '';
    const resource = String(ra.resource ?? '');
    const served = kinds
      .all()
      .find((k) => k.group === group && k.plural === resource && (!ra.version || k.version === ra.version));
    const ns = kind.kind === 'LocalSubjectAccessReview' ? namespace : ra.namespace || undefined;
    info = {
      verb: ra.verb ?? '',
      kind: served ?? ({ group, plural: resource } as ServedKind),
      resource,
      group,
      subresource: ra.subresource || undefined,
      namespace: ns,
      name: ra.name || undefined,
      path: '',
    };
  } else {
    info = { verb: nra.verb ?? '', resource: nra.path ?? '', group: '', path: nra.path ?? '' };
  }
  const denied = authorize(subject, info);
  return {
    apiVersion: apiVersionOf(kind),
    kind: kind.kind,
    metadata: { ...(namespace ? { namespace } : {}) },
    spec,
    status:
      denied === undefined ? { allowed: true, reason: 'allowed by RBAC' } : { allowed: false, reason: '' },
  };
}
