/**
 * Cluster API v1beta1 conditions on Metal3Machine / Metal3Cluster status (pure helpers).
 * A condition's lastTransitionTime moves only when its status changes, so a repeat pass that
 * decides the same thing writes nothing (idempotency).
 */
import type { Condition } from '../api/conditions.ts';

export const COND = {
  Ready: 'Ready',
  AssociateBMH: 'AssociateBMH',
  Metal3DataReady: 'Metal3DataReady',
  KubernetesNodeReady: 'KubernetesNodeReady',
  Paused: 'Paused',
  BaremetalInfrastructureReady: 'BaremetalInfrastructureReady',
} as const;

export const REASON = {
  WaitingForOwner: 'WaitingForMetal3MachineOwnerRef',
  WaitingForCluster: 'WaitingForCluster',
  WaitingForClusterInfrastructure: 'WaitingForClusterInfrastructure',
  WaitingForBootstrapReady: 'WaitingForBootstrapReady',
  Paused: 'Paused',
  NoHostAvailable: 'NoAvailableHost',
  WaitingForNodeReuseHost: 'WaitingForNodeReuseHost',
  AssociateBMHFailed: 'AssociateBMHFailed',
  HostLost: 'BareMetalHostLost',
  WaitingForMetal3Data: 'WaitingForMetal3Data',
  WaitingForMetal3DataTemplate: 'WaitingForMetal3DataTemplate',
  WaitingForSecrets: 'WaitingForSecrets',
  Metal3DataFailed: 'Metal3DataFailed',
  InvalidConfiguration: 'InvalidConfiguration',
  WaitingForKubernetesNode: 'WaitingForKubernetesNode',
  Deleting: 'Deleting',
  WaitingForHostDeprovisioning: 'WaitingForHostDeprovisioning',
  WaitingForHostReady: 'WaitingForHostReady',
} as const;

/** A condition to set (its lastTransitionTime is the setter's). */
export interface ConditionInput {
  type: string;
  status: Condition['status'];
  severity?: Condition['severity'];
  reason?: string | undefined;
  message?: string | undefined;
}

const stamp = (d: Date): string => d.toISOString().replace(/\.\d+Z$/, 'Z');

/** Returns the list with `c` set (lastTransitionTime kept when the status did not change). */
export function setCondition(
  conds: readonly Condition[] | undefined,
  c: ConditionInput,
  now: Date,
): Condition[] {
  const list = [...(conds ?? [])];
  const i = list.findIndex((x) => x.type === c.type);
  const prev = i >= 0 ? list[i] : undefined;
  const next: Condition = {
    type: c.type,
    status: c.status,
    ...(c.severity ? { severity: c.severity } : {}),
    ...(c.reason ? { reason: c.reason } : {}),
    ...(c.message ? { message: c.message } : {}),
    lastTransitionTime: prev && prev.status === c.status ? prev.lastTransitionTime : stamp(now),
  };
  if (i >= 0) list[i] = next;
  else list.push(next);
  return list.sort((a, b) =>
    a.type === 'Ready' ? -1 : b.type === 'Ready' ? 1 : a.type < b.type ? -1 : a.type > b.type ? 1 : 0,
  );
}

export const trueCondition = (type: string, reason?: string): ConditionInput => ({
  type,
  status: 'True',
  ...(reason ? { reason } : {}),
});
export const falseCondition = (
  type: string,
  reason: string,
  severity: 'Error' | 'Warning' | 'Info',
  message: string,
): ConditionInput => ({ type, status: 'False', reason, severity, message });

export const getCondition = (conds: readonly Condition[] | undefined, type: string): Condition | undefined =>
  conds?.find((c) => c.type === type);

/**
 * The Metal3Machine `Ready` summary: the first of AssociateBMH, Metal3DataReady, KubernetesNodeReady
 * that is not True decides (its reason and message); all True => Ready.
 */
export function summarizeMachineReady(conds: readonly Condition[] | undefined): ConditionInput {
  for (const type of [COND.AssociateBMH, COND.Metal3DataReady, COND.KubernetesNodeReady]) {
    const c = getCondition(conds, type);
    if (!c) {
      return falseCondition(
        COND.Ready,
        type === COND.KubernetesNodeReady ? REASON.WaitingForKubernetesNode : `Waiting${type}`,
        'Info',
        `${type} not reported yet`,
      );
    }
    if (c.status !== 'True') {
      return falseCondition(
        COND.Ready,
        c.reason ?? `${type}NotTrue`,
        c.severity || 'Info',
        c.message ?? `${type} is ${c.status}`,
      );
    }
  }
  return trueCondition(COND.Ready);
}

/** Sets `c` and recomputes Ready. */
export function setMachineCondition(
  conds: readonly Condition[] | undefined,
  c: ConditionInput,
  now: Date,
): Condition[] {
  const withC = setCondition(conds, c, now);
  return setCondition(withC, summarizeMachineReady(withC), now);
}
