/**
 * The phase of a machine as a person reads it, derived from the objects alone (pure), so the live
 * view, the summary and the stuck-report all agree.
 */
import type { KubeObject } from '../../../shared/kube/types.ts';

export const PHASES = [
  'waiting for host',
  'associated',
  'data ready',
  'provisioning',
  'providerID',
  'Ready',
] as const;
export type Phase = (typeof PHASES)[number] | 'failed' | 'deleting';

const HOST_ANNOTATION = 'metal3.io/BareMetalHost';

export interface MachineObjects {
  m3m: KubeObject;
  machine?: KubeObject | undefined;
  host?: KubeObject | undefined;
}

const get = (o: unknown, ...path: string[]): unknown =>
  path.reduce<unknown>(
    (v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined),
    o,
  );

export function machinePhase({ m3m, machine, host }: MachineObjects): Phase {
  if (m3m.metadata.deletionTimestamp) return 'deleting';
  if (get(m3m, 'status', 'failureReason') || get(m3m, 'status', 'failureMessage')) return 'failed';
  const machineReady =
    Boolean(get(machine, 'status', 'nodeRef')) && get(machine, 'status', 'phase') === 'Running';
  if (get(m3m, 'spec', 'providerID') && get(m3m, 'status', 'ready') === true && machineReady) return 'Ready';
  if (get(m3m, 'spec', 'providerID')) return 'providerID';
  const state = get(host, 'status', 'provisioning', 'state');
  if (state === 'provisioning' || state === 'provisioned') return 'provisioning';
  if (get(host, 'spec', 'image', 'url')) return 'data ready';
  if (m3m.metadata.annotations?.[HOST_ANNOTATION]) return 'associated';
  return 'waiting for host';
}

/**
 * The phase of a vMetal NodeClaim on the same scale: a host held (associated), its image set (data
 * ready), the host provisioning, Provisioned (the claim's counterpart of a providerID), Available
 * (Ready: joined its tenant cluster).
 */
export function claimPhase(claim: KubeObject, host: KubeObject | undefined): Phase {
  if (claim.metadata.deletionTimestamp) return 'deleting';
  const phase = get(claim, 'status', 'phase');
  if (phase === 'Failed') return 'failed';
  if (phase === 'Available') return 'Ready';
  const conds = (get(claim, 'status', 'conditions') as { type: string; status: string }[] | undefined) ?? [];
  if (conds.some((c) => c.type === 'Provisioned' && c.status === 'True')) return 'providerID';
  const state = get(host, 'status', 'provisioning', 'state');
  if (state === 'provisioning' || state === 'provisioned') return 'provisioning';
  if (get(host, 'spec', 'image', 'url')) return 'data ready';
  if (get(claim, 'status', 'host')) return 'associated';
  return 'waiting for host';
}

/** The conditions of a stuck object, as one line a person can act on. */
export function conditionsLine(obj: KubeObject | undefined): string {
  const conds =
    (get(obj, 'status', 'conditions') as
      | { type: string; status: string; reason?: string; message?: string }[]
      | undefined) ?? [];
  const bad = conds.filter((c) => c.status !== 'True');
  const failure = [
    get(obj, 'status', 'failureReason'),
    get(obj, 'status', 'failureMessage'),
    get(obj, 'status', 'errorMessage'),
  ]
    .filter(Boolean)
    .join(': ');
  const parts = bad.map(
    (c) => `${c.type}=${c.status}${c.reason ? ` (${c.reason}${c.message ? `: ${c.message}` : ''})` : ''}`,
  );
  if (failure) parts.unshift(failure);
  return parts.join('; ') || 'no conditions reported';
}
