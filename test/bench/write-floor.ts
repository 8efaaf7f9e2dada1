/**
 * The fewest API writes the data model allows for one machine to become Ready (one IP pool, as in
 * the sample), excluding Kubernetes Events and the simulators' writes. Each line is one write that
 * no design can skip or merge; docs/write-floor.md explains why each is separate.
 */
export const WRITE_FLOOR: readonly { step: string; write: string }[] = [
  { step: 'selectHost', write: 'Metal3Machine: add finalizer (before any host is touched)' },
  {
    step: 'selectHost',
    write: 'BareMetalHost: consumerRef + cluster-name label (the claim; resourceVersion-checked)',
  },
  {
    step: 'selectHost',
    write:
      "Secret (the host's BMC credentials): cluster-name label (after the claim; resourceVersion-checked)",
  },
  { step: 'selectHost', write: 'Metal3Machine: host annotation (after the claim succeeded)' },
  { step: 'selectHost', write: 'Metal3Machine /status: addresses, conditions' },
  { step: 'selectHost', write: 'Metal3DataClaim: create' },
  { step: 'allocateIndex', write: 'Metal3Data <template>-<index>: create' },
  { step: 'allocateIndex', write: 'Metal3DataClaim /status: renderedData' },
  { step: 'allocateIndex', write: 'Metal3DataTemplate /status: indexes, dataNames' },
  { step: 'renderData', write: 'IPClaim <m3d>-<pool>: create' },
  { step: 'allocateIndex', write: 'IPAddress <prefix>-<ip>: create' },
  { step: 'allocateIndex', write: 'IPClaim /status: address' },
  { step: 'allocateIndex', write: 'IPPool /status: indexes' },
  { step: 'renderData', write: 'Secret <m3m>-metadata-<index>: create' },
  { step: 'renderData', write: 'Secret <m3m>-networkdata-<index>: create' },
  { step: 'renderData', write: 'Metal3Data: spec.metaData / spec.networkData refs' },
  { step: 'renderData', write: 'Metal3Data /status: ready' },
  { step: 'selectHost', write: 'BareMetalHost: image, userData, metaData, networkData, online' },
  { step: 'selectHost', write: 'Metal3Machine /status: secret refs used, conditions' },
  { step: 'resolveProviderID', write: 'Metal3Machine: spec.providerID' },
  { step: 'resolveProviderID', write: 'Metal3Machine /status: ready, conditions' },
  { step: 'resolveProviderID', write: 'workload Node: spec.providerID' },
];

export const WRITE_FLOOR_PER_MACHINE = WRITE_FLOOR.length;

/**
 * The same for one vMetal NodeClaim to become Available (ADR 018; one network, as in the vMetal
 * sample), read from what the functions write: Events and the simulators' writes excluded, and so
 * are the writes shared by many claims (the network's IPPool, once per provider network; the
 * tenant's join-token Secret and its bootstrap token, once per tenant and TTL; NodeType capacity,
 * which several claims' changes may share). No BMC Secret label: the vMetal lock is the host alone.
 * Provisioned and Joined are two status writes because they are two moments (the host provisioned,
 * then the tenant's Node registered), as the Metal3Machine's are.
 */
export const WRITE_FLOOR_CLAIM: readonly { step: string; write: string }[] = [
  { step: 'selectHost', write: 'NodeClaim: add finalizer (before any host is touched)' },
  {
    step: 'selectHost',
    write:
      'BareMetalHost: consumerRef + consumer and node-claim labels + original network annotations saved (the claim; resourceVersion-checked)',
  },
  { step: 'selectHost', write: 'NodeClaim /status: Scheduled, host, host namespace, type, properties' },
  { step: 'selectHost', write: 'IPClaim (ipClaimName, in the host namespace): create' },
  { step: 'allocateIndex', write: 'IPAddress <prefix>-<ip>: create' },
  { step: 'allocateIndex', write: 'IPClaim /status: address' },
  { step: 'allocateIndex', write: 'IPPool /status: indexes' },
  { step: 'renderData', write: 'Secret <claim>-network-data: create' },
  { step: 'renderData', write: 'Secret <claim>-user-data: create (last: while it exists, all was rendered)' },
  {
    step: 'renderData',
    write: 'BareMetalHost: network annotations, image, userData, networkData, online (one held-host write)',
  },
  { step: 'renderData', write: 'NodeClaim /status: ipAddress, Provisioned=False DataRendered' },
  { step: 'resolveProviderID', write: 'NodeClaim /status: Provisioned=True (host provisioned)' },
  { step: 'resolveProviderID', write: 'NodeClaim /status: Joined=True, nodeName, phase Available' },
];

export const WRITE_FLOOR_PER_CLAIM = WRITE_FLOOR_CLAIM.length;
