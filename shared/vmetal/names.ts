/**
 * The vMetal property keys (NodeProvider → NodeType → NodeEnvironment → NodeClaim `properties`),
 * spelled as vCluster Platform documents them (spec/vmetal-spec.md), declared once. Labels and
 * annotations vMetal writes on objects live in `shared/api/wellknown.ts` with the others.
 */
export const PROP = {
  // Built-ins (rank lowest; see properties.ts)
  nodeType: 'vcluster.com/node-type',
  instanceType: 'node.kubernetes.io/instance-type',
  os: 'kubernetes.io/os',
  zone: 'topology.kubernetes.io/zone',
  capacityType: 'karpenter.sh/capacity-type',
  /** Not a property of its own: part of what a NodeType offers to `requirements` (as vCluster's API does). */
  nodeProvider: 'vcluster.com/node-provider',

  networkEnvironment: 'vcluster.com/network-environment',
  serverName: 'metal3.vcluster.com/server-name',

  // Image
  osImage: 'vcluster.com/os-image',
  imageUrl: 'metal3.vcluster.com/image-url',
  imageChecksum: 'metal3.vcluster.com/image-checksum',
  imageChecksumType: 'metal3.vcluster.com/image-checksum-type',

  // Network
  networkCidr: 'metal3.vcluster.com/network-cidr',
  networkIpRange: 'metal3.vcluster.com/network-ip-range',
  dnsServers: 'metal3.vcluster.com/dns-servers',
  ntpServers: 'metal3.vcluster.com/ntp-servers',
  networkData: 'metal3.vcluster.com/network-data',
  networkDataTemplateConfig: 'vcluster.com/network-data-template-config',
  networkDataTemplate: 'vcluster.com/network-data-template',
  networkDataTemplateSecret: 'vcluster.com/network-data-template-secret',

  // User data
  sshKeys: 'vcluster.com/ssh-keys',
  userData: 'vcluster.com/user-data',
  userDataTemplateConfig: 'vcluster.com/user-data-template-config',
  userDataTemplate: 'vcluster.com/user-data-template',
  userDataTemplateSecret: 'vcluster.com/user-data-template-secret',
} as const;

/** The label a template Secret must carry, and its values per use. */
export const TEMPLATE_TYPE_LABEL = 'vcluster.com/user-data-template-type';
export const TEMPLATE_SECRET_KEY = 'template';
