/**
 * What a run owns, from ownerReferences alone (pure): an object belongs to a set of roots when it
 * is one of them or an owner of it (followed upward through the objects known) belongs. A run's
 * machines are the Machines that belong to what it applied (a KubeadmControlPlane, a
 * MachineDeployment through its MachineSet, a MachineSet, a Machine); what the product made for
 * them is what belongs to their Metal3Machines (claim, Metal3Data, IP claims and addresses, data
 * Secrets).
 */
import type { KubeObject } from '../../../shared/kube/types.ts';

export type ByUid = ReadonlyMap<string, KubeObject>;

export const byUid = (objects: Iterable<KubeObject>): Map<string, KubeObject> => {
  const m = new Map<string, KubeObject>();
  for (const o of objects) if (o.metadata.uid) m.set(o.metadata.uid, o);
  return m;
};

export function belongsTo(o: KubeObject, roots: ReadonlySet<string>, known: ByUid): boolean {
  const seen = new Set<string>();
  const walk = (x: KubeObject): boolean => {
    const uid = x.metadata.uid;
    if (uid && roots.has(uid)) return true;
    if (uid) {
      if (seen.has(uid)) return false;
      seen.add(uid);
    }
    for (const ref of x.metadata.ownerReferences ?? []) {
      if (!ref.uid) continue;
      if (roots.has(ref.uid)) return true;
      const owner = known.get(ref.uid);
      if (owner && walk(owner)) return true;
    }
    return false;
  };
  return walk(o);
}

/** The Metal3Machines of the run's machines: owned by a Machine that belongs to the applied roots. */
export function runMetal3Machines(objects: KubeObject[], applied: ReadonlySet<string>): KubeObject[] {
  const known = byUid(objects);
  return objects.filter((o) => {
    if (o.kind !== 'Metal3Machine') return false;
    const machine = o.metadata.ownerReferences?.find((r) => r.kind === 'Machine');
    const owner = machine?.uid ? known.get(machine.uid) : undefined;
    return Boolean(owner && belongsTo(owner, applied, known));
  });
}
