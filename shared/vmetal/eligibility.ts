/**
 * Which BareMetalHost a NodeClaim may take (issue 19, Behaviour 2), pure. A host is eligible when
 * it is in the provider's `clusterRef.namespace`, matches the NodeType's selector, is not being
 * deleted, in error, paused or unhealthy (the rules every consumer shares, shared/hosts), is held
 * by nobody and booked for no node reuse, is `available`, and its inventory covers the type's cpu
 * and memory. A host already held by the claim is its own (idempotent passes). The property
 * `metal3.vcluster.com/server-name` pins one host: if that host cannot be taken the claim waits,
 * it never takes another. Otherwise the choice is uniformly random among the eligible (as CAPM3).
 */

import type { BareMetalHost } from '../api/baremetalhost.ts';
import type { HostSelector } from '../api/hostselector.ts';
import { fieldOf } from '../api/json.ts';
import { NODE_CLAIM_LABEL, NODE_REUSE_LABEL, NODE_TYPE_LABEL } from '../api/wellknown.ts';
import { consumerLabelValue, type HostConsumer, hostConsumerRef, isHeldBy } from '../hosts/consumer.ts';
import { hostExclusionCode, hostState, pickRandom } from '../hosts/eligibility.ts';
import {
  type CompiledSelector,
  compileHostSelector,
  InvalidSelectorError,
  matchesSelector,
} from '../selectors/labels.ts';
import { propertyField, VMetalInputError, VMetalWait } from './errors.ts';
import { PROP } from './names.ts';
import { compareQuantity, parseQuantity, type Quantity, quantityOf } from './quantity.ts';

/** Why a host is not eligible, in the order the checks run (the first that applies is reported). */
export const EXCLUSION_REASONS = [
  'SelectorMismatch',
  'Deleting',
  'InError',
  'Paused',
  'Unhealthy',
  'Consumed',
  'NodeReuse',
  'NotAvailable',
  'NoInventory',
  'InsufficientCPU',
  'InsufficientMemory',
] as const;
export type ExclusionReason = (typeof EXCLUSION_REASONS)[number];

/** How a reason reads after a count ("3 are paused"). */
const REASON_TEXT: Record<ExclusionReason, string> = {
  SelectorMismatch: 'do not match the NodeType selector',
  Deleting: 'are being deleted',
  InError: 'are in error',
  Paused: 'are paused',
  Unhealthy: 'are marked unhealthy',
  Consumed: 'are held by another consumer',
  NodeReuse: 'are booked for node reuse',
  NotAvailable: 'are not available',
  NoInventory: 'have no hardware inventory',
  InsufficientCPU: 'have too few CPUs',
  InsufficientMemory: 'have too little RAM',
};

export type HostVerdict = { eligible: true } | { eligible: false; reason: ExclusionReason; detail: string };

/** The NodeType as selection needs it: the selector compiled, cpu and memory parsed. */
export interface TypeSelection {
  typeName: string;
  selector: CompiledSelector;
  cpu: Quantity | undefined;
  memory: Quantity | undefined;
  /** Text of the requested cpu and memory, for messages. */
  cpuText: string | undefined;
  memoryText: string | undefined;
}

const LABEL_SELECTOR_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'];

/**
 * Compiles a NodeType's `bareMetalHosts.selector` (a metav1.LabelSelector: matchLabels and In,
 * NotIn, Exists, DoesNotExist) and `resources`; throws VMetalInputError naming the field. An
 * absent or empty selector matches every host of the namespace (as CAPM3's hostSelector).
 */
export function compileTypeSelection(type: {
  name: string;
  selector?: HostSelector | null | undefined;
  resources?: Record<string, string> | undefined;
}): TypeSelection {
  const field = `NodeType ${type.name} bareMetalHosts.selector`;
  (type.selector?.matchExpressions ?? []).forEach((e, i) => {
    if (!LABEL_SELECTOR_OPERATORS.includes(e.operator)) {
      throw new VMetalInputError(
        `${field}.matchExpressions[${i}].operator`,
        `unknown operator ${JSON.stringify(e.operator)} (a label selector takes In, NotIn, Exists or DoesNotExist)`,
      );
    }
  });
  let selector: CompiledSelector;
  try {
    selector = compileHostSelector(type.selector ?? {});
  } catch (e) {
    if (e instanceof InvalidSelectorError)
      throw new VMetalInputError(field, e.message.replace(/^invalid hostSelector: /, ''));
    throw e;
  }
  const quantity = (name: 'cpu' | 'memory') => {
    const text = type.resources?.[name];
    if (text === undefined) return undefined;
    const q = parseQuantity(text);
    if (!q)
      throw new VMetalInputError(
        `NodeType ${type.name} resources.${name}`,
        `${JSON.stringify(text)} is not a quantity`,
      );
    return q;
  };
  return {
    typeName: type.name,
    selector,
    cpu: quantity('cpu'),
    memory: quantity('memory'),
    cpuText: type.resources?.cpu,
    memoryText: type.resources?.memory,
  };
}

