/**
 * Finding this machine's host, or claiming one. The claim is a resourceVersion-checked update of
 * the host's consumerRef: that write IS the lock, so under any concurrency no host is ever held by
 * two machines. On a conflict the host is re-read; if it is no longer eligible another is chosen
 * (bounded).
 *
 * A claim also writes the consumer label (the machine's name), so finding the hosts a machine
 * holds is one small list.
 *
 * Cost with many hosts (ADR 022): claimed hosts carry the cluster-name and consumer labels, so the
 * candidate list asks the server for the hosts that may be free for the selector (candidates.ts) in
 * small pages, stopping at the first page with an eligible host; the choice among that page's
 * eligible hosts is uniformly random (spreads concurrent claims across processes; within one
 * process, claims pass over each other's picks). Client-side checks stay authoritative (the
 * server filter is only a narrowing).
 */

import type { BareMetalHost } from '../api/baremetalhost.ts';
import { R } from '../api/resources.ts';
import { CONSUMER_LABEL, FAILURE_DOMAIN_LABEL, NODE_REUSE_LABEL } from '../api/wellknown.ts';
import type { KubeClient } from '../kube/client.ts';
import { isConflict } from '../kube/errors.ts';
import { optimisticUpdate, SKIP } from '../kube/optimistic.ts';
import { labelValueProblem, selectorMentions, serverLabelSelector } from '../selectors/labels.ts';
import { CandidatePool, CandidateSampler, type ClaimHints, freeHostSelector } from './candidates.ts';
import {
  consumerLabelValue,
  consumerRefOf,
  type HostConsumer,
  hostConsumerRef,
  hostHeldBy,
  hostNamespaceOf,
  isHeldBy,
} from './consumer.ts';
import { type Choice, chooseHost, classifyHost, type SelectionInput } from './eligibility.ts';

export interface ClaimInput extends SelectionInput {
  client: KubeClient;
  failureDomain?: string | undefined;
  random?: () => number;
  /** Page size of the candidate list (default CANDIDATE_PAGE_SIZE). */
  pageSize?: number;
  /** Stop reading pages once this many eligible hosts are known (default 1: the first page with one). */
  enoughCandidates?: number;
  /** Hosts other claims of this process picked (default: the process's). */
  hints?: ClaimHints;
  /** Claim attempts before giving up for this pass (default 8). */
  attempts?: number;
}

export type ClaimOutcome =
  | { kind: 'own'; host: BareMetalHost }
  | { kind: 'claimed'; host: BareMetalHost; via: 'reuse' | 'available'; conflicts: number }
  | { kind: 'wait'; reason: string }
  | { kind: 'none'; reason: string }
  | { kind: 'contention'; reason: string; conflicts: number };

/**
 * Every host whose consumerRef names this consumer, found by the consumer label (one list of about
 * one host), in name order; `except` (a host name) is left out by the server (a field selector), so
 * a machine that reads its own host by name lists only its strays. Normally none besides its own;
 * more only when a concurrent pass of the same consumer claimed a host and then lost the
 * association race without giving it back (a crash or an error between the two writes) — the
 * caller releases those strays (strays.ts).
 */
export async function hostsHeldBy(
  client: KubeClient,
  consumer: HostConsumer,
  except?: string,
): Promise<BareMetalHost[]> {
  const { items } = await client.list(R.BareMetalHost, hostNamespaceOf(consumer), {
    labelSelector: `${CONSUMER_LABEL}=${consumerLabelValue(consumer.name)}`,
    fieldSelector: except ? `metadata.name!=${except}` : undefined,
  });
  // The label only narrows (the consumerRef is the lock); the field selector needs no second look.
  return items
    .filter((h) => hostHeldBy(h, consumer))
    .sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : 1));
}

/**
 * This consumer's host and its strays. With `key` (the host its annotation names) the host is read
 * by name and the strays are the other hosts it holds (a list that is empty but after a crashed
 * pass, ADR 022 "Own host"); the caller checks the host's consumerRef (it may have lost our label or
 * be no longer ours). Without a key its host is the first one held (a pass that stopped between
 * claim and annotation) and the rest are strays.
 */
export async function heldHosts(
  client: KubeClient,
  consumer: HostConsumer,
  key: { namespace: string; name: string } | undefined,
): Promise<{ host: BareMetalHost | undefined; strays: BareMetalHost[] }> {
  if (!key) {
    const [host, ...strays] = await hostsHeldBy(client, consumer);
    return { host, strays };
  }
  // A host name of another namespace can not be left out by name: the list then has them all.
  const sameNamespace = key.namespace === hostNamespaceOf(consumer);
  const [host, held] = await Promise.all([
    client.get(R.BareMetalHost, key.namespace, key.name),
    hostsHeldBy(client, consumer, sameNamespace ? key.name : undefined),
  ]);
  return { host, strays: held.filter((h) => h.metadata.uid !== host?.metadata.uid) };
}

