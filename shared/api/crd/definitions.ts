import type { z } from 'zod';
import { BareMetalHostSchema } from '../baremetalhost.ts';
import {
  ClusterSchema,
  KubeadmControlPlaneSchema,
  MachineDeploymentSchema,
  MachineSchema,
  MachineSetSchema,
} from '../capi.ts';
import { IPAddressSchema, IPClaimSchema, IPPoolSchema } from '../ipam.ts';
import { KubeadmConfigSchema, KubeadmConfigTemplateSchema } from '../kubeadm.ts';
import { Metal3ClusterSchema } from '../metal3cluster.ts';
import { Metal3DataClaimSchema, Metal3DataSchema } from '../metal3data.ts';
import { Metal3DataTemplateSchema } from '../metal3datatemplate.ts';
import { Metal3MachineSchema } from '../metal3machine.ts';
import { Metal3MachineTemplateSchema } from '../metal3machinetemplate.ts';
import { R, type ResourceType } from '../resources.ts';
import {
  MachineConfigTemplateSchema,
  NodeEnvironmentSchema,
  OSImageSchema,
  SSHKeySchema,
} from '../vmetal/catalogue.ts';
import { NodeClaimSchema } from '../vmetal/nodeclaim.ts';
import { NodeProviderSchema } from '../vmetal/nodeprovider.ts';
import { NodeTypeSchema } from '../vmetal/nodetype.ts';

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  priority?: number;
}

export interface CrdDefinition {
  resource: ResourceType;
  schema: z.ZodType;
  description: string;
  /** Ours (infra/crds; the CAPI contract label on the infrastructure group's) or a kind others own that the local system needs (infra/local/crds). */
  owner: 'ours' | 'local';
  /**
   * Fields the schema does not model: pruned by the API server (ours and the IPAM kinds, whose
   * allocation we implement), or kept (`x-kubernetes-preserve-unknown-fields` on every object node:
   * kinds other controllers own). The zod schemas themselves always let unknown fields through, so
   * a read-modify-write never drops what a newer CRD carries (ADR 016).
   */
  unknownFields: 'prune' | 'preserve';
  shortNames: string[];
  categories: string[];
  columns: PrinterColumn[];
  /** CEL rules on `.spec` (Kubernetes x-kubernetes-validations). */
  specValidations?: { rule: string; message: string }[];
  /**
   * Fields usable in field selectors (`selectableFields`, Kubernetes 1.31+): what allocateIndex
   * asks the server for instead of listing every object of the namespace (ADR 009, ADR 010).
   */
  selectableFields?: string[];
  /** The scale subresource (`kubectl scale`, autoscalers), as the kind's own project declares it. */
  scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
}

/** Cluster API's MachineSet and MachineDeployment: +kubebuilder:subresource:scale in api/v1beta1. */
const replicaScale = {
  specReplicasPath: '.spec.replicas',
  statusReplicasPath: '.status.replicas',
  labelSelectorPath: '.status.selector',
};

const age: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };
const clusterLabel: PrinterColumn = {
  name: 'Cluster',
  type: 'string',
  jsonPath: ".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",
  description: 'Cluster to which this object belongs',
};

