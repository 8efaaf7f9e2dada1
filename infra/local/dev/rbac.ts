/**
 * RBAC for `runDev({ rbac })`: the product's identities on the embedded API servers, their
 * tokens, and the shipped role files applied as on a real cluster.
 *
 * - `observe`: the identities are also in `system:masters` (nothing is refused); the request log
 *   says who did what. `scripts/gen-rbac.ts` builds the shipped roles from it.
 * - `enforce`: the identities have exactly the roles of the shipped files
 *   (infra/deploy/common/rbac-functions.yaml, rbac-relay.yaml; on the workload cluster
 *   infra/deploy/workload-rbac.yaml). `test/integration/rbac/` proves them.
 *
 * The simulators, the progress observer and the dev plumbing use the admin token.
 */
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { envelopeOf, type ResourceType } from '../../../shared/api/resources.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import type { RbacOptions } from '../apiserver/index.ts';
import { assetPath } from '../assets.ts';

export type RbacMode = 'observe' | 'enforce';

export const FUNCTIONS_USER = 'system:serviceaccount:metal3fn-system:metal3fn-functions';
export const RELAY_USER = 'system:serviceaccount:metal3fn-system:metal3fn-relay';
/**
 * The identity of the workload kubeconfig (`<cluster>-kubeconfig`) in the embedded workload
 * cluster. On a real cluster it is whoever that kubeconfig authenticates as (often the kubeadm
 * admin); bind infra/deploy/workload-rbac.yaml's ClusterRole to it when it is a narrower one.
 */
export const WORKLOAD_USER = 'metal3fn-workload';

export const FUNCTIONS_TOKEN = 'metal3fn-functions-token';
export const RELAY_TOKEN = 'metal3fn-relay-token';
export const WORKLOAD_TOKEN = 'metal3fn-workload-token';

export const RBAC_FILES = {
  functions: assetPath('infra/deploy/common/rbac-functions.yaml'),
  relay: assetPath('infra/deploy/common/rbac-relay.yaml'),
  workload: assetPath('infra/deploy/workload-rbac.yaml'),
} as const;

const masters = (mode: RbacMode) => (mode === 'observe' ? { groups: ['system:masters'] } : {});

/** Tokens of the management API server: the functions and the relay. */
export function managementRbac(mode: RbacMode): RbacOptions {
  return {
    tokens: {
      [FUNCTIONS_TOKEN]: { user: FUNCTIONS_USER, ...masters(mode) },
      [RELAY_TOKEN]: { user: RELAY_USER, ...masters(mode) },
    },
  };
}

/** Tokens of the workload API server: the identity in the workload kubeconfig Secret. */
export function workloadRbac(mode: RbacMode): RbacOptions {
  return { tokens: { [WORKLOAD_TOKEN]: { user: WORKLOAD_USER, ...masters(mode) } } };
}

const RBAC_TYPES: Record<string, ResourceType> = {
  ClusterRole: rbacType('ClusterRole', 'clusterroles', false),
  ClusterRoleBinding: rbacType('ClusterRoleBinding', 'clusterrolebindings', false),
  Role: rbacType('Role', 'roles', true),
  RoleBinding: rbacType('RoleBinding', 'rolebindings', true),
};

function rbacType(kind: string, plural: string, namespaced: boolean): ResourceType {
  return {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    kind,
    plural,
    namespaced,
    statusSubresource: false,
  };
}

/** The documents of a YAML file (empty ones dropped). */
export function readManifests(file: string): KubeObject[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => d.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => Boolean(o));
}

/**
 * Applies the RBAC objects of a role file (ClusterRoles, Roles and their bindings) with an admin
 * client. ServiceAccounts are skipped: the identities come from the tokens. Namespaced objects
 * without a namespace go to `namespace` (what kustomize's `namespace:` does).
 */
export async function applyRbacFile(
  admin: KubeClient,
  file: string,
  namespace = 'metal3fn-system',
): Promise<void> {
  for (const o of readManifests(file)) {
    const t = o.kind ? RBAC_TYPES[o.kind] : undefined;
    if (!t) continue;
    const obj = t.namespaced
      ? { ...o, metadata: { ...o.metadata, namespace: o.metadata.namespace ?? namespace } }
      : o;
    await admin.create(envelopeOf(t), obj);
  }
}