function resourceVerdict(h: BareMetalHost, t: TypeSelection): HostVerdict {
  if (!t.cpu && !t.memory) return { eligible: true };
  const hw = h.status?.hardware;
  if (!hw)
    return { eligible: false, reason: 'NoInventory', detail: 'no status.hardware (not inspected yet?)' };
  const count = fieldOf(hw, 'cpu', 'count');
  if (t.cpu && typeof count === 'number' && compareQuantity(quantityOf(count), t.cpu) < 0) {
    return {
      eligible: false,
      reason: 'InsufficientCPU',
      detail: `${count} CPUs, the type needs ${t.cpuText}`,
    };
  }
  const mib = fieldOf(hw, 'ramMebibytes');
  if (t.memory && typeof mib === 'number' && compareQuantity(quantityOf(BigInt(mib) << 20n), t.memory) < 0) {
    return {
      eligible: false,
      reason: 'InsufficientMemory',
      detail: `${mib} MiB RAM, the type needs ${t.memoryText}`,
    };
  }
  return { eligible: true };
}

/** Whether one host may be taken for the type (ignoring whom it is held by when that is the claim itself). */
export function hostVerdict(h: BareMetalHost, t: TypeSelection): HostVerdict {
  if (!matchesSelector(h.metadata.labels, t.selector)) {
    return { eligible: false, reason: 'SelectorMismatch', detail: `does not match NodeType ${t.typeName}` };
  }
  const shared = hostExclusionCode(h);
  if (shared) return { eligible: false, reason: shared.code, detail: shared.message };
  const ref = hostConsumerRef(h);
  if (ref) {
    return {
      eligible: false,
      reason: 'Consumed',
      detail: `held by ${ref.kind ?? '<kind>'} ${ref.namespace ?? h.metadata.namespace ?? ''}/${ref.name ?? ''}`,
    };
  }
  const reuse = h.metadata.labels?.[NODE_REUSE_LABEL];
  if (reuse !== undefined)
    return { eligible: false, reason: 'NodeReuse', detail: `booked for node reuse by "${reuse}"` };
  const state = hostState(h);
  if (state !== 'available') {
    return {
      eligible: false,
      reason: 'NotAvailable',
      detail: `state "${state || '<none>'}" is not available`,
    };
  }
  return resourceVerdict(h, t);
}

/** Host names listed per reason in messages. */
export const NAMES_PER_REASON = 10;

export interface ExclusionSummary {
  /** Hosts of the namespace looked at. */
  considered: number;
  /** Non-empty reasons, in EXCLUSION_REASONS order; `hosts` sorted, at most NAMES_PER_REASON. */
  reasons: { reason: ExclusionReason; count: number; hosts: string[] }[];
}

export function summarizeExclusions(
  excluded: readonly { name: string; reason: ExclusionReason }[],
  considered: number,
): ExclusionSummary {
  const reasons = EXCLUSION_REASONS.map((reason) => {
    const names = excluded.filter((e) => e.reason === reason).map((e) => e.name);
    names.sort();
    return { reason, count: names.length, hosts: names.slice(0, NAMES_PER_REASON) };
  }).filter((r) => r.count > 0);
  return { considered, reasons };
}

/**
 * The Scheduled=False message: `no eligible host for NodeType t among 5 BareMetalHosts in namespace
 * ns: 3 are paused (a, b, c); ...`. `read` says which hosts the summary saw: all of the namespace
 * (a preview), or only those the candidate list returns (a live claim, ADR 022: hosts that match
 * the selector and that nobody holds or booked for node reuse; the rest are never read).
 */
export function formatExclusions(
  summary: ExclusionSummary,
  typeName: string,
  namespace: string,
  read: 'all' | 'unheld' = 'all',
): string {
  const which =
    read === 'all'
      ? `${summary.considered} BareMetalHosts in namespace ${namespace}`
      : `the ${summary.considered} BareMetalHost${summary.considered === 1 ? '' : 's'} in namespace ${namespace} that match its selector and are not held or booked for node reuse`;
  const head = `no eligible host for NodeType ${typeName} among ${which}`;
  if (summary.reasons.length === 0) return head;
  const parts = summary.reasons.map((r) => {
    const more = r.count > r.hosts.length ? `, and ${r.count - r.hosts.length} more` : '';
    const text =
      r.count === 1
        ? REASON_TEXT[r.reason]
            .replace(/^are /, 'is ')
            .replace(/^have /, 'has ')
            .replace(/^do not /, 'does not ')
        : REASON_TEXT[r.reason];
    return `${r.count} ${text} (${r.hosts.join(', ')}${more})`;
  });
  return `${head}: ${parts.join('; ')}`;
}

