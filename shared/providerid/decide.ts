/**
 * The ProviderID workflow of seed 000 as one pure decision: given the machine, its host and the
 * workload cluster's Nodes, say what to write. The caller does the I/O in the order the decision
 * implies (machine first, then the Node patch).
 *
 * Order: the machine holds its host and has not failed (else nothing), duplicate check, Step 1 (a Node already carries one of this machine's IDs), Step 2 (cloud
 * provider: wait for it), Step 3 (the `metal3.io/uuid` label), Step 4 (hostname fallback).
 */
import { HOSTNAME_LABEL, NODE_UUID_LABEL } from '../api/wellknown.ts';
import { hostProviderIDPrefix, legacyProviderID, newProviderID, parseProviderID } from './ids.ts';

export interface NodeView {
  name: string;
  uid?: string | undefined;
  providerID?: string | undefined;
  labels?: Record<string, string> | undefined;
}

/**
 * What a decision to patch a Node read of it, and so what must still hold when the patch lands:
 * the same object (uid), the labels it was found by (null: the label was absent), and its
 * providerID as read (undefined: unset). The Node's other fields (the kubelet's status) are not
 * part of the decision and may change meanwhile (ADR 026).
 */
export interface NodeGuard {
  uid: string | undefined;
  labels: Record<string, string | null>;
  providerID: string | undefined;
}

export interface DecisionInput {
  namespace: string;
  machineName: string;
  machineProviderID?: string | undefined;
  hostName: string;
  hostUID: string;
  /** The machine's `status.addresses` of type Hostname. */
  hostnames: readonly string[];
  /** The owner Machine has `spec.bootstrap.configRef`. */
  hasBootstrapConfigRef: boolean;
  /** Metal3Cluster `cloudProviderEnabled: true` or `noCloudProvider: false`. */
  cloudProvider: boolean;
  legacy: 'accept' | 'refuse';
  nodes: readonly NodeView[];
  /** The host's consumerRef names this Metal3Machine. */
  holdsHost: boolean;
  /** The machine carries a failure another step recorded (this step's own errors are re-evaluated). */
  failed: boolean;
}

export type Step = 0 | 1 | 2 | 3 | 4;

export type ErrorReason =
  | 'DuplicateProviderID'
  | 'DuplicateHostProviderID'
  | 'LegacyProviderIDRefused'
  | 'ProviderIDMismatch'
  | 'MultipleNodesWithUUIDLabel'
  | 'UnsupportedProviderIDFormat'
  | 'ForeignProviderID';

export type Decision =
  /** A Node already carries the ID: set it on the machine (if not yet) and mark ready; no Node write. */
  | { kind: 'ready'; step: 1 | 2; providerID: string; node: string; note: string }
  /** Set machine providerID + ready first, then patch `spec.providerID` of `node`, only while `guard` holds. */
  | {
      kind: 'setAndPatch';
      step: 3 | 4;
      providerID: string;
      node: string;
      guard: NodeGuard;
    }
  /** Step 4: assign the ID and ready; the Node is not identifiable yet (its event wakes us). */
  | { kind: 'assignAndWait'; step: 4; providerID: string; reason: string }
  /** Nothing to write; a Node event wakes the machine. */
  | { kind: 'wait'; step: 2 | 3; reason: string }
  | { kind: 'error'; step: Step; reason: ErrorReason; message: string }
  /** The machine does not hold its host (or has failed): nothing is written, no ID is ever set. */
  | { kind: 'notHeld'; reason: string };

/**
 * The gate before any ID is decided: a machine that does not hold its host, or that another step
 * failed, never gets the host's ID (nor sets it on a Node). Undefined when the machine may go on.
 */
