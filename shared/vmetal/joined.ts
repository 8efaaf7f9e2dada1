/**
 * Provisioned, Joined and Available (issue 19, Behaviours 6 and 7), pure: what resolveProviderID
 * writes on a NodeClaim from its held host and the tenant's Node `<claim>`.
 *
 * - host in error (errorMessage): Failed with it (Provisioned=False, Error), terminal;
 * - host not `provisioned`: Pending, Provisioned=False naming the state; Joined=False;
 * - provisioned, tenant unreachable: Pending, Joined=False, look again later;
 * - provisioned, no Node `<claim>`, or one without `vcluster.com/node-type=<type>`: Pending,
 *   Joined=False naming what is missing;
 * - the Node with the label: Joined=True, `status.nodeName`, phase Available.
 */
import type { ConditionInput } from '../capi/conditions.ts';
import { PROP } from './names.ts';
import { CLAIM_COND, type StatusChange } from './status.ts';

export const JOIN_REASON = {
  HostError: 'HostError',
  HostNotProvisioned: 'HostNotProvisioned',
  HostProvisioned: 'HostProvisioned',
  TenantClusterUnavailable: 'TenantClusterUnavailable',
  NodeNotRegistered: 'NodeNotRegistered',
  NodeTypeLabelMissing: 'NodeTypeLabelMissing',
  NodeJoined: 'NodeJoined',
} as const;

export interface JoinStatusInput {
  claimName: string;
  /** The NodeType the claim uses (`status.nodeType`, else `typeRef`). */
  nodeType: string | undefined;
  host: { namespace: string; name: string; state: string; errorMessage: string };
  /** What the tenant cluster showed; looked at only once the host is provisioned. */
  tenant?:
    | { kind: 'unreachable'; message: string }
    | { kind: 'node'; labels: Record<string, string> | undefined };
}

export type JoinDecision =
  /** The host is provisioned: read the tenant's Node and decide again with it. */
  { kind: 'readTenant' } | { kind: 'write'; change: StatusChange; next: 'done' | 'wait' | 'failed' };

const provisioned = (status: 'True' | 'False', reason: string, message?: string): ConditionInput => ({
  type: CLAIM_COND.Provisioned,
  status,
  reason,
  ...(message ? { message } : {}),
  ...(status === 'False' ? { severity: 'Info' as const } : {}),
});

const notJoined = (reason: string, message: string): ConditionInput => ({
  type: CLAIM_COND.Joined,
  status: 'False',
  reason,
  message,
  severity: 'Info',
});

export function decideJoinStatus(i: JoinStatusInput): JoinDecision {
  const hostRef = `BareMetalHost ${i.host.namespace}/${i.host.name}`;
  if (i.host.errorMessage) {
    const message = `${hostRef}: ${i.host.errorMessage}`;
    return {
      kind: 'write',
      next: 'failed',
      change: {
        phase: 'Failed',
        reason: JOIN_REASON.HostError,
        message,
        conditions: [
          {
            type: CLAIM_COND.Provisioned,
            status: 'False',
            severity: 'Error',
            reason: JOIN_REASON.HostError,
            message: i.host.errorMessage,
          },
        ],
      },
    };
  }
  if (i.host.state !== 'provisioned') {
    const message = `${hostRef} is ${i.host.state || 'not provisioned yet'}`;
    return {
      kind: 'write',
      next: 'done',
      change: {
        phase: 'Pending',
        reason: JOIN_REASON.HostNotProvisioned,
        message,
        conditions: [
          provisioned('False', JOIN_REASON.HostNotProvisioned, message),
          notJoined(JOIN_REASON.HostNotProvisioned, `waiting for ${hostRef} to provision`),
        ],
      },
    };
  }
  if (!i.tenant) return { kind: 'readTenant' };
  const isProvisioned = provisioned('True', JOIN_REASON.HostProvisioned);
  const pending = (reason: string, message: string): JoinDecision => ({
    kind: 'write',
    next: 'wait',
    change: {
      phase: 'Pending',
      reason,
      message,
      fields: { nodeName: undefined },
      conditions: [isProvisioned, notJoined(reason, message)],
    },
  });
  if (i.tenant.kind === 'unreachable') return pending(JOIN_REASON.TenantClusterUnavailable, i.tenant.message);
  if (!i.tenant.labels)
    return pending(
      JOIN_REASON.NodeNotRegistered,
      `Node ${i.claimName} has not registered in the tenant cluster`,
    );
  const value = i.tenant.labels[PROP.nodeType];
  if (!i.nodeType || value !== i.nodeType) {
    return pending(
      JOIN_REASON.NodeTypeLabelMissing,
      `Node ${i.claimName} has ${value === undefined ? `no ${PROP.nodeType} label` : `${PROP.nodeType}=${value}`}, want ${i.nodeType ?? '(no node type recorded)'}`,
    );
  }
  return {
    kind: 'write',
    next: 'done',
    change: {
      phase: 'Available',
      reason: undefined,
      message: undefined,
      fields: { nodeName: i.claimName },
      conditions: [
        isProvisioned,
        { type: CLAIM_COND.Joined, status: 'True', reason: JOIN_REASON.NodeJoined },
      ],
    },
  };
}