export async function findOrClaimHost(input: ClaimInput): Promise<ClaimOutcome> {
  const { client, consumer } = input;
  // A host already held by this consumer (a pass that stopped between claim and association).
  const [own] = await hostsHeldBy(client, consumer);
  if (own) return { kind: 'own', host: own };

  // Hosts booked for node reuse by this machine's KCP/MD come first and are never passed over.
  const reuseValues = input.reuseValues.filter((v) => !labelValueProblem(v));
  if (reuseValues.length > 0) {
    const { items } = await client.list(R.BareMetalHost, hostNamespaceOf(consumer), {
      labelSelector: serverLabelSelector(input.selector.matchLabels, [
        `${NODE_REUSE_LABEL} in (${reuseValues.join(',')})`,
      ]),
    });
    const reuse = items.filter((h) => classifyHost(h, input).kind === 'reuse');
    if (reuse.length > 0) {
      const choice = chooseHost(reuse, input, input.random);
      if (choice.kind !== 'reuse' && choice.kind !== 'own')
        return choice.kind === 'wait' ? choice : { kind: 'none', reason: 'no reusable host' };
      if (choice.kind === 'own') return { kind: 'own', host: choice.host };
      return claimLoop(input, new CandidatePool([choice.host], input.hints), 'reuse');
    }
  }

  // The failure domain is a preference (CAPM3 pickHost): its hosts are asked for first; when none
  // of them is eligible, any host is.
  if (
    input.failureDomain &&
    !labelValueProblem(input.failureDomain) &&
    !selectorMentions(input.selector, FAILURE_DOMAIN_LABEL)
  ) {
    const inDomain = claimSampler(
      input,
      freeHostSelector(input.selector, [`${FAILURE_DOMAIN_LABEL}=${input.failureDomain}`]),
    );
    await inDomain.fill();
    if (inDomain.eligible.length > 0) return claimLoop(input, inDomain, 'available');
  }
  const sampler = claimSampler(input, freeHostSelector(input.selector));
  await sampler.fill();
  return claimLoop(input, sampler, 'available');
}

/** The candidate pages of `labelSelector`, a host eligible as `classifyHost` says. */
const claimSampler = (input: ClaimInput, labelSelector: string): CandidateSampler =>
  new CandidateSampler(
    input.client,
    hostNamespaceOf(input.consumer),
    labelSelector,
    (h) => {
      const c = classifyHost(h, input).kind;
      return c === 'available' || c === 'own';
    },
    { pageSize: input.pageSize, enough: input.enoughCandidates, hints: input.hints },
  );

async function claimLoop(
  input: ClaimInput,
  pool: CandidatePool,
  via: 'reuse' | 'available',
): Promise<ClaimOutcome> {
  const attempts = input.attempts ?? 8;
  let conflicts = 0;
  for (let attempt = 0; attempt < attempts; attempt++) {
    const choice: Choice = await pool.pick(
      (hosts) => chooseHost(hosts, input, input.random),
      (c) => (c.kind === 'reuse' || c.kind === 'available' ? c.host : undefined),
    );
    if (choice.kind === 'own') return { kind: 'own', host: choice.host };
    if (choice.kind === 'wait' || choice.kind === 'none') {
      if (attempt === 0)
        return {
          kind: choice.kind,
          reason: `${choice.reason.replace(/ \(\d+ considered\)$/, '')} (${pool.considered} considered)`,
        };
      break;
    }
    const picked = choice.host;
    try {
      const res = await optimisticUpdate(
        input.client,
        R.BareMetalHost,
        picked.metadata.namespace,
        picked.metadata.name!,
        (h) => {
          const c = classifyHost(h, input);
          if (c.kind === 'own') return SKIP;
          if (c.kind === 'excluded' || (c.kind === 'reuse' && !c.ready)) return SKIP;
          takeHost(h, input.consumer);
        },
        { current: picked, retries: 1, expectedUid: picked.metadata.uid },
      );
      if (res.outcome === 'updated') return { kind: 'claimed', host: res.object, via, conflicts };
      if (
        res.outcome === 'skipped' &&
        isHeldBy(hostConsumerRef(res.object), input.consumer, res.object.metadata.namespace)
      ) {
        return { kind: 'own', host: res.object };
      }
      // Taken meanwhile (the re-read showed another consumer) or gone: choose again.
      if (res.outcome === 'skipped') conflicts++;
    } catch (e) {
      if (!isConflict(e)) throw e;
      conflicts++;
    }
  }
  return {
    kind: 'contention',
    reason: `could not claim a host after ${attempts} attempts (${conflicts} conflicts)`,
    conflicts,
  };
}

/**
 * The claim, in place: consumerRef, the consumer label and the consumer's own labels; a node-reuse
 * booking is consumed. Only called inside a resourceVersion-checked update of a host that was
 * eligible as read: that write is the lock.
 */
export function takeHost(h: BareMetalHost, consumer: HostConsumer): void {
  h.spec = { ...h.spec, consumerRef: consumerRefOf(consumer) };
  const labels: Record<string, string> = { ...(h.metadata.labels ?? {}) };
  for (const [k, v] of Object.entries(consumer.labels ?? {})) if (v !== undefined) labels[k] = v;
  labels[CONSUMER_LABEL] = consumerLabelValue(consumer.name);
  delete labels[NODE_REUSE_LABEL];
  h.metadata.labels = labels;
}
