/**
 * Which BareMetalHost a Metal3Machine may take (pure). Spec §5 with DESIGN.md §2's decisions:
 * own host first (idempotent), node-reuse hosts next (never falling back), else a uniformly random
 * choice among ready/available hosts, those of the machine's failure domain first (any other when
 * none there is available, as CAPM3's pickHost).
 * Hosts are read as the API returns them (another controller owns their schema).
 */

import type { BareMetalHost } from '../api/baremetalhost.ts';
import {
  FAILURE_DOMAIN_LABEL,
  HOST_PAUSED_ANNOTATION,
  NODE_REUSE_LABEL,
  UNHEALTHY_ANNOTATIONS,
} from '../api/wellknown.ts';
import { type CompiledSelector, matchesSelector } from '../selectors/labels.ts';
import { type HostConsumer, hostConsumerRef, isHeldBy } from './consumer.ts';

/** States from which a host can be provisioned. */
export const SELECTABLE_STATES: ReadonlySet<string> = new Set(['ready', 'available']);

/** Field access on a raw host (plain JSON from the API server). */
export const hostState = (h: BareMetalHost): string => h.status?.provisioning?.state ?? '';
/** Whether the host carries an image (or a custom deploy): its provisioning was requested. */
export function hostProvisioningRequested(host: BareMetalHost): boolean {
  return Boolean(host.spec?.image?.url || host.spec?.customDeploy?.method);
}
export const hostErrorMessage = (h: BareMetalHost): string => h.status?.errorMessage ?? '';

/** The node-reuse label values accepted for a KubeadmControlPlane or MachineDeployment name. */
export function nodeReuseValues(
  owner: { kind: 'KubeadmControlPlane' | 'MachineDeployment'; name: string } | undefined,
): string[] {
  if (!owner?.name) return [];
  return [owner.name, `${owner.kind === 'KubeadmControlPlane' ? 'cp' : 'md'}-${owner.name}`];
}

/** The label value this project writes on release (seed 001: the CAPI object's name). */
export const nodeReuseLabelValue = (ownerName: string): string => ownerName;

export type HostClass =
  | { kind: 'own' }
  | { kind: 'reuse'; ready: boolean }
  | { kind: 'available' }
  | { kind: 'excluded'; reason: string };

export interface SelectionInput {
  consumer: HostConsumer;
  selector: CompiledSelector;
  /** Accepted node-reuse label values; empty when the machine has no KCP/MD owner. */
  reuseValues: readonly string[];
}

/** Why a host can never be chosen, regardless of consumer or state, as a code and a message. */
export function hostExclusionCode(
  h: BareMetalHost,
): { code: 'Deleting' | 'InError' | 'Paused' | 'Unhealthy'; message: string } | undefined {
  if (h.metadata.deletionTimestamp) return { code: 'Deleting', message: 'being deleted' };
  if (hostErrorMessage(h)) return { code: 'InError', message: `in error: ${hostErrorMessage(h)}` };
  const ann = h.metadata.annotations ?? {};
  if (Object.hasOwn(ann, HOST_PAUSED_ANNOTATION)) return { code: 'Paused', message: 'paused' };
  for (const a of UNHEALTHY_ANNOTATIONS) {
    if (Object.hasOwn(ann, a)) return { code: 'Unhealthy', message: `marked unhealthy (${a})` };
  }
  return undefined;
}

/** Why a host can never be chosen, regardless of consumer or state (undefined when none applies). */
export const hostExclusion = (h: BareMetalHost): string | undefined => hostExclusionCode(h)?.message;

/** Classifies one host for one machine. */
export function classifyHost(h: BareMetalHost, input: SelectionInput): HostClass {
  const ref = hostConsumerRef(h);
  if (isHeldBy(ref, input.consumer, h.metadata.namespace)) return { kind: 'own' };
  if (!matchesSelector(h.metadata.labels, input.selector))
    return { kind: 'excluded', reason: 'does not match hostSelector' };
  const reuse = h.metadata.labels?.[NODE_REUSE_LABEL];
  let reusable = false;
  if (reuse !== undefined) {
    if (!input.reuseValues.includes(reuse))
      return { kind: 'excluded', reason: `booked for node reuse by "${reuse}"` };
    // A matching label bypasses a booking consumerRef (a Cluster), never another machine's claim.
    if (ref && ref.kind !== 'Cluster')
      return { kind: 'excluded', reason: `consumed by ${ref.kind} ${ref.namespace ?? ''}/${ref.name}` };
    reusable = true;
  } else if (ref) {
    return { kind: 'excluded', reason: `consumed by ${ref.kind} ${ref.namespace ?? ''}/${ref.name}` };
  }
  const excl = hostExclusion(h);
  if (excl) return { kind: 'excluded', reason: excl };
  const selectable = SELECTABLE_STATES.has(hostState(h));
  if (reusable) return { kind: 'reuse', ready: selectable };
  if (!selectable)
    return { kind: 'excluded', reason: `state "${hostState(h) || '<none>'}" is not ready/available` };
  return { kind: 'available' };
}

export type Choice =
  | { kind: 'own'; host: BareMetalHost }
  | { kind: 'reuse'; host: BareMetalHost }
  | { kind: 'available'; host: BareMetalHost }
  | { kind: 'wait'; reason: string }
  | { kind: 'none'; reason: string };

/** Uniform random pick; `random` returns [0, 1) (injectable for tests). */
export function pickRandom<T>(items: readonly T[], random: () => number = Math.random): T | undefined {
  if (items.length === 0) return undefined;
  const i = Math.min(items.length - 1, Math.max(0, Math.floor(random() * items.length)));
  return items[i];
}

/** Hosts in the failure domain when one is asked for (non-empty), else all. */
export function narrowToFailureDomain(
  hosts: readonly BareMetalHost[],
  failureDomain: string | undefined,
): BareMetalHost[] {
  if (!failureDomain) return [...hosts];
  return hosts.filter((h) => h.metadata.labels?.[FAILURE_DOMAIN_LABEL] === failureDomain);
}

/**
 * Chooses a host: own > node reuse (waits while a booked host is not ready; never falls back) >
 * random available in the failure domain > random available.
 */
export function chooseHost(
  hosts: readonly BareMetalHost[],
  input: SelectionInput & { failureDomain?: string | undefined },
  random: () => number = Math.random,
): Choice {
  const reuse: BareMetalHost[] = [];
  let reuseNotReady: BareMetalHost | undefined;
  const available: BareMetalHost[] = [];
  for (const h of hosts) {
    const c = classifyHost(h, input);
    if (c.kind === 'own') return { kind: 'own', host: h };
    if (c.kind === 'reuse') {
      reuse.push(h);
      if (!c.ready) reuseNotReady ??= h;
    } else if (c.kind === 'available') available.push(h);
  }
  if (reuse.length > 0) {
    if (reuseNotReady) {
      return {
        kind: 'wait',
        reason: `host ${reuseNotReady.metadata.name} booked for node reuse is in state "${hostState(reuseNotReady) || '<none>'}"`,
      };
    }
    return { kind: 'reuse', host: pickRandom(reuse, random)! };
  }
  // CAPM3 pickHost: the failure domain is a preference, not a filter.
  const inDomain = narrowToFailureDomain(available, input.failureDomain);
  const pick = pickRandom(inDomain.length > 0 ? inDomain : available, random);
  if (!pick) return { kind: 'none', reason: `no available host found (${hosts.length} considered)` };
  return { kind: 'available', host: pick };
}
