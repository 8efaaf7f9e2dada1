/**
 * Every label, annotation and finalizer the product reads or writes, declared once, and the one
 * parser of the host annotation. Names follow the reference implementations (CAPM3, CAPI,
 * baremetal-operator) unless a comment says they are ours.
 */

// Cluster API
export const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';
export const CAPI_PAUSED_ANNOTATION = 'cluster.x-k8s.io/paused';
export const CLONED_FROM_NAME_ANNOTATION = 'cluster.x-k8s.io/cloned-from-name';
export const CLONED_FROM_GROUPKIND_ANNOTATION = 'cluster.x-k8s.io/cloned-from-groupkind';
export const DEPLOYMENT_NAME_LABEL = 'cluster.x-k8s.io/deployment-name';

// CAPM3 (infrastructure.cluster.x-k8s.io)
/** On a Metal3Machine: the host it is associated with, `<namespace>/<name>`. */
export const HOST_ANNOTATION = 'metal3.io/BareMetalHost';
export const NODE_REUSE_LABEL = 'infrastructure.cluster.x-k8s.io/node-reuse';
export const FAILURE_DOMAIN_LABEL = 'infrastructure.cluster.x-k8s.io/failure-domain';
/**
 * Ours: written with a host's consumerRef and removed on release, so "the hosts this consumer
 * holds" is one small labelled list (consumerRef is not selectable). ADR 007.
 */
export const CONSUMER_LABEL = 'infrastructure.cluster.x-k8s.io/consumer';
export const UNHEALTHY_ANNOTATIONS = ['capm3.metal3.io/unhealthy', 'capi.metal3.io/unhealthy'] as const;
/** The Secret type of rendered metaData / networkData. */
export const DATA_SECRET_TYPE = 'infrastructure.cluster.x-k8s.io/secret';
/** On an IPClaim: the address it asks for (ip-address-manager). */
export const REQUESTED_IP_ANNOTATION = 'ipAddress';

// baremetal-operator (metal3.io)
export const HOST_PAUSED_ANNOTATION = 'baremetalhost.metal3.io/paused';
/** The value CAPM3 writes into the paused annotation when it pauses a host itself. */
export const CAPM3_PAUSE_VALUE = 'metal3.io/capm3';
/** Node label carrying the BareMetalHost's uid (kubelet sets it from ds.meta_data.uuid). */
export const NODE_UUID_LABEL = 'metal3.io/uuid';
/** Node label kubelet sets to its hostname. */
export const HOSTNAME_LABEL = 'kubernetes.io/hostname';

// vMetal (vCluster Platform's Metal3 node provider; our own API group is vmetal.metal3fn.io)
/** On a BareMetalHost held by a NodeClaim: the claim's uid (written with the consumerRef). */
export const NODE_CLAIM_LABEL = 'metal3.vcluster.com/node-claim';
/**
 * On a BareMetalHost held by a NodeClaim: the claim's NodeType (its name, or a digest when longer
 * than a label value), written and removed with NODE_CLAIM_LABEL, so a NodeType counts the hosts
 * its claims hold from its own host list (ADR 025).
 */
export const NODE_TYPE_LABEL = 'vmetal.metal3fn.io/node-type';
/** The host annotations vMetal's DHCP proxy reads; restored to their originals on release. */
/**
 * On a BareMetalHost held by a NodeClaim: the host's network annotations as they were before the
 * claim (JSON, key -> value or null for absent), written in the claim's own write and restored
 * exactly on release.
 */
export const VMETAL_ORIGINAL_ANNOTATIONS = 'metal3.vcluster.com/original-network-annotations';
/** On objects made for a NodeClaim (IPClaim, Secrets): the claim's uid (who they belong to). */
export const VMETAL_CLAIM_UID_LABEL = 'vmetal.metal3fn.io/node-claim-uid';
/** On NodeTypes and IPPools a NodeProvider made: the provider's name. */
export const VMETAL_PROVIDER_LABEL = 'vmetal.metal3fn.io/node-provider';
export const VMETAL_HOST_ANNOTATION = {
  /** The allocated address in CIDR form (`10.0.0.5/24`). */
  ipAddress: 'metal3.vcluster.com/ip-address',
  gateway: 'metal3.vcluster.com/gateway',
  /** Comma-separated. */
  dnsServers: 'metal3.vcluster.com/dns-servers',
  /** Comma-separated. */
  ntpServers: 'metal3.vcluster.com/ntp-servers',
} as const;

