/**
 * The default RBAC objects every kube-apiserver creates at start (plugin/pkg/auth/authorizer/
 * rbac/bootstrappolicy/policy.go ClusterRoles and ClusterRoleBindings, created by the
 * rbac/bootstrap-roles post-start hook) that decide what any identity may do before anyone grants
 * it anything: discovery and health for everyone, self-reviews for authenticated users, the
 * service-account issuer discovery for service accounts, everything for system:masters. They are
 * stored objects, as on a real cluster, so `kubectl get clusterroles` and `auth can-i --list`
 * show them. The roles for controllers, nodes and the aggregated admin/edit/view are not created
 * (ADR 001).
 */
import type { Rest } from '../rest.ts';

const RBAC = 'rbac.authorization.k8s.io';
const meta = (name: string) => ({
  name,
  labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' },
  annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' },
});

/** [name, rules] — each rule's lists sorted, as rbacv1helpers' RuleOrDie stores them. */
const CLUSTER_ROLES: [string, object[]][] = [
  [
    'cluster-admin',
    [
      { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
      { nonResourceURLs: ['*'], verbs: ['*'] },
    ],
  ],
  [
    'system:discovery',
    [
      {
        nonResourceURLs: [
          '/api',
          '/api/*',
          '/apis',
          '/apis/*',
          '/healthz',
          '/livez',
          '/openapi',
          '/openapi/*',
          '/readyz',
          '/version',
          '/version/',
        ],
        verbs: ['get'],
      },
    ],
  ],
  [
    'system:monitoring',
    [
      {
        nonResourceURLs: ['/healthz', '/healthz/*', '/livez', '/livez/*', '/metrics', '/readyz', '/readyz/*'],
        verbs: ['get'],
      },
    ],
  ],
  [
    'system:basic-user',
    [
      {
        apiGroups: ['authorization.k8s.io'],
        resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
        verbs: ['create'],
      },
      { apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'], verbs: ['create'] },
    ],
  ],
  [
    'system:public-info-viewer',
    [{ nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'], verbs: ['get'] }],
  ],
  [
    'system:service-account-issuer-discovery',
    [
      {
        nonResourceURLs: [
          '/.well-known/openid-configuration',
          '/.well-known/openid-configuration/',
          '/openid/v1/jwks',
          '/openid/v1/jwks/',
        ],
        verbs: ['get'],
      },
    ],
  ],
];

/** [binding and role name, groups bound] */
const CLUSTER_ROLE_BINDINGS: [string, string[]][] = [
  ['cluster-admin', ['system:masters']],
  ['system:discovery', ['system:authenticated']],
  ['system:monitoring', ['system:monitoring']],
  ['system:basic-user', ['system:authenticated']],
  ['system:public-info-viewer', ['system:authenticated', 'system:unauthenticated']],
  ['system:service-account-issuer-discovery', ['system:serviceaccounts']],
];

/** Creates the objects that are missing (a restart from a data file keeps what is there). */
export function ensureBootstrapPolicy(rest: Rest): void {
  const roles = rest.kinds.get(RBAC, 'v1', 'clusterroles')!;
  const bindings = rest.kinds.get(RBAC, 'v1', 'clusterrolebindings')!;
  for (const [name, rules] of CLUSTER_ROLES) {
    if (!rest.store.get(roles.resource, undefined, name))
      rest.create(roles, undefined, {
        apiVersion: `${RBAC}/v1`,
        kind: 'ClusterRole',
        metadata: meta(name),
        rules,
      });
  }
  for (const [name, groups] of CLUSTER_ROLE_BINDINGS) {
    if (rest.store.get(bindings.resource, undefined, name)) continue;
    rest.create(bindings, undefined, {
      apiVersion: `${RBAC}/v1`,
      kind: 'ClusterRoleBinding',
      metadata: meta(name),
      roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name },
      subjects: groups.map((g) => ({ apiGroup: RBAC, kind: 'Group', name: g })),
    });
  }
}