export function notHeld(
  input: Pick<DecisionInput, 'namespace' | 'hostName' | 'holdsHost' | 'failed'>,
): { kind: 'notHeld'; reason: string } | undefined {
  if (!input.holdsHost)
    return {
      kind: 'notHeld',
      reason: `BareMetalHost ${input.namespace}/${input.hostName} is not held by this Metal3Machine`,
    };
  if (input.failed) return { kind: 'notHeld', reason: 'the Metal3Machine has failed' };
  return undefined;
}

export const cloudProviderEnabled = (
  spec: { cloudProviderEnabled?: boolean | undefined; noCloudProvider?: boolean | undefined } | undefined,
): boolean => spec?.cloudProviderEnabled === true || spec?.noCloudProvider === false;

const names = (nodes: readonly NodeView[]): string =>
  nodes
    .map((n) => n.name)
    .sort()
    .join(', ');

export function decideProviderID(input: DecisionInput): Decision {
  const gate = notHeld(input);
  if (gate) return gate;
  const expected = newProviderID(input.namespace, input.hostName, input.machineName);
  const legacy = legacyProviderID(input.hostUID);
  const prefix = hostProviderIDPrefix(input.namespace, input.hostName);
  const withId = input.nodes.filter((n) => n.providerID);

  // Duplicate detection, limited to the IDs this machine could own (one broken pair elsewhere
  // must not block every machine of the cluster).
  for (const id of [expected, legacy]) {
    const holders = withId.filter((n) => n.providerID === id);
    if (holders.length > 1) {
      return {
        kind: 'error',
        step: 0,
        reason: 'DuplicateProviderID',
        message: `providerID ${id} is set on more than one Node (${names(holders)})`,
      };
    }
  }
  const sameHost = withId.filter((n) => n.providerID!.startsWith(prefix));
  if (sameHost.length > 1) {
    return {
      kind: 'error',
      step: 0,
      reason: 'DuplicateHostProviderID',
      message: `more than one Node carries a providerID of BareMetalHost ${input.namespace}/${input.hostName} (${names(sameHost)}); a stale Node of an earlier machine must be removed`,
    };
  }

  // Step 1 (and the verbatim copy of Step 2): a Node whose providerID is one of ours.
  const matching = withId.filter((n) => n.providerID === expected || n.providerID === legacy);
  if (matching.length > 1) {
    return {
      kind: 'error',
      step: 1,
      reason: 'DuplicateProviderID',
      message: `Nodes ${names(matching)} both carry a providerID of this machine (${expected} / ${legacy})`,
    };
  }
  const match = matching[0];
  if (match) {
    const id = match.providerID!;
    if (id === legacy && input.legacy === 'refuse') {
      return {
        kind: 'error',
        step: 1,
        reason: 'LegacyProviderIDRefused',
        message: `Node ${match.name} uses the legacy providerID ${id}, refused by --legacy-provider-ids=refuse; migrate it with 'metal3fn migrate-provider-ids'`,
      };
    }
    if (input.machineProviderID && input.machineProviderID !== id) {
      return {
        kind: 'error',
        step: 1,
        reason: 'ProviderIDMismatch',
        message: `Metal3Machine providerID ${input.machineProviderID} differs from ${id} on Node ${match.name}; a Node's providerID cannot change`,
      };
    }
    const step = !input.machineProviderID && input.cloudProvider ? 2 : 1;
    const note = input.machineProviderID
      ? `Node ${match.name} carries providerID ${id}`
      : step === 2
        ? `copied providerID ${id} set by the cloud provider on Node ${match.name}`
        : `Node ${match.name} already carries providerID ${id}`;
    return { kind: 'ready', step, providerID: id, node: match.name, note };
  }

  // Step 2: with a cloud provider, it sets the Node's providerID; we only copy it.
  if (input.cloudProvider) {
    return {
      kind: 'wait',
      step: 2,
      reason: `waiting for the cloud provider to set providerID ${expected} or ${legacy} on a Node`,
    };
  }

  // Step 3: the metal3.io/uuid label.
  const labelled = input.nodes.filter((n) => n.labels?.[NODE_UUID_LABEL] === input.hostUID);
  if (labelled.length > 1) {
    return {
      kind: 'error',
      step: 3,
      reason: 'MultipleNodesWithUUIDLabel',
      message: `more than one Node is labelled ${NODE_UUID_LABEL}=${input.hostUID} (${names(labelled)}): misconfiguration`,
    };
  }
  const node = labelled[0];
  if (node) {
    const parsed = parseProviderID(node.providerID);
    if (parsed.format === 'empty') {
      return {
        kind: 'setAndPatch',
        step: 3,
        providerID: expected,
        node: node.name,
        guard: { uid: node.uid, labels: { [NODE_UUID_LABEL]: input.hostUID }, providerID: node.providerID },
      };
    }
    if (parsed.format === 'unsupported') {
      return {
        kind: 'error',
        step: 3,
        reason: 'UnsupportedProviderIDFormat',
        message: `node using unsupported providerID format: Node ${node.name} has providerID ${JSON.stringify(node.providerID)}`,
      };
    }
    // A well-formed ID that is not this machine's (Step 1 would have matched it).
    return {
      kind: 'error',
      step: 3,
      reason: 'ForeignProviderID',
      message: `Node ${node.name} (labelled ${NODE_UUID_LABEL}=${input.hostUID}) carries providerID ${node.providerID}, which is neither ${expected} nor ${legacy}`,
    };
  }

  // Zero labelled Nodes. Step 4 candidates: Nodes named by one of the machine's hostnames that
  // carry no uuid label and no providerID (a Node with an ID is someone's, and IDs never change).
  const hostnames = new Set(input.hostnames);
  const candidates = input.nodes.filter(
    (n) =>
      !n.providerID &&
      n.labels?.[NODE_UUID_LABEL] === undefined &&
      hostnames.has(n.labels?.[HOSTNAME_LABEL] ?? '\0'),
  );
  if (input.hasBootstrapConfigRef && candidates.length !== 1) {
    // The Node has not joined yet (or cloud-init has not finished): its event wakes us. A single
    // unlabelled Node with our hostname means the label was not configured: it will never come,
    // so fall through to Step 4.
    return {
      kind: 'wait',
      step: 3,
      reason: `waiting for a Node labelled ${NODE_UUID_LABEL}=${input.hostUID}`,
    };
  }

  // Step 4: hostname fallback.
  let id = expected;
  if (input.machineProviderID) {
    const own = input.machineProviderID;
    if (own !== expected && own !== legacy) {
      return {
        kind: 'error',
        step: 4,
        reason: 'ProviderIDMismatch',
        message: `Metal3Machine providerID ${own} is neither ${expected} nor ${legacy}`,
      };
    }
    if (own === legacy && input.legacy === 'refuse') {
      return {
        kind: 'error',
        step: 4,
        reason: 'LegacyProviderIDRefused',
        message: `Metal3Machine uses the legacy providerID ${own}, refused by --legacy-provider-ids=refuse`,
      };
    }
    id = own;
  }
  if (candidates.length === 1) {
    const c = candidates[0]!;
    return {
      kind: 'setAndPatch',
      step: 4,
      providerID: id,
      node: c.name,
      // Found by its hostname label, and only while it carries no uuid label (Step 3 would own it).
      guard: {
        uid: c.uid,
        labels: { [HOSTNAME_LABEL]: c.labels![HOSTNAME_LABEL]!, [NODE_UUID_LABEL]: null },
        providerID: c.providerID,
      },
    };
  }
  const reason =
    hostnames.size === 0
      ? 'the Metal3Machine has no Hostname address to find its Node by'
      : candidates.length === 0
        ? `no Node with ${HOSTNAME_LABEL} in [${[...hostnames].join(', ')}] and no providerID yet`
        : `several Nodes match hostname [${[...hostnames].join(', ')}] (${names(candidates)})`;
  return { kind: 'assignAndWait', step: 4, providerID: id, reason };
}
