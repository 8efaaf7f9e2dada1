/**
 * After scale-down: verifies nothing leaked. Pure over the dumped objects, so the end-to-end
 * test and `metal3fn dev --scale-down` apply the same rules.
 */
import type { KubeObject } from '../../../shared/kube/types.ts';

export interface ReleaseFinding {
  object: string;
  problem: string;
}

const ref = (o: KubeObject) =>
  `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;
const DATA_SECRET_TYPE = 'infrastructure.cluster.x-k8s.io/secret';
const OUR_FINALIZER = /metal3|ipam|cluster\.x-k8s\.io/;

const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';

export function checkRelease(objects: KubeObject[]): ReleaseFinding[] {
  const findings: ReleaseFinding[] = [];
  const secrets = new Map(
    objects.filter((o) => o.kind === 'Secret').map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, o]),
  );
  for (const o of objects) {
    switch (o.kind) {
      case 'Metal3Machine':
      case 'Metal3Data':
      case 'Metal3DataClaim':
      case 'IPClaim':
      case 'IPAddress':
        findings.push({ object: ref(o), problem: 'still exists after scale-down' });
        break;
      case 'Secret':
        if ((o as { type?: string }).type === DATA_SECRET_TYPE)
          findings.push({ object: ref(o), problem: 'rendered data Secret left behind' });
        break;
      case 'Metal3DataTemplate':
      case 'IPPool': {
        // What the allocations recorded on the template or pool must go with them: the index or
        // address entries, and the burst registry (ADR 012).
        const status = (o.status ?? {}) as {
          indexes?: Record<string, unknown>;
          allocating?: Record<string, unknown>;
        };
        for (const field of ['indexes', 'allocating'] as const) {
          const left = Object.keys(status[field] ?? {});
          if (left.length > 0)
            findings.push({
              object: ref(o),
              problem: `status.${field} not empty: ${left.sort().join(', ')}`,
            });
        }
        break;
      }
      case 'BareMetalHost': {
        const spec = (o.spec ?? {}) as Record<string, unknown>;
        const status = (o.status ?? {}) as { provisioning?: { state?: string } };
        if (spec.consumerRef)
          findings.push({ object: ref(o), problem: `still consumed by ${JSON.stringify(spec.consumerRef)}` });
        const state = status.provisioning?.state;
        if (state !== 'available' && state !== 'ready')
          findings.push({ object: ref(o), problem: `state is '${state}', not available` });
        if (spec.image) findings.push({ object: ref(o), problem: 'image not cleared' });
        // A released host's BMC credentials Secret must not carry a cluster label any more
        // (clusterctl move would take it away with the cluster).
        const bmc = (spec.bmc as { credentialsName?: string } | undefined)?.credentialsName;
        const secret = !spec.consumerRef && bmc ? secrets.get(`${o.metadata.namespace}/${bmc}`) : undefined;
        const label = secret?.metadata.labels?.[CLUSTER_NAME_LABEL];
        if (secret && label)
          findings.push({
            object: ref(secret),
            problem: `BMC credentials Secret of released ${ref(o)} still labelled ${CLUSTER_NAME_LABEL}=${label}`,
          });
        break;
      }
    }
    const stuck = (o.metadata.finalizers ?? []).filter((f) => OUR_FINALIZER.test(f));
    if (o.metadata.deletionTimestamp && stuck.length) {
      findings.push({ object: ref(o), problem: `deleting but held by finalizers ${stuck.join(', ')}` });
    }
  }
  return findings;
}
