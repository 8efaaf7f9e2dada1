/**
 * Giving a host back: the one rule set (applyRelease) and the one release (releaseHost) for every
 * consumer and every path: a deleted machine's host after deprovisioning (spec §9 steps 4-7), a
 * claim a pass could not associate, a stray claim of a concurrent pass. Also the pure deprovision
 * decisions (what to clear, the power state, when the host is back).
 */

import type { BareMetalHost } from '../api/baremetalhost.ts';
import {
  CAPM3_PAUSE_VALUE,
  CLUSTER_NAME_LABEL,
  CONSUMER_LABEL,
  HOST_PAUSED_ANNOTATION,
} from '../api/wellknown.ts';
import { SKIP } from '../kube/optimistic.ts';
import type { ReconcileContext } from '../reconcile/context.ts';
import { unlabelBmcSecret } from './bmc-secret.ts';
import { type HostConsumer, hostHeldBy } from './consumer.ts';
import { hostProvisioningRequested, hostState } from './eligibility.ts';
import { updateHeldHost } from './held.ts';

/** States in which a host no longer runs the machine's image (spec §9 step 5). */
export const RELEASABLE_STATES: ReadonlySet<string> = new Set([
  '',
  'unmanaged',
  'registering',
  'match profile',
  'inspecting',
  'ready',
  'available',
]);

export function hostReleasable(host: BareMetalHost): boolean {
  const state = hostState(host);
  if (RELEASABLE_STATES.has(state)) return true;
  const poweredOn = host.status?.poweredOn;
  return state === 'externally provisioned' && poweredOn === false;
}

/**
 * The power state to ask for on deprovisioning: on when the host cannot be powered off
 * (disablePowerOff), or with fast track while cleaning is enabled; off otherwise.
 */
export function deprovisionOnline(host: BareMetalHost, fastTrack: boolean): boolean {
  const spec = host.spec ?? {};
  if (spec.disablePowerOff) return true;
  return fastTrack && spec.automatedCleaningMode !== 'disabled';
}

/** A Secret reference as the host and the consumer's status carry it. */
export interface DataRef {
  name?: string | undefined;
  namespace?: string | undefined;
}

/**
 * The data refs the consumer put on the host, as its status records them (CAPM3 checks the
 * Metal3Machine's status.userData / metaData / networkData): only these are cleared.
 */
export interface ConsumerDataRefs {
  userData?: DataRef | undefined;
  metaData?: DataRef | undefined;
  networkData?: DataRef | undefined;
}

const DATA_PARTS = ['userData', 'metaData', 'networkData'] as const;

/** The host's ref names the Secret the consumer set (namespace defaulted to the host's). */
function setByConsumer(host: BareMetalHost, ref: DataRef | undefined, set: DataRef | undefined): boolean {
  if (!ref?.name || !set?.name) return false;
  const ns = host.metadata.namespace;
  return ref.name === set.name && (ref.namespace || ns) === (set.namespace || ns);
}

/**
 * Clears image, customDeploy and the data refs the consumer set (a ref the host carried of its
 * own, e.g. an administrator's metaData, stays) and sets the power state, in place; only when there
 * is something to clear, so the power state is set once (an administrator's later power-off or
 * power-on is never overridden). Returns whether anything changed.
 */
export function applyDeprovision(host: BareMetalHost, fastTrack: boolean, set: ConsumerDataRefs): boolean {
  const spec = { ...(host.spec ?? {}) };
  let changed = Boolean(spec.image || spec.customDeploy);
  delete spec.image;
  delete spec.customDeploy;
  for (const part of DATA_PARTS) {
    if (setByConsumer(host, spec[part] ?? undefined, set[part])) {
      delete spec[part];
      changed = true;
    }
  }
  if (!changed) return false;
  host.spec = { ...spec, online: deprovisionOnline(host, fastTrack) };
  return true;
}

/**
 * Releases the host, in place: consumerRef, the consumer label, the consumer's own labels while
 * they still carry its values, our paused annotation (a foreign one stays); writes `addLabels`
 * (the node-reuse booking). The caller has checked the host is held by `consumer`.
 */
export function applyRelease(
  host: BareMetalHost,
  consumer: Pick<HostConsumer, 'labels'>,
  addLabels: Readonly<Record<string, string>> = {},
): void {
  if (host.spec) {
    const { consumerRef: _drop, ...rest } = host.spec;
    host.spec = rest;
  }
  const labels = { ...(host.metadata.labels ?? {}) };
  for (const [k, v] of Object.entries(consumer.labels ?? {})) {
    if (v === undefined || labels[k] === v) delete labels[k];
  }
  delete labels[CONSUMER_LABEL];
  Object.assign(labels, addLabels);
  host.metadata.labels = labels;
  const ann = host.metadata.annotations;
  if (ann?.[HOST_PAUSED_ANNOTATION] === CAPM3_PAUSE_VALUE) {
    const { [HOST_PAUSED_ANNOTATION]: _drop, ...rest } = ann;
    host.metadata.annotations = rest;
  }
}

export interface ReleaseOptions {
  /** Labels written on release (the node-reuse booking). */
  addLabels?: Readonly<Record<string, string>>;
  /**
   * Give the host back only while its provisioning was never requested (a claim that a pass could
   * not associate): a host being provisioned is left to the consumer's deprovisioning.
   */
  onlyUnprovisioned?: boolean;
}

/**
 * Gives `host` back when `consumer` still holds it: first the cluster label of its BMC credentials
 * Secret (when it names the consumer's cluster; a pass that stops in between finds the host still
 * held and repeats it), then the release itself in one resourceVersion-checked update. Returns
 * whether this call released it.
 */
export async function releaseHost(
  ctx: ReconcileContext,
  host: BareMetalHost,
  consumer: HostConsumer,
  opts: ReleaseOptions = {},
): Promise<boolean> {
  const provisioning = (h: BareMetalHost) => opts.onlyUnprovisioned === true && hostProvisioningRequested(h);
  if (!hostHeldBy(host, consumer) || provisioning(host)) return false;
  await unlabelBmcSecret(ctx, host, consumerClusterName(consumer));
  const res = await updateHeldHost(ctx.client, host, consumer, (h) => {
    if (provisioning(h)) return SKIP;
    applyRelease(h, consumer, opts.addLabels);
  });
  return res.outcome === 'updated';
}

/** The cluster a consumer's claim labelled the host with (CAPM3), if any. */
const consumerClusterName = (c: HostConsumer): string | undefined => c.labels?.[CLUSTER_NAME_LABEL];
