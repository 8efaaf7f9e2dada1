/**
 * Draining a claim's tenant Node before it is deleted (issue 19, Behaviour 8), pure: which Pods
 * to evict as `kubectl drain --ignore-daemonsets --delete-emptydir-data` does (DaemonSet Pods and
 * mirror Pods are skipped: their controller or the kubelet would put them straight back; Pods
 * already terminating are waited for, not evicted again), and what to do after an eviction pass:
 * delete the Node once no Pod is left, wait while some remain (a PodDisruptionBudget refusing an
 * eviction included), delete it anyway once the drain timeout has passed since the claim's deletion.
 */
import type { Pod } from '../api/core.ts';

/** How long a drain may take, from the claim's deletionTimestamp, before the Node goes anyway. */
export const DRAIN_TIMEOUT_SECONDS = 300;
/** How often a drain that waits looks again (no event tells us a Pod went). */
export const DRAIN_RECHECK_SECONDS = 10;

export const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

export type PodSkip = 'DaemonSet' | 'mirror';

/** Why `kubectl drain` leaves the Pod alone, if it does. */
export function drainSkip(pod: Pod): PodSkip | undefined {
  if (pod.metadata.annotations?.[MIRROR_POD_ANNOTATION] !== undefined) return 'mirror';
  const controller = pod.metadata.ownerReferences?.find((o) => o.controller);
  if (controller?.kind === 'DaemonSet' && controller.apiVersion.startsWith('apps/')) return 'DaemonSet';
  return undefined;
}

export interface DrainPlan {
  /** Pods to evict now. */
  evict: Pod[];
  /** Pods the drain waits for (to evict, or terminating). */
  remaining: Pod[];
}

export function planDrain(pods: readonly Pod[]): DrainPlan {
  const remaining = pods.filter((p) => drainSkip(p) === undefined);
  return { evict: remaining.filter((p) => !p.metadata.deletionTimestamp), remaining };
}

export type DrainOutcome =
  | { kind: 'deleteNode'; note: string }
  | { kind: 'wait'; message: string }
  | { kind: 'timedOut'; message: string };

/**
 * After an eviction pass: `left` Pods still on the Node (not counting those just evicted and
 * gone), `blocked` the evictions a PodDisruptionBudget refused (`ns/name: message`), `forbidden`
 * set when the tenant refused the drain itself (403 on listing Pods or evicting: the workload
 * identity lacks the grants) — a wait like a PDB's, bounded by the same timeout, so a missing grant
 * delays the release and says why, never holds the host forever.
 */
export function drainOutcome(i: {
  node: string;
  left: number;
  blocked: readonly string[];
  elapsedSeconds: number;
  timeoutSeconds?: number;
  forbidden?: string | undefined;
}): DrainOutcome {
  const timeout = i.timeoutSeconds ?? DRAIN_TIMEOUT_SECONDS;
  if (i.left === 0 && !i.forbidden) return { kind: 'deleteNode', note: `Node ${i.node} drained` };
  const what = i.forbidden
    ? `the tenant refused the drain of Node ${i.node} (${i.forbidden}; the workload identity needs list pods and create pods/eviction)`
    : `${i.left} Pod(s) left on Node ${i.node}${i.blocked.length > 0 ? `; evictions refused: ${i.blocked.join('; ')}` : ''}`;
  if (i.elapsedSeconds >= timeout)
    return {
      kind: 'timedOut',
      message: `drain timeout (${timeout}s) passed with ${what}: deleting the Node anyway`,
    };
  return { kind: 'wait', message: `draining: ${what}` };
}