export const FINALIZER = {
  /** On a Metal3Machine (selectHost adds it, deprovision removes it). */
  machine: 'metal3machine.infrastructure.cluster.x-k8s.io',
  /** On a Metal3Cluster. */
  cluster: 'metal3cluster.infrastructure.cluster.x-k8s.io',
  /** On a Metal3DataClaim (allocateIndex) and on the Metal3Data it created. */
  dataClaim: 'metal3dataclaim.infrastructure.cluster.x-k8s.io',
  /** On a Metal3Data (renderData) and on the IPClaims it created. */
  data: 'metal3data.infrastructure.cluster.x-k8s.io',
  /** On an IPClaim (IPAM). */
  ipClaim: 'ipclaim.ipam.metal3.io',
  /** On an IPAddress (IPAM). */
  ipAddress: 'ipaddress.ipam.metal3.io',
  /**
   * On a Metal3DataTemplate (allocateIndex): deletion protection, dropped once no live claim and
   * no Metal3Data of the template is left (CAPM3's DataTemplateFinalizer).
   */
  dataTemplate: 'metal3datatemplate.infrastructure.cluster.x-k8s.io',
  /** On an IPPool (IPAM): deletion protection, dropped once no IPAddress and no live IPClaim is left. */
  ipPool: 'ippool.ipam.metal3.io',
  /** On a NodeClaim (selectHost adds it, deprovision removes it once host, address and Secrets are released). */
  nodeClaim: 'nodeclaim.vmetal.metal3fn.io',
  /** On a NodeProvider: its deletion waits while NodeClaims use it. */
  nodeProvider: 'nodeprovider.vmetal.metal3fn.io',
} as const;

export interface HostRef {
  namespace: string;
  name: string;
}

export type HostRefResult =
  | { kind: 'absent' }
  | { kind: 'ok'; host: HostRef }
  | { kind: 'invalid'; message: string };

const SEGMENT = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/**
 * The host a machine's annotation names. CAPM3 writes `<namespace>/<name>` with the machine's own
 * namespace (hosts are never taken across namespaces); anything else is bad input, and the message
 * names the annotation.
 */
export function hostRefOf(obj: {
  metadata: { namespace?: string | undefined; annotations?: Record<string, string> | undefined };
}): HostRefResult {
  const value = obj.metadata.annotations?.[HOST_ANNOTATION];
  if (value === undefined || value === '') return { kind: 'absent' };
  const parts = value.split('/');
  if (parts.length !== 2 || !SEGMENT.test(parts[0] ?? '') || !SEGMENT.test(parts[1] ?? '')) {
    return {
      kind: 'invalid',
      message: `unable to retrieve BareMetalHost name: annotation ${HOST_ANNOTATION}=${JSON.stringify(value)} is malformed (want "<namespace>/<name>")`,
    };
  }
  const [namespace = '', name = ''] = parts;
  if (namespace !== obj.metadata.namespace) {
    return {
      kind: 'invalid',
      message: `annotation ${HOST_ANNOTATION}=${JSON.stringify(value)} names a host in namespace ${namespace}, but the Metal3Machine is in ${obj.metadata.namespace}`,
    };
  }
  return { kind: 'ok', host: { namespace, name } };
}

/** The host the annotation names when it is valid, else undefined (absent or malformed). */
export const validHostRef = (obj: Parameters<typeof hostRefOf>[0]): HostRef | undefined => {
  const r = hostRefOf(obj);
  return r.kind === 'ok' ? r.host : undefined;
};

/**
 * On the bootstrap-token Secrets vMetal creates in a tenant cluster, and on the management Secret
 * keeping a tenant's current token (`<vClusterRef>-vmetal-join-token`): the tenant cluster's name.
 */
export const VMETAL_JOIN_TOKEN_LABEL = 'vmetal.metal3fn.io/join-token';
