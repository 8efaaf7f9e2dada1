/**
 * The objects an event concerns besides its own, found in the cache: a host's consumer machine, a
 * claim's machine, a Node's machines, a template's or pool's waiting claims; and the FIFO groups
 * that serialize allocations per template and per pool.
 */

import { INFRA_GROUP, type KindName } from '../api/resources.ts';
import { CLUSTER_NAME_LABEL, HOSTNAME_LABEL, NODE_UUID_LABEL } from '../api/wellknown.ts';
import type { KubeObject } from '../kube/types.ts';
import { objectGroup } from '../queue/message.ts';
import type { CacheView } from './cache.ts';
import { groupOf, isDeleting, nsOf, ownerOfKind, refOf, spec } from './predicates.ts';
import type { Target } from './types.ts';

export function consumerMachine(bmh: KubeObject, cache: CacheView): KubeObject | undefined {
  const ref = refOf(spec(bmh).consumerRef);
  if (
    ref.kind !== 'Metal3Machine' ||
    !ref.name ||
    (ref.apiVersion && groupOf(ref.apiVersion) !== INFRA_GROUP)
  )
    return undefined;
  return cache.get('Metal3Machine', ref.namespace || nsOf(bmh), ref.name);
}

export function claimOwnerMachine(claim: KubeObject, cache: CacheView): KubeObject | undefined {
  const owner = ownerOfKind(claim, 'Metal3Machine', true) ?? ownerOfKind(claim, 'Metal3Machine');
  return owner ? cache.get('Metal3Machine', nsOf(claim), owner.name) : undefined;
}

/** The machine a Metal3Data serves: through its claim (spec.claim), else its own Metal3Machine owner. */
export function dataMachine(data: KubeObject, cache: CacheView): KubeObject | undefined {
  const ref = refOf(spec(data).claim);
  const claim = ref?.name ? cache.get('Metal3DataClaim', ref.namespace || nsOf(data), ref.name) : undefined;
  const viaClaim = claim ? claimOwnerMachine(claim, cache) : undefined;
  if (viaClaim) return viaClaim;
  const owner = ownerOfKind(data, 'Metal3Machine');
  return owner ? cache.get('Metal3Machine', nsOf(data), owner.name) : undefined;
}

export function infraMachineOfMachine(machine: KubeObject, cache: CacheView): KubeObject | undefined {
  const ref = refOf(spec(machine).infrastructureRef);
  if (ref.kind !== 'Metal3Machine' || !ref.name) return undefined;
  return cache.get('Metal3Machine', ref.namespace || nsOf(machine), ref.name);
}

export const poolKey = (o: KubeObject): { ns: string; name: string } | undefined => {
  const p = refOf(spec(o).pool);
  return p?.name ? { ns: p.namespace || nsOf(o), name: p.name } : undefined;
};

export function deletingPoolOf(o: KubeObject, cache: CacheView): Target[] {
  const p = poolKey(o);
  const pool = p ? cache.get('IPPool', p.ns, p.name) : undefined;
  return pool && isDeleting(pool) ? [{ kind: 'IPPool', object: pool }] : [];
}

export function pendingClaimsOfPool(pool: { ns: string; name: string }, cache: CacheView): Target[] {
  return cache
    .byIndex('pendingIpClaimPool', pool.ns, pool.name)
    .map((object) => ({ kind: 'IPClaim', object }));
}

/** The template a claim or Metal3Data names (spec.template), else its Metal3DataTemplate owner. */
export function templateOf(o: KubeObject, cache: CacheView): KubeObject | undefined {
  const ref = refOf(spec(o).template);
  if (ref?.name) return cache.get('Metal3DataTemplate', ref.namespace || nsOf(o), ref.name);
  const owner = ownerOfKind(o, 'Metal3DataTemplate', true) ?? ownerOfKind(o, 'Metal3DataTemplate');
  return owner ? cache.get('Metal3DataTemplate', nsOf(o), owner.name) : undefined;
}

/** The template of a claim or Metal3Data, when it is being deleted (it waits for them). */
export function deletingTemplateOf(o: KubeObject, cache: CacheView): Target[] {
  const t = templateOf(o, cache);
  return t && isDeleting(t) ? [{ kind: 'Metal3DataTemplate', object: t }] : [];
}

export const templateGroup = (t: Target): string => {
  const ref = refOf(spec(t.object).template);
  return ref?.name
    ? objectGroup('Metal3DataTemplate', ref.namespace || nsOf(t.object), ref.name)
    : objectGroup('Metal3DataClaim', nsOf(t.object), t.object.metadata.name ?? '');
};
export const poolGroup = (t: Target): string => {
  const p = poolKey(t.object);
  return p
    ? objectGroup('IPPool', p.ns, p.name)
    : objectGroup('IPClaim', nsOf(t.object), t.object.metadata.name ?? '');
};

/** The objects found (of one kind) that satisfy `pred`, as targets. */
export const targetsOf =
  (kind: KindName) =>
  (list: (KubeObject | undefined)[], pred: (o: KubeObject) => boolean = () => true): Target[] =>
    list.filter((o): o is KubeObject => o !== undefined && pred(o)).map((object) => ({ kind, object }));
export const machines = targetsOf('Metal3Machine');
export const notDeleting = (o: KubeObject) => !isDeleting(o);

/** The Metal3Machines a workload Node belongs to, by every way the ProviderID workflow finds them. */
export function machinesOfNode(node: KubeObject, cluster: string, cache: CacheView): KubeObject[] {
  const [clusterNs = '', clusterName = ''] = cluster.split('/');
  const out: (KubeObject | undefined)[] = [];
  const uuid = node.metadata.labels?.[NODE_UUID_LABEL];
  if (uuid) {
    const bmh = cache.byUid('BareMetalHost', uuid);
    if (bmh) out.push(consumerMachine(bmh, cache));
  }
  const pid = String(spec(node).providerID ?? '');
  if (pid.startsWith('metal3://')) {
    const rest = pid.slice('metal3://'.length);
    const parts = rest.split('/');
    if (parts.length === 3) {
      out.push(cache.get('Metal3Machine', parts[0], parts[2]!));
    } else if (parts.length === 1 && rest) {
      const bmh = cache.byUid('BareMetalHost', rest);
      if (bmh) out.push(consumerMachine(bmh, cache));
    }
  }
  const hostname = node.metadata.labels?.[HOSTNAME_LABEL];
  if (hostname) {
    for (const m of cache.byIndex('metal3MachineHostname', clusterNs, hostname)) {
      const label = m.metadata.labels?.[CLUSTER_NAME_LABEL];
      if (label !== undefined && label !== clusterName) continue;
      out.push(m);
    }
  }
  const seen = new Set<string>();
  return out.filter((m): m is KubeObject => {
    if (!m || m.metadata.namespace !== clusterNs) return false;
    const k = m.metadata.name ?? '';
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
