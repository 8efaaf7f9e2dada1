/**
 * Manifests for the fleet-scale bench (test/bench/scale.ts) where `metal3fn dev`'s built-in sample
 * cannot go: the sample cluster K times, and a vMetal fleet of C NodeClaims. Pure: sample objects
 * in, objects out (the bench writes them as YAML for `dev --manifests`).
 *
 * The shape per cluster is the sample's (`dev --machines n --hosts 1.5n`): a control plane of up
 * to 3, the rest one MachineDeployment, one pool grown to fit, hosts labelled as `planHosts` labels
 * the sample's (one unhealthy, one paused spare), each with its own BMC Secret. Each cluster lives
 * in its own namespace `fleet-<k>` with its own hosts: a Metal3Machine takes hosts of its own
 * namespace only, so K clusters in one namespace would need K disjoint host selectors to be the
 * same shape. Hosts come unregistered (no status): the baremetal-operator simulator registers them,
 * where the sample path seeds their status.
 */

import { growPoolFor, planHosts, sampleSize } from '../../infra/local/dev/hosts.ts';
import { sampleMac } from '../../infra/local/sim/bmo-hosts.ts';
import type { IPPoolSpec } from '../../shared/api/index.ts';
import type { KubeObject } from '../../shared/kube/types.ts';

/** The sample's namespace, replaced by each cluster's own. */
const SAMPLE_NAMESPACE = 'metal3';
export const HOSTS_PER_MACHINE = 1.5;

/** `total` split into `parts` whole shares, the first ones one larger. */
export function split(total: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0));
}

export const hostsFor = (machines: number): number => Math.ceil(machines * HOSTS_PER_MACHINE);

/** Every `namespace: <from>` in an object (metadata and references), as `to`. */
function renamespace<T>(value: T, from: string, to: string): T {
  if (Array.isArray(value)) return value.map((v) => renamespace(v, from, to)) as T;
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      k === 'namespace' && v === from ? to : renamespace(v, from, to),
    ]),
  ) as T;
}

/** A registered-to-be host and its BMC Secret, as a user writes them. */
function hostObjects(
  namespace: string,
  name: string,
  index: number,
  labels: Record<string, string>,
  annotations: Record<string, string>,
): KubeObject[] {
  const credentialsName = `${name}-bmc-secret`;
  return [
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: credentialsName, namespace },
      type: 'Opaque',
      stringData: { username: 'admin', password: 'password' },
    } as KubeObject,
    {
      apiVersion: 'metal3.io/v1alpha1',
      kind: 'BareMetalHost',
      metadata: {
        name,
        namespace,
        labels,
        ...(Object.keys(annotations).length ? { annotations } : {}),
      },
      spec: {
        online: false,
        bootMACAddress: sampleMac(index),
        bmc: { address: `ipmi://192.168.111.1:${6230 + (index % 1000)}`, credentialsName },
      },
    },
  ];
}

export interface FleetCluster {
  namespace: string;
  machines: number;
  hosts: number;
  objects: KubeObject[];
}

/**
 * `clusters` copies of the CAPM3 sample holding `machines` in all (split as evenly as whole numbers
 * go), each with 1.5× its machines in hosts; host MAC addresses are unique across the fleet.
 */
export function fleetClusters(
  sample: readonly KubeObject[],
  machines: number,
  clusters: number,
): FleetCluster[] {
  if (!Number.isInteger(clusters) || clusters < 1) throw new Error(`clusters must be ≥ 1, not ${clusters}`);
  if (machines < clusters) throw new Error(`${machines} machines cannot make ${clusters} clusters`);
  let hostIndex = 0;
  return split(machines, clusters).map((n, k) => {
    const namespace = `fleet-${k}`;
    const size = sampleSize(n, hostsFor(n));
    const objects: KubeObject[] = [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }];
    for (const [i, plan] of planHosts(size).entries()) {
      const name = `node-${String(i).padStart(4, '0')}`;
      objects.push(...hostObjects(namespace, name, hostIndex++, plan.labels, plan.annotations));
    }
    for (const original of sample) {
      if (original.kind === 'Namespace') continue;
      const obj = renamespace(structuredClone(original), SAMPLE_NAMESPACE, namespace);
      const spec = obj.spec as { replicas?: number } | undefined;
      if (obj.kind === 'KubeadmControlPlane' && spec) spec.replicas = size.controlPlane;
      if (obj.kind === 'MachineDeployment' && spec) spec.replicas = size.workers;
      if (obj.kind === 'IPPool' && obj.spec) {
        const poolSpec = obj.spec as IPPoolSpec;
        poolSpec.pools = growPoolFor(poolSpec, n).pools;
      }
      objects.push(obj);
    }
    return { namespace, machines: n, hosts: size.hosts, objects };
  });
}

/** The vMetal network of the claims run: a /16 of its own (no CAPM3 pool of the sample overlaps it). */
export const VMETAL_FLEET_NETWORK = {
  'metal3.vcluster.com/network-cidr': '10.60.0.1/16',
  'metal3.vcluster.com/network-ip-range': '10.60.0.10-10.60.255.250',
};

export interface VmetalFleet {
  claims: number;
  hosts: number;
  /** Per tenant (namespace/name): its wanted count per node type. */
  tenants: { namespace: string; name: string; counts: Record<string, number> }[];
  objects: KubeObject[];
}

/**
 * A vMetal fleet alone (no Cluster API objects) of `claims` NodeClaims: the vMetal sample's
 * catalogue, provider and tenants (infra/local/sample-vmetal/) with the tenants' counts scaled to
 * `claims` (each tenant half, each half split small/large), the provider's network widened to a
 * /16, and 1.5× the claims in hosts, all `role=worker, rack=a` so every type fits whatever order
 * hosts are taken in. The hosts live in the sample's host namespace (`metal3`).
 */
export function vmetalFleet(sample: readonly KubeObject[], claims: number): VmetalFleet {
  if (!Number.isInteger(claims) || claims < 1) throw new Error(`claims must be ≥ 1, not ${claims}`);
  const objects: KubeObject[] = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: SAMPLE_NAMESPACE } },
  ];
  const hosts = hostsFor(claims);
  for (let i = 0; i < hosts; i++)
    objects.push(
      ...hostObjects(
        SAMPLE_NAMESPACE,
        `vmetal-${String(i).padStart(5, '0')}`,
        i,
        { role: 'worker', rack: 'a' },
        {},
      ),
    );
  const declarations = sample.filter(
    (o) =>
      o.kind === 'ConfigMap' && o.metadata.labels?.['platform.sim.metal3fn.io/tenant-cluster'] !== undefined,
  );
  if (declarations.length === 0) throw new Error('the vMetal sample declares no tenant cluster');
  const shares = split(claims, declarations.length);
  const tenants: VmetalFleet['tenants'] = [];
  for (const original of sample) {
    const obj = structuredClone(original);
    const i = declarations.indexOf(original);
    if (i >= 0) {
      const [small, large] = split(shares[i]!, 2);
      const counts = { small: small!, large: large! };
      (obj as { data?: Record<string, string> }).data = Object.fromEntries(
        Object.entries(counts).map(([k, v]) => [k, String(v)]),
      );
      tenants.push({ namespace: obj.metadata.namespace!, name: obj.metadata.name!, counts });
    }
    if (obj.kind === 'NodeProvider') {
      const spec = obj.spec as { properties?: Record<string, string> };
      spec.properties = { ...spec.properties, ...VMETAL_FLEET_NETWORK };
    }
    objects.push(obj);
  }
  return { claims, hosts, tenants, objects };
}
