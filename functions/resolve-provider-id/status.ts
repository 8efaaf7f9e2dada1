/**
 * Pure status edits for the Metal3Machine (v1beta1 shape): the `KubernetesNodeReady` condition,
 * the `Ready` summary, `ready`, addresses and the failure fields. They mutate the raw object
 * handed out by optimisticUpdate, so fields we do not model survive the read-modify-write.
 */
import type { BareMetalHost, Condition, MachineAddress } from '../../shared/api/index.ts';

export const NODE_READY = 'KubernetesNodeReady';
export const READY = 'Ready';

/** Reasons this step writes on KubernetesNodeReady; errors among them are ours to clear. */
export const REASON = {
  NodeProviderIDSet: 'NodeProviderIDSet',
  WaitingForNode: 'WaitingForNode',
  WaitingForWorkloadCluster: 'WaitingForWorkloadCluster',
} as const;

type Severity = 'Error' | 'Warning' | 'Info';
export interface ConditionInput {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  severity?: Severity;
}

interface StatusLike {
  ready?: boolean;
  failureReason?: string;
  failureMessage?: string;
  addresses?: MachineAddress[];
  conditions?: Condition[];
  [k: string]: unknown;
}

/** Sets one condition; lastTransitionTime moves only when the status flips. */
export function setCondition(conditions: Condition[], c: ConditionInput, now: string): Condition[] {
  const prev = conditions.find((x) => x.type === c.type);
  const next: Condition = {
    type: c.type,
    status: c.status,
    ...(c.status !== 'True' && c.severity ? { severity: c.severity } : {}),
    ...(c.reason ? { reason: c.reason } : {}),
    ...(c.message ? { message: c.message } : {}),
    lastTransitionTime: prev && prev.status === c.status ? prev.lastTransitionTime : now,
  };
  const out = conditions.filter((x) => x.type !== c.type);
  out.push(next);
  return out.sort((a, b) => (a.type === READY ? -1 : b.type === READY ? 1 : a.type.localeCompare(b.type)));
}

const SEVERITY_RANK: Record<string, number> = { Error: 3, Warning: 2, Info: 1, '': 0 };

/** v1beta1 summary: Ready mirrors the worst of the other conditions. */
export function summarizeReady(conditions: Condition[], now: string): Condition[] {
  const others = conditions.filter((c) => c.type !== READY);
  if (others.length === 0) return conditions;
  const falses = others
    .filter((c) => c.status === 'False')
    .sort((a, b) => (SEVERITY_RANK[b.severity ?? ''] ?? 0) - (SEVERITY_RANK[a.severity ?? ''] ?? 0));
  const worst = falses[0];
  if (worst) {
    return setCondition(
      conditions,
      {
        type: READY,
        status: 'False',
        ...(worst.reason ? { reason: worst.reason } : {}),
        ...(worst.message ? { message: worst.message } : {}),
        severity: (worst.severity || 'Info') as Severity,
      },
      now,
    );
  }
  if (others.some((c) => c.status === 'Unknown'))
    return setCondition(conditions, { type: READY, status: 'Unknown' }, now);
  return setCondition(conditions, { type: READY, status: 'True' }, now);
}

/** Addresses from the host (hostname + NIC IPs), used only when association left none. */
export function addressesFromHost(host: BareMetalHost): MachineAddress[] {
  const out: MachineAddress[] = [];
  const hw = host.status?.hardware;
  for (const nic of hw?.nics ?? []) if (nic.ip) out.push({ type: 'InternalIP', address: nic.ip });
  if (hw?.hostname) out.push({ type: 'Hostname', address: hw.hostname });
  return out;
}

export const hostnamesOf = (addresses: readonly MachineAddress[] | undefined): string[] =>
  (addresses ?? []).filter((a) => a.type === 'Hostname' && a.address).map((a) => a.address);

export interface StatusEdit {
  ready?: boolean;
  condition: ConditionInput;
  /** Terminal error: CAPI v1beta1 failure fields. */
  failure?: { reason: string; message: string };
  /** Addresses to use when the machine has none (association's are kept). */
  fallbackAddresses?: MachineAddress[];
  /** Our own earlier error reasons: when the condition recovers, clear the failure fields they set. */
  ownErrorReasons?: ReadonlySet<string>;
}

/** Applies an edit to `obj.status` in place. */
export function editStatus(obj: { [k: string]: unknown }, edit: StatusEdit, now: string): void {
  if (!obj.status) obj.status = {};
  const status = obj.status as StatusLike;
  const prev = (status.conditions ?? []).find((c) => c.type === edit.condition.type);
  if (edit.ready !== undefined) status.ready = edit.ready;
  if (!status.addresses?.length && edit.fallbackAddresses?.length) status.addresses = edit.fallbackAddresses;
  if (edit.failure) {
    status.failureReason = edit.failure.reason;
    status.failureMessage = edit.failure.message;
  } else if (
    prev?.reason &&
    edit.ownErrorReasons?.has(prev.reason) &&
    status.failureMessage === prev.message
  ) {
    delete status.failureReason;
    delete status.failureMessage;
  }
  status.conditions = summarizeReady(setCondition(status.conditions ?? [], edit.condition, now), now);
}
