/**
 * Pure status edits for the Metal3Machine (v1beta1 shape): the `KubernetesNodeReady` condition
 * (and the shared `Ready` summary), `ready`, addresses and the failure fields. They mutate the raw object
 * handed out by optimisticUpdate, so fields we do not model survive the read-modify-write.
 */
import { statusOf } from '../../shared/allocation/objects.ts';
import {
  type BareMetalHost,
  ConditionsSchema,
  type KubeObject,
  type MachineAddress,
} from '../../shared/api/index.ts';
// One Ready summary for every function that writes Metal3Machine conditions (selectHost's), so two
// functions never flip Ready back and forth.
import { setMachineCondition } from '../../shared/capi/conditions.ts';

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

/**
 * Applies an edit to `obj.status` in place. The status is read key by key (the machine may have
 * been read through its envelope only): conditions or addresses that do not parse count as none.
 */
export function editStatus(obj: KubeObject, edit: StatusEdit, now: Date): void {
  const status = statusOf(obj);
  const conditions = ConditionsSchema.safeParse(status.conditions).data;
  const prev = (conditions ?? []).find((c) => c.type === edit.condition.type);
  if (edit.ready !== undefined) {
    status.ready = edit.ready;
    // selectHost's phase rule (Provisioning until ready), applied in the same write, so selectHost
    // never needs a write of its own when ready flips.
    if (status.phase === 'Provisioning' || status.phase === 'Provisioned')
      status.phase = edit.ready ? 'Provisioned' : 'Provisioning';
  }
  const addresses = Array.isArray(status.addresses) ? status.addresses : [];
  if (addresses.length === 0 && edit.fallbackAddresses?.length) status.addresses = edit.fallbackAddresses;
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
  const c = edit.condition;
  status.conditions = setMachineCondition(
    conditions,
    {
      type: c.type,
      status: c.status,
      ...(c.status !== 'True' && c.severity ? { severity: c.severity } : {}),
      ...(c.reason ? { reason: c.reason } : {}),
      ...(c.message ? { message: c.message } : {}),
    },
    now,
  );
}

/**
 * Whether the machine carries a failure another step recorded (CAPI v1beta1: a failed machine is
 * left alone). A failure this step recorded itself (its condition holds one of `ownErrorReasons`
 * with the same message) is re-evaluated instead: the user may have fixed the Nodes.
 */
export function failedByAnotherStep(status: unknown, ownErrorReasons: ReadonlySet<string>): boolean {
  const s = (status ?? {}) as { failureReason?: unknown; failureMessage?: unknown; conditions?: unknown };
  if (!s.failureReason && !s.failureMessage) return false;
  const cond = (ConditionsSchema.safeParse(s.conditions).data ?? []).find((c) => c.type === NODE_READY);
  const ours = Boolean(cond?.reason && ownErrorReasons.has(cond.reason) && cond.message === s.failureMessage);
  return !ours;
}
