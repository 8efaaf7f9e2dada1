/**
 * Group, version, kind, plural and scope of every resource the product reads or writes: the one
 * place that knows them. The kube client builds URLs from it (no discovery round-trips), the relay
 * watches from it, RBAC is generated from it. The typed handles (`R`, with each kind's schema) are
 * in resources.ts; this file carries no schema, so what needs only names (dispatch, the requeue
 * forwarder) does not load them.
 */
export interface ResourceType {
  /** API group; '' for the core group. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
  /** True when the resource has a status subresource (writes to .status go through /status). */
  readonly statusSubresource: boolean;
}

export const INFRA_GROUP = 'infrastructure.cluster.x-k8s.io';
export const CAPI_GROUP = 'cluster.x-k8s.io';
export const BMO_GROUP = 'metal3.io';
export const IPAM_GROUP = 'ipam.metal3.io';
export const CONTROLPLANE_GROUP = 'controlplane.cluster.x-k8s.io';
export const BOOTSTRAP_GROUP = 'bootstrap.cluster.x-k8s.io';
/** vMetal (ADR 018): our own group, never vCluster Platform's management.loft.sh / storage.loft.sh. */
export const VMETAL_GROUP = 'vmetal.metal3fn.io';

function res(
  group: string,
  version: string,
  kind: string,
  plural: string,
  namespaced = true,
  statusSubresource = true,
): ResourceType {
  return Object.freeze({ group, version, kind, plural, namespaced, statusSubresource });
}

export const K = {
  // infrastructure.cluster.x-k8s.io/v1beta1 (ours)
  Metal3Machine: res(INFRA_GROUP, 'v1beta1', 'Metal3Machine', 'metal3machines'),
  Metal3MachineTemplate: res(INFRA_GROUP, 'v1beta1', 'Metal3MachineTemplate', 'metal3machinetemplates'),
  Metal3Cluster: res(INFRA_GROUP, 'v1beta1', 'Metal3Cluster', 'metal3clusters'),
  Metal3DataTemplate: res(INFRA_GROUP, 'v1beta1', 'Metal3DataTemplate', 'metal3datatemplates'),
  Metal3Data: res(INFRA_GROUP, 'v1beta1', 'Metal3Data', 'metal3datas'),
  Metal3DataClaim: res(INFRA_GROUP, 'v1beta1', 'Metal3DataClaim', 'metal3dataclaims'),
  // metal3.io (baremetal-operator)
  BareMetalHost: res(BMO_GROUP, 'v1alpha1', 'BareMetalHost', 'baremetalhosts'),
  // ipam.metal3.io
  IPPool: res(IPAM_GROUP, 'v1alpha1', 'IPPool', 'ippools'),
  IPClaim: res(IPAM_GROUP, 'v1alpha1', 'IPClaim', 'ipclaims'),
  IPAddress: res(IPAM_GROUP, 'v1alpha1', 'IPAddress', 'ipaddresses'),
  // Cluster API core and providers we read
  Cluster: res(CAPI_GROUP, 'v1beta1', 'Cluster', 'clusters'),
  Machine: res(CAPI_GROUP, 'v1beta1', 'Machine', 'machines'),
  MachineSet: res(CAPI_GROUP, 'v1beta1', 'MachineSet', 'machinesets'),
  MachineDeployment: res(CAPI_GROUP, 'v1beta1', 'MachineDeployment', 'machinedeployments'),
  KubeadmControlPlane: res(CONTROLPLANE_GROUP, 'v1beta1', 'KubeadmControlPlane', 'kubeadmcontrolplanes'),
  KubeadmConfig: res(BOOTSTRAP_GROUP, 'v1beta1', 'KubeadmConfig', 'kubeadmconfigs'),
  KubeadmConfigTemplate: res(BOOTSTRAP_GROUP, 'v1beta1', 'KubeadmConfigTemplate', 'kubeadmconfigtemplates'),
  // vmetal.metal3fn.io (ours, ADR 018)
  NodeProvider: res(VMETAL_GROUP, 'v1alpha1', 'NodeProvider', 'nodeproviders', false),
  NodeType: res(VMETAL_GROUP, 'v1alpha1', 'NodeType', 'nodetypes', false),
  NodeClaim: res(VMETAL_GROUP, 'v1alpha1', 'NodeClaim', 'nodeclaims'),
  NodeEnvironment: res(VMETAL_GROUP, 'v1alpha1', 'NodeEnvironment', 'nodeenvironments'),
  OSImage: res(VMETAL_GROUP, 'v1alpha1', 'OSImage', 'osimages', false, false),
  SSHKey: res(VMETAL_GROUP, 'v1alpha1', 'SSHKey', 'sshkeys', false, false),
  MachineConfigTemplate: res(
    VMETAL_GROUP,
    'v1alpha1',
    'MachineConfigTemplate',
    'machineconfigtemplates',
    false,
    false,
  ),
  // core and built-in
  Namespace: res('', 'v1', 'Namespace', 'namespaces', false, true),
  Secret: res('', 'v1', 'Secret', 'secrets', true, false),
  ConfigMap: res('', 'v1', 'ConfigMap', 'configmaps', true, false),
  Node: res('', 'v1', 'Node', 'nodes', false, true),
  Pod: res('', 'v1', 'Pod', 'pods', true, true),
  Event: res('', 'v1', 'Event', 'events', true, false),
  Lease: res('coordination.k8s.io', 'v1', 'Lease', 'leases', true, false),
  CustomResourceDefinition: res(
    'apiextensions.k8s.io',
    'v1',
    'CustomResourceDefinition',
    'customresourcedefinitions',
    false,
    true,
  ),
} as const satisfies Record<string, ResourceType>;

export type KindName = keyof typeof K;

export function apiVersionOf(t: ResourceType): string {
  return t.group ? `${t.group}/${t.version}` : t.version;
}

/** Looks a resource type up by apiVersion and kind; the API version's version part is ignored
 * when the exact one is not registered (a v1beta2 ref still names the same kind). */
export function resourceFor(apiVersion: string, kind: string): ResourceType | undefined {
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  const all: ResourceType[] = Object.values(K);
  return (
    all.find((t) => apiVersionOf(t) === apiVersion && t.kind === kind) ??
    all.find((t) => t.group === group && t.kind === kind)
  );
}

/** `<plural>.<group>` (or `<plural>` for the core group), as the API server names a resource in messages. */
export function qualifiedResource(t: ResourceType): string {
  return t.group ? `${t.plural}.${t.group}` : t.plural;
}
