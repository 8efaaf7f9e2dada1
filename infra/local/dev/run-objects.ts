/**
 * What the run applied says (pure): how many machines to wait for, which clusters there are, what
 * a scale-down removes, and which hosts someone else held before the run. A scale-down touches
 * only these objects, so `--scale-down` is safe against a shared cluster (`--kubeconfig`).
 */
import type { KubeObject } from '../../../shared/kube/types.ts';

type Spec = Record<string, any>;
const specOf = (o: KubeObject): Spec => (o.spec ?? {}) as Spec;
const replicasOf = (o: KubeObject): number => {
  const r = specOf(o).replicas;
  return typeof r === 'number' ? r : 1;
};
const unowned = (o: KubeObject) => (o.metadata.ownerReferences ?? []).length === 0;
const isMetal3 = (ref: { kind?: string } | undefined, kind: string) => ref?.kind === kind;

/**
 * The machines the run's objects ask for on our infrastructure: KubeadmControlPlane and
 * MachineDeployment replicas, those of MachineSets no deployment owns, and Machines of their own,
 * each only when its infrastructure is a Metal3Machine (template).
 */
export function expectedMachines(applied: KubeObject[]): number {
  let n = 0;
  for (const o of applied) {
    const s = specOf(o);
    if (
      o.kind === 'KubeadmControlPlane' &&
      isMetal3(s.machineTemplate?.infrastructureRef, 'Metal3MachineTemplate')
    )
      n += replicasOf(o);
    else if (
      o.kind === 'MachineDeployment' &&
      isMetal3(s.template?.spec?.infrastructureRef, 'Metal3MachineTemplate')
    )
      n += replicasOf(o);
    else if (
      o.kind === 'MachineSet' &&
      unowned(o) &&
      isMetal3(s.template?.spec?.infrastructureRef, 'Metal3MachineTemplate')
    )
      n += replicasOf(o);
    else if (o.kind === 'Machine' && unowned(o) && isMetal3(s.infrastructureRef, 'Metal3Machine')) n += 1;
  }
  return n;
}

export interface ScaleDownPlan {
  /** Scaled to zero replicas. */
  scale: {
    kind: 'KubeadmControlPlane' | 'MachineDeployment' | 'MachineSet';
    namespace: string;
    name: string;
  }[];
  /** Deleted. */
  remove: { kind: 'Machine'; namespace: string; name: string }[];
}

/** What `--scale-down` does to what this run applied, and nothing else. */
export function scaleDownPlan(applied: KubeObject[]): ScaleDownPlan {
  const plan: ScaleDownPlan = { scale: [], remove: [] };
  for (const o of applied) {
    const at = { namespace: o.metadata.namespace!, name: o.metadata.name! };
    if (o.kind === 'KubeadmControlPlane' || o.kind === 'MachineDeployment')
      plan.scale.push({ kind: o.kind, ...at });
    else if (o.kind === 'MachineSet' && unowned(o)) plan.scale.push({ kind: 'MachineSet', ...at });
    else if (o.kind === 'Machine' && unowned(o)) plan.remove.push({ kind: 'Machine', ...at });
  }
  return plan;
}

/** The Clusters the run applied, `namespace/name`. */
export const clustersOf = (applied: KubeObject[]): string[] =>
  applied.filter((o) => o.kind === 'Cluster').map((o) => `${o.metadata.namespace}/${o.metadata.name}`);

/** Clusters whose `<cluster>-kubeconfig` Secret the run brings itself (no embedded server for them). */
export function clustersWithOwnKubeconfig(objects: KubeObject[], defaultNamespace: string): Set<string> {
  const out = new Set<string>();
  for (const o of objects)
    if (o.kind === 'Secret' && o.apiVersion === 'v1' && o.metadata.name?.endsWith('-kubeconfig'))
      out.add(
        `${o.metadata.namespace ?? defaultNamespace}/${o.metadata.name.slice(0, -'-kubeconfig'.length)}`,
      );
  return out;
}

/**
 * Hosts held by someone else: a consumerRef naming an object the run did not apply. Their state
 * before the run (or as applied) is what the release check holds them to.
 */
export function foreignHosts(hosts: KubeObject[], applied: KubeObject[]): KubeObject[] {
  const ours = new Set(applied.map((o) => `${o.kind}|${o.metadata.namespace ?? ''}|${o.metadata.name}`));
  return hosts.filter((h) => {
    const ref = specOf(h).consumerRef as { kind?: string; namespace?: string; name?: string } | undefined;
    if (!ref?.name) return false;
    return !ours.has(`${ref.kind}|${ref.namespace || h.metadata.namespace}|${ref.name}`);
  });
}
