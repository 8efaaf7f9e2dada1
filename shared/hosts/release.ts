/**
 * Pure decisions of the host release (spec §9 steps 4-7).
 */
import type { KubeObject } from '../kube/types.ts';
import {
  CAPM3_PAUSE_VALUE,
  CLUSTER_NAME_LABEL,
  CONSUMER_LABEL,
  HOST_PAUSED_ANNOTATION,
  hostState,
  NODE_REUSE_LABEL,
} from './eligibility.ts';

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

export function hostReleasable(host: KubeObject): boolean {
  const state = hostState(host);
  if (RELEASABLE_STATES.has(state)) return true;
  const poweredOn = (host.status as { poweredOn?: boolean } | undefined)?.poweredOn;
  return state === 'externally provisioned' && poweredOn === false;
}

/**
 * The power state to ask for on deprovisioning: on when the host cannot be powered off
 * (disablePowerOff), or with fast track while cleaning is enabled; off otherwise.
 */
export function deprovisionOnline(host: KubeObject, fastTrack: boolean): boolean {
  const spec = (host.spec ?? {}) as { disablePowerOff?: boolean; automatedCleaningMode?: string };
  if (spec.disablePowerOff) return true;
  return fastTrack && spec.automatedCleaningMode !== 'disabled';
}

/** Whether the host still carries what provisioning wrote (image, customDeploy or data refs). */
export function hostHasProvisioningSpec(host: KubeObject): boolean {
  const s = (host.spec ?? {}) as Record<string, unknown>;
  return Boolean(s.image || s.customDeploy || s.userData || s.metaData || s.networkData);
}

/**
 * Clears image, customDeploy and data refs and sets the power state, in place; only when there is
 * something to clear, so the power state is set once (an administrator's later power-off or
 * power-on is never overridden). Returns whether anything changed.
 */
export function applyDeprovision(host: KubeObject, fastTrack: boolean): boolean {
  if (!hostHasProvisioningSpec(host)) return false;
  const s = host.spec as Record<string, unknown>;
  for (const k of ['image', 'customDeploy', 'userData', 'metaData', 'networkData']) delete s[k];
  s.online = deprovisionOnline(host, fastTrack);
  return true;
}

/**
 * Releases the host, in place: consumerRef, the consumer label, the cluster-name label (when it is this cluster's), our
 * paused annotation; writes the node-reuse label when the template asks for it.
 */
export function applyRelease(
  host: KubeObject,
  clusterName: string | undefined,
  nodeReuseValue: string | undefined,
): void {
  const s = (host.spec ?? {}) as Record<string, unknown>;
  delete s.consumerRef;
  const labels = { ...(host.metadata.labels ?? {}) };
  if (clusterName === undefined || labels[CLUSTER_NAME_LABEL] === clusterName)
    delete labels[CLUSTER_NAME_LABEL];
  delete labels[CONSUMER_LABEL];
  if (nodeReuseValue) labels[NODE_REUSE_LABEL] = nodeReuseValue;
  host.metadata.labels = labels;
  const ann = host.metadata.annotations;
  if (ann?.[HOST_PAUSED_ANNOTATION] === CAPM3_PAUSE_VALUE) {
    const { [HOST_PAUSED_ANNOTATION]: _drop, ...rest } = ann;
    host.metadata.annotations = rest;
  }
}