export const CRD_DEFINITIONS: CrdDefinition[] = [
  {
    resource: R.Metal3Machine,
    schema: Metal3MachineSchema,
    description: 'Metal3Machine is the infrastructure machine of Cluster API for a bare metal host.',
    owner: 'ours',
    unknownFields: 'prune',
    shortNames: ['m3m', 'm3machine'],
    categories: ['cluster-api'],
    columns: [
      age,
      {
        name: 'ProviderID',
        type: 'string',
        jsonPath: '.spec.providerID',
        description: 'Provider ID of the host',
      },
      { name: 'Ready', type: 'boolean', jsonPath: '.status.ready', description: 'Infrastructure is ready' },
      clusterLabel,
      { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Progress of the machine' },
      {
        name: 'Host',
        type: 'string',
        jsonPath: ".metadata.annotations['metal3\\.io/BareMetalHost']",
        description: 'BareMetalHost (namespace/name) associated with this machine',
        priority: 1,
      },
    ],
  },
  {
    resource: R.Metal3MachineTemplate,
    schema: Metal3MachineTemplateSchema,
    description: 'Metal3MachineTemplate is the template Cluster API clones Metal3Machines from.',
    owner: 'ours',
    unknownFields: 'prune',
    shortNames: ['m3mt', 'm3machinetemplate'],
    categories: ['cluster-api'],
    columns: [
      age,
      {
        name: 'NodeReuse',
        type: 'boolean',
        jsonPath: '.spec.nodeReuse',
        description: 'Released hosts are kept for reuse',
      },
    ],
  },
  {
    resource: R.Metal3Cluster,
    schema: Metal3ClusterSchema,
    description: 'Metal3Cluster is the infrastructure cluster of Cluster API for bare metal.',
    owner: 'ours',
    unknownFields: 'prune',
    shortNames: ['m3c', 'm3cluster'],
    categories: ['cluster-api'],
    columns: [
      age,
      clusterLabel,
      { name: 'Ready', type: 'boolean', jsonPath: '.status.ready', description: 'Infrastructure is ready' },
      {
        name: 'Error',
        type: 'string',
        jsonPath: '.status.failureReason',
        description: 'Error reason, if any',
      },
      {
        name: 'Endpoint',
        type: 'string',
        jsonPath: '.spec.controlPlaneEndpoint.host',
        description: 'Control plane endpoint host',
        priority: 1,
      },
    ],
  },
  {
    resource: R.Metal3DataTemplate,
    schema: Metal3DataTemplateSchema,
    description: 'Metal3DataTemplate holds the metaData and networkData templates rendered per machine.',
    owner: 'ours',
    unknownFields: 'prune',
    shortNames: ['m3dt', 'm3datatemplate'],
    categories: ['cluster-api'],
    columns: [
      age,
      { name: 'Cluster', type: 'string', jsonPath: '.spec.clusterName', description: 'Cluster name' },
    ],
    // Hosts are provisioned from the rendered secrets: a changed template means a new template.
    specValidations: [{ rule: 'self == oldSelf', message: 'spec is immutable' }],
  },
  {
    resource: R.Metal3Data,
    schema: Metal3DataSchema,
    description: 'Metal3Data is the data rendered for one machine from a Metal3DataTemplate, at one index.',
    owner: 'ours',
    unknownFields: 'prune',
    shortNames: ['m3d', 'm3data'],
    categories: ['cluster-api'],
    selectableFields: ['.spec.claim.name', '.spec.template.name', '.status.ready'],
    columns: [
      age,
      { name: 'Index', type: 'integer', jsonPath: '.spec.index', description: 'Index within the template' },
      { name: 'Ready', type: 'boolean', jsonPath: '.status.ready', description: 'Secrets are rendered' },
      { name: 'Error', type: 'string', jsonPath: '.status.errorMessage', description: 'Error, if any' },
      {
        name: 'Claim',
        type: 'string',
        jsonPath: '.spec.claim.name',
        description: 'Metal3DataClaim',
        priority: 1,
      },
    ],
  },
  {
    resource: R.Metal3DataClaim,
    schema: Metal3DataClaimSchema,
    description: 'Metal3DataClaim asks a Metal3DataTemplate for a Metal3Data (an index) for one machine.',
    owner: 'ours',
    unknownFields: 'prune',
    shortNames: ['m3dc', 'm3dataclaim'],
    categories: ['cluster-api'],
    selectableFields: ['.spec.template.name', '.status.renderedData.name'],
    columns: [
      age,
      {
        name: 'Template',
        type: 'string',
        jsonPath: '.spec.template.name',
        description: 'Metal3DataTemplate',
      },
      {
        name: 'Data',
        type: 'string',
        jsonPath: '.status.renderedData.name',
        description: 'Metal3Data allocated',
      },
      { name: 'Error', type: 'string', jsonPath: '.status.errorMessage', description: 'Error, if any' },
    ],
  },
  // vMetal (ADR 018): pruned like ours; no CAPI contract label (not a Cluster API provider kind).
  {
    resource: R.NodeProvider,
    schema: NodeProviderSchema,
    description: 'NodeProvider (vMetal): the Metal3 hosts of one control-plane cluster and their NodeTypes.',
    owner: 'ours',
    unknownFields: 'prune',
    shortNames: [],
    categories: ['vmetal'],
    columns: [
      { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Phase' },
      {
        name: 'Namespace',
        type: 'string',
        jsonPath: '.spec.metal3.clusterRef.namespace',
        description: 'Namespace of the BareMetalHosts',
      },
      age,
    ],
  },
  {
    resource: R.NodeType,
    schema: NodeTypeSchema,
    description: 'NodeType (vMetal): BareMetalHosts grouped by label selector, made from a NodeProvider.',
    owner: 'ours',
    unknownFields: 'prune',
    shortNames: [],
    categories: ['vmetal'],
    columns: [
      { name: 'Provider', type: 'string', jsonPath: '.spec.providerRef', description: 'NodeProvider' },
      { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Phase' },
      { name: 'Total', type: 'integer', jsonPath: '.status.capacity.total', description: 'Matching hosts' },
      {
        name: 'Available',
        type: 'integer',
        jsonPath: '.status.capacity.available',
        description: 'Hosts that can be claimed now',
      },
      { name: 'Claimed', type: 'integer', jsonPath: '.status.capacity.claimed', description: 'Hosts held' },
      age,
    ],
  },
  {
    resource: R.NodeClaim,
    schema: NodeClaimSchema,
    description: 'NodeClaim (vMetal): one provisioned server joined to a tenant cluster.',
    owner: 'ours',
    unknownFields: 'prune',
    shortNames: [],
    categories: ['vmetal'],
    columns: [
      {
        name: 'Phase',
        type: 'string',
        jsonPath: '.status.phase',
        description: 'Pending, Available or Failed',
      },
      { name: 'Type', type: 'string', jsonPath: '.status.nodeType', description: 'NodeType' },
      { name: 'Host', type: 'string', jsonPath: '.status.host', description: 'BareMetalHost held' },
      { name: 'IP', type: 'string', jsonPath: '.status.ipAddress', description: 'Allocated address' },
      age,
      {
        name: 'VCluster',
        type: 'string',
        jsonPath: '.spec.vClusterRef',
        description: 'Tenant cluster',
        priority: 1,
      },
    ],
  },
  {
    resource: R.NodeEnvironment,
    schema: NodeEnvironmentSchema,
    description: 'NodeEnvironment (vMetal): properties for one tenant cluster and provider.',
    owner: 'ours',
    unknownFields: 'prune',
    shortNames: [],
    categories: ['vmetal'],
    columns: [
      { name: 'Provider', type: 'string', jsonPath: '.spec.providerRef', description: 'NodeProvider' },
      { name: 'VCluster', type: 'string', jsonPath: '.spec.vClusterRef', description: 'Tenant cluster' },
      age,
    ],
  },
  {
    resource: R.OSImage,
    schema: OSImageSchema,
    description: 'OSImage (vMetal): an OS image (url, checksum) named by vcluster.com/os-image.',
    owner: 'ours',
    unknownFields: 'prune',
    shortNames: [],
    categories: ['vmetal'],
    columns: [
      {
        name: 'URL',
        type: 'string',
        jsonPath: ".spec.properties['metal3\\.vcluster\\.com/image-url']",
        description: 'Image URL',
      },
      age,
    ],
  },
  {
    resource: R.SSHKey,
    schema: SSHKeySchema,
    description: 'SSHKey (vMetal): a public key named by vcluster.com/ssh-keys.',
    owner: 'ours',
    unknownFields: 'prune',
    shortNames: [],
    categories: ['vmetal'],
    columns: [age],
  },
  {
    resource: R.MachineConfigTemplate,
    schema: MachineConfigTemplateSchema,
    description: 'MachineConfigTemplate (vMetal): user-data and network-data templates.',
    owner: 'ours',
    unknownFields: 'prune',
    shortNames: [],
    categories: ['vmetal'],
    columns: [age],
  },
  {
    resource: R.BareMetalHost,
    schema: BareMetalHostSchema,
    description: 'BareMetalHost (baremetal-operator): a physical host. Local copy; unknown fields are kept.',
    owner: 'local',
    unknownFields: 'preserve',
    shortNames: ['bmh', 'bmhost'],
    categories: [],
    columns: [
      {
        name: 'State',
        type: 'string',
        jsonPath: '.status.provisioning.state',
        description: 'Provisioning state',
      },
      {
        name: 'Consumer',
        type: 'string',
        jsonPath: '.spec.consumerRef.name',
        description: 'Consumer using this host',
      },
      {
        name: 'Online',
        type: 'boolean',
        jsonPath: '.spec.online',
        description: 'Whether the host is online',
      },
      {
        name: 'Error',
        type: 'string',
        jsonPath: '.status.errorType',
        description: 'Type of the most recent error',
      },
      age,
    ],
  },
  {
    resource: R.IPPool,
    schema: IPPoolSchema,
    description: 'IPPool (ip-address-manager): ranges of addresses handed out to IPClaims.',
    owner: 'local',
    unknownFields: 'prune',
    shortNames: ['ipp', 'ippool'],
    categories: [],
    columns: [
      age,
      { name: 'Cluster', type: 'string', jsonPath: '.spec.clusterName', description: 'Cluster name' },
      { name: 'Prefix', type: 'string', jsonPath: '.spec.namePrefix', description: 'IPAddress name prefix' },
    ],
  },
  {
    resource: R.IPClaim,
    schema: IPClaimSchema,
    description: 'IPClaim (ip-address-manager): a request for one address from an IPPool.',
    owner: 'local',
    unknownFields: 'prune',
    shortNames: ['ipc', 'ipclaim'],
    categories: [],
    selectableFields: ['.spec.pool.name', '.status.address.name'],
    columns: [
      age,
      { name: 'Pool', type: 'string', jsonPath: '.spec.pool.name', description: 'IPPool' },
      {
        name: 'Address',
        type: 'string',
        jsonPath: '.status.address.name',
        description: 'IPAddress allocated',
      },
      { name: 'Error', type: 'string', jsonPath: '.status.errorMessage', description: 'Error, if any' },
    ],
  },
  {
    resource: R.IPAddress,
    schema: IPAddressSchema,
    description: 'IPAddress (ip-address-manager): one address allocated from an IPPool to an IPClaim.',
    owner: 'local',
    unknownFields: 'prune',
    shortNames: ['ipa', 'ipaddress'],
    categories: [],
    selectableFields: ['.spec.pool.name', '.spec.claim.name'],
    columns: [
      age,
      { name: 'Address', type: 'string', jsonPath: '.spec.address', description: 'The address' },
      {
        name: 'Prefix',
        type: 'integer',
        jsonPath: '.spec.prefix',
        description: 'Prefix length',
        priority: 1,
      },
      { name: 'Pool', type: 'string', jsonPath: '.spec.pool.name', description: 'IPPool' },
      { name: 'Claim', type: 'string', jsonPath: '.spec.claim.name', description: 'IPClaim' },
    ],
  },
  {
    resource: R.Cluster,
    schema: ClusterSchema,
    description: 'Cluster (Cluster API). Local copy; unknown fields are kept.',
    owner: 'local',
    unknownFields: 'preserve',
    shortNames: ['cl'],
    categories: ['cluster-api'],
    columns: [
      { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Cluster phase' },
      {
        name: 'InfrastructureReady',
        type: 'boolean',
        jsonPath: '.status.infrastructureReady',
        description: 'Infrastructure is ready',
      },
      age,
    ],
  },
  {
    resource: R.Machine,
    schema: MachineSchema,
    description: 'Machine (Cluster API). Local copy; unknown fields are kept.',
    owner: 'local',
    unknownFields: 'preserve',
    shortNames: ['ma'],
    categories: ['cluster-api'],
    columns: [
      { name: 'Cluster', type: 'string', jsonPath: '.spec.clusterName', description: 'Cluster name' },
      {
        name: 'NodeName',
        type: 'string',
        jsonPath: '.status.nodeRef.name',
        description: 'Node of this machine',
      },
      { name: 'ProviderID', type: 'string', jsonPath: '.spec.providerID', description: 'Provider ID' },
      { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Machine phase' },
      age,
      { name: 'Version', type: 'string', jsonPath: '.spec.version', description: 'Kubernetes version' },
    ],
  },
  {
    resource: R.MachineSet,
    schema: MachineSetSchema,
    description: 'MachineSet (Cluster API). Local copy; unknown fields are kept.',
    owner: 'local',
    unknownFields: 'preserve',
    scale: replicaScale,
    shortNames: ['ms'],
    categories: ['cluster-api'],
    columns: [
      { name: 'Cluster', type: 'string', jsonPath: '.spec.clusterName', description: 'Cluster name' },
      { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas', description: 'Desired replicas' },
      { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas', description: 'Ready replicas' },
      age,
    ],
  },
  {
    resource: R.MachineDeployment,
    schema: MachineDeploymentSchema,
    description: 'MachineDeployment (Cluster API). Local copy; unknown fields are kept.',
    owner: 'local',
    unknownFields: 'preserve',
    scale: replicaScale,
    shortNames: ['md'],
    categories: ['cluster-api'],
    columns: [
      { name: 'Cluster', type: 'string', jsonPath: '.spec.clusterName', description: 'Cluster name' },
      { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas', description: 'Desired replicas' },
      { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas', description: 'Ready replicas' },
      { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Phase' },
      age,
    ],
  },
  {
    resource: R.KubeadmControlPlane,
    schema: KubeadmControlPlaneSchema,
    description: 'KubeadmControlPlane (Cluster API). Local copy; unknown fields are kept.',
    owner: 'local',
    unknownFields: 'preserve',
    shortNames: ['kcp'],
    categories: ['cluster-api'],
    columns: [
      clusterLabel,
      { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas', description: 'Desired replicas' },
      { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas', description: 'Ready replicas' },
      { name: 'Version', type: 'string', jsonPath: '.spec.version', description: 'Kubernetes version' },
      age,
    ],
  },
  {
    resource: R.KubeadmConfig,
    schema: KubeadmConfigSchema,
    description: 'KubeadmConfig (Cluster API bootstrap). Local copy; spec is opaque.',
    owner: 'local',
    unknownFields: 'preserve',
    shortNames: [],
    categories: ['cluster-api'],
    columns: [clusterLabel, age],
  },
  {
    resource: R.KubeadmConfigTemplate,
    schema: KubeadmConfigTemplateSchema,
    description: 'KubeadmConfigTemplate (Cluster API bootstrap). Local copy; spec is opaque.',
    owner: 'local',
    unknownFields: 'preserve',
    shortNames: [],
    categories: ['cluster-api'],
    columns: [age],
  },
];