export interface ChooseInput {
  type: TypeSelection;
  /** The provider's clusterRef.namespace: the only namespace hosts are taken from. */
  namespace: string;
  /** The claim as a host consumer (a host it already holds is its own). */
  consumer: Pick<HostConsumer, 'apiVersion' | 'kind' | 'namespace' | 'name'>;
  /** The merged property `metal3.vcluster.com/server-name`, when set. */
  serverName?: string | undefined;
}

export type HostChoice =
  | { kind: 'own'; host: BareMetalHost }
  | { kind: 'chosen'; host: BareMetalHost }
  | { kind: 'wait'; wait: VMetalWait; summary?: ExclusionSummary };

/** Chooses the claim's host; `random` returns [0, 1) (injectable for tests). */
export function chooseClaimHost(
  hosts: readonly BareMetalHost[],
  input: ChooseInput,
  random: () => number = Math.random,
): HostChoice {
  const inNamespace = hosts.filter((h) => h.metadata.namespace === input.namespace);
  const own = inNamespace.find((h) => isHeldBy(hostConsumerRef(h), input.consumer, h.metadata.namespace));
  if (own) return { kind: 'own', host: own };

  if (input.serverName) {
    const where = `${input.namespace}/${input.serverName}`;
    const pinned = inNamespace.find((h) => h.metadata.name === input.serverName);
    const why = `host ${where} pinned by ${propertyField(PROP.serverName)}`;
    if (!pinned) {
      return {
        kind: 'wait',
        wait: new VMetalWait('PinnedHostUnavailable', `${why} not found`, {
          kind: 'BareMetalHost',
          namespace: input.namespace,
          name: input.serverName,
        }),
      };
    }
    const verdict = hostVerdict(pinned, input.type);
    if (!verdict.eligible) {
      return {
        kind: 'wait',
        wait: new VMetalWait('PinnedHostUnavailable', `${why} is not eligible: ${verdict.detail}`, {
          kind: 'BareMetalHost',
          namespace: input.namespace,
          name: input.serverName,
        }),
      };
    }
    return { kind: 'chosen', host: pinned };
  }

  const eligible: BareMetalHost[] = [];
  const excluded: { name: string; reason: ExclusionReason }[] = [];
  for (const h of inNamespace) {
    const v = hostVerdict(h, input.type);
    if (v.eligible) eligible.push(h);
    else excluded.push({ name: h.metadata.name ?? '', reason: v.reason });
  }
  const pick = pickRandom(eligible, random);
  if (pick) return { kind: 'chosen', host: pick };
  const summary = summarizeExclusions(excluded, inNamespace.length);
  return {
    kind: 'wait',
    wait: new VMetalWait('NoEligibleHost', formatExclusions(summary, input.type.typeName, input.namespace)),
    summary,
  };
}

/**
 * What one host adds to a NodeType's capacity: nothing (`out`: another namespace, not matching the
 * selector, or being deleted), or one to `total` and perhaps to `claimed` (held by any consumer),
 * `free` (eligible now) and `provisioned` (held by a NodeClaim of this type: the node-claim label
 * with the type's label). Routing compares a host's class before and after a change (a NodeType is
 * woken only when its counts can move, ADR 025); the counts are the sum over the hosts.
 */
export type CapacityClass = 'out' | { claimed: boolean; free: boolean; provisioned: boolean };

export function capacityClass(h: BareMetalHost, type: TypeSelection, namespace: string): CapacityClass {
  if (h.metadata.namespace !== namespace || h.metadata.deletionTimestamp) return 'out';
  if (!matchesSelector(h.metadata.labels, type.selector)) return 'out';
  const labels = h.metadata.labels ?? {};
  return {
    claimed: Boolean(hostConsumerRef(h)),
    free: hostVerdict(h, type).eligible,
    provisioned:
      labels[NODE_CLAIM_LABEL] !== undefined && labels[NODE_TYPE_LABEL] === consumerLabelValue(type.typeName),
  };
}

/** Whether two classes count the same. */
export const sameCapacityClass = (a: CapacityClass, b: CapacityClass): boolean =>
  a === 'out' || b === 'out'
    ? a === b
    : a.claimed === b.claimed && a.free === b.free && a.provisioned === b.provisioned;

export interface NodeTypeCounts {
  total: number;
  claimed: number;
  free: number;
  provisioned: number;
}

/**
 * A NodeType's capacity: `total` = hosts of the namespace matching its selector and not being
 * deleted; of those, `claimed` = held by any consumer, `free` = eligible now, `provisioned` = held
 * by NodeClaims of the type.
 */
export function nodeTypeCapacity(
  hosts: readonly BareMetalHost[],
  type: TypeSelection,
  namespace: string,
): NodeTypeCounts {
  const n: NodeTypeCounts = { total: 0, claimed: 0, free: 0, provisioned: 0 };
  for (const h of hosts) {
    const c = capacityClass(h, type, namespace);
    if (c === 'out') continue;
    n.total++;
    if (c.claimed) n.claimed++;
    if (c.free) n.free++;
    if (c.provisioned) n.provisioned++;
  }
  return n;
}
