import type { IPPoolSpec } from '../../../shared/api/index.ts';
import { poolRanges } from '../../../shared/ipam/allocate.ts';
import { optionError } from './options.ts';

/**
 * The sample's BareMetalHosts: more hosts than machines, labelled for the sample's host
 * selectors (role=control-plane / role=worker), with a few that must never be chosen
 * (unhealthy, paused) so the run shows the exclusions at work.
 */
export interface HostPlan {
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export interface SampleSize {
  controlPlane: number;
  workers: number;
  hosts: number;
}

/** Machines: a control plane of up to 3, the rest workers. Hosts: default machines + 3. */
export function sampleSize(machines: number, hosts?: number): SampleSize {
  if (!Number.isInteger(machines) || machines < 1)
    throw optionError('machines', 'a whole number ≥ 1', machines);
  const controlPlane = Math.min(3, machines);
  const workers = machines - controlPlane;
  const h = hosts ?? machines + 3;
  if (!Number.isInteger(h) || h < machines)
    throw optionError('hosts', `a whole number ≥ --machines (${machines})`, hosts);
  return { controlPlane, workers, hosts: h };
}

/**
 * Host i: the first controlPlane (+1 spare when hosts allow) are `role=control-plane`, the rest `role=worker`.
 * When there are spares beyond what the machines need, one worker host is marked unhealthy and one
 * control-plane spare is paused: excluded hosts a user would have in a real fleet.
 */
export function planHosts(size: SampleSize, prefix = 'node'): HostPlan[] {
  const spare = size.hosts - (size.controlPlane + size.workers);
  // One spare control-plane host when there is a spare at all; never at a worker's expense.
  const cpHosts = size.controlPlane + (spare >= 1 ? 1 : 0);
  const plans: HostPlan[] = [];
  for (let i = 0; i < size.hosts; i++) {
    const role = i < cpHosts ? 'control-plane' : 'worker';
    plans.push({ name: `${prefix}-${i}`, labels: { role }, annotations: {} });
  }
  if (spare >= 2) {
    const unhealthy = plans.findLast((p) => p.labels.role === 'worker');
    if (unhealthy) unhealthy.annotations['capm3.metal3.io/unhealthy'] = '';
  }
  if (spare >= 3 && cpHosts > size.controlPlane) {
    plans[cpHosts - 1]!.annotations['baremetalhost.metal3.io/paused'] = '';
  }
  return plans;
}

type PoolEntry = NonNullable<IPPoolSpec['pools']>[number];

/** Addresses the entries of a pool spec hold (whole ranges: the sample reserves none of them). */
export function poolCapacity(spec: IPPoolSpec): number {
  return poolRanges(spec).reduce((n, r) => n + Math.max(0, Number(r.hi - r.lo + 1n)), 0);
}

/** One added range: a whole /24 of 241 addresses with its own gateway. */
const ADDED_RANGE_SIZE = 241;

/**
 * The sample's IPPool grown to fit `machines` addresses (each machine takes one): whole /24s
 * `10.<a>.<b>.10–250` with their own gateway are appended, after the sample's own ranges, until
 * the pool holds at least `machines` addresses. Pure; ranges already there are never changed.
 */
export function growPoolFor(spec: IPPoolSpec, machines: number): { pools: PoolEntry[]; added: number } {
  const pools = [...(spec.pools ?? [])];
  let added = 0;
  for (let capacity = poolCapacity(spec); capacity < machines; capacity += ADDED_RANGE_SIZE) {
    const a = Math.floor(added / 256);
    const b = added % 256;
    pools.push({
      start: `10.${200 + a}.${b}.10`,
      end: `10.${200 + a}.${b}.250`,
      gateway: `10.${200 + a}.${b}.1`,
      prefix: 24,
    });
    added++;
  }
  return { pools, added };
}
