/**
 * selectHost for a NodeType: its status. Phase Ready (some host matches), Pending (none), Failed
 * (bad selector or resources); capacity: total (matching hosts not being deleted), available
 * (eligible now), claimed (held by anyone), provisioned (held by NodeClaims of this type).
 *
 * Counting reads every host the selector matches, so it is coalesced (ADR 025): a pass woken by a
 * host change (or its own requeue) within the window after the last count does not list; it
 * requeues for the window's end, with a due time computed from the status (one deduplication id
 * for every such pass). Its own events (spec, labels) and resyncs count at once.
 */
import type { MessageEnvelope } from '../../events/envelope.ts';
import { R } from '../../shared/api/resources.ts';
import { resourceTexts } from '../../shared/api/vmetal/common.ts';
import type { NodeType } from '../../shared/api/vmetal/nodetype.ts';
import { selectorHosts } from '../../shared/hosts/candidates.ts';
import { optimisticUpdate, SKIP, sameJson } from '../../shared/kube/optimistic.ts';
import type { ReconcileContext } from '../../shared/reconcile/context.ts';
import { done, type ReconcileResult, requeueAt } from '../../shared/reconcile/result.ts';
import {
  compileTypeSelection,
  nodeTypeCapacity,
  type TypeSelection,
} from '../../shared/vmetal/eligibility.ts';
import { VMetalInputError } from '../../shared/vmetal/errors.ts';

type TypeStatus = NonNullable<NodeType['status']>;

/** The coalescing window per host counted: a NodeType lists at most 1 / this hosts per second on average. */
export const COUNT_WINDOW_MS_PER_HOST = 500;
export const COUNT_WINDOW_MIN_MS = 5_000;
/** SQS's longest delay (one requeue hop): the counts are never staler than this while hosts change. */
export const COUNT_WINDOW_MAX_MS = 900_000;

/** How long after a count a host change waits for the next one, for a type of `total` hosts. */
export const countWindowMs = (total: number): number =>
  Math.min(COUNT_WINDOW_MAX_MS, Math.max(COUNT_WINDOW_MIN_MS, total * COUNT_WINDOW_MS_PER_HOST));

/** Messages a count may wait for: a host's change (routed) and the requeue such a pass left. */
const coalesced = (msg: MessageEnvelope): boolean =>
  msg.reason === 'requeue' || (msg.reason === 'related' && Boolean(msg.cause?.startsWith('BareMetalHost/')));

/** When the last count was taken (ms), if the status says. */
function countedAtMs(t: NodeType): number | undefined {
  const at = t.status?.countedAt ? Date.parse(t.status.countedAt) : Number.NaN;
  return Number.isFinite(at) ? at : undefined;
}

async function decide(ctx: ReconcileContext, t: NodeType): Promise<TypeStatus> {
  const provider = t.spec.providerRef
    ? await ctx.client.get(R.NodeProvider, undefined, t.spec.providerRef)
    : undefined;
  const namespace = provider?.spec.metal3?.clusterRef?.namespace;
  if (!namespace)
    return {
      phase: 'Pending',
      reason: 'NoProvider',
      message: `NodeProvider ${t.spec.providerRef ?? '<unset>'} not found or without clusterRef.namespace`,
    };
  let selection: TypeSelection;
  try {
    selection = compileTypeSelection({
      name: t.metadata.name!,
      selector: t.spec.bareMetalHosts?.selector,
      resources: resourceTexts(t.spec.resources),
    });
  } catch (e) {
    if (!(e instanceof VMetalInputError)) throw e;
    return { phase: 'Failed', reason: e.reason, message: e.message };
  }
  const countedAt = ctx.now().toISOString();
  // The matching hosts only (the server narrows by the selector; nodeTypeCapacity re-checks).
  const hosts = (
    await ctx.client.list(R.BareMetalHost, namespace, { labelSelector: selectorHosts(selection.selector) })
  ).items;
  const { total, claimed, free, provisioned } = nodeTypeCapacity(hosts, selection, namespace);
  return {
    phase: total > 0 ? 'Ready' : 'Pending',
    ...(total > 0
      ? {}
      : { reason: 'NoMatchingHost', message: `no BareMetalHost in ${namespace} matches the selector` }),
    capacity: { total, available: free, claimed, provisioned },
    countedAt,
  };
}

export async function reconcileNodeType(
  ctx: ReconcileContext,
  t: NodeType,
  msg: MessageEnvelope,
): Promise<ReconcileResult> {
  if (t.metadata.deletionTimestamp) return done('NodeType deleting');
  const last = countedAtMs(t);
  if (coalesced(msg) && last !== undefined) {
    // A requeue due no later than the last count: that count saw every change before it was due.
    if (msg.reason === 'requeue' && msg.notBefore !== undefined && last >= msg.notBefore)
      return done('NodeType counted since this requeue was due');
    const due = last + countWindowMs(t.status?.capacity?.total ?? 0);
    const now = ctx.now().getTime();
    if (now < due) return requeueAt(due, now, 'NodeType counted recently: counting again at the window end');
  }
  const want = await decide(ctx, t);
  const mine = want.countedAt ? Date.parse(want.countedAt) : undefined;
  await optimisticUpdate(
    ctx.client,
    R.NodeType,
    undefined,
    t.metadata.name!,
    (c) => {
      // A count started later than this one was written meanwhile (concurrent passes): it stands.
      const theirs = countedAtMs(c);
      if (mine !== undefined && theirs !== undefined && theirs > mine) return SKIP;
      const next = { ...want, ...(c.status?.conditions ? { conditions: c.status.conditions } : {}) };
      const { countedAt: _a, ...nextCounts } = next;
      const { countedAt: _b, ...haveCounts } = c.status ?? {};
      // The same counts: a pass of the type's own event writes nothing; a coalesced one records
      // when it counted (what the window is measured from).
      if (sameJson(haveCounts, nextCounts) && (!coalesced(msg) || !next.countedAt)) return SKIP;
      c.status = next;
    },
    { status: true, current: t, expectedUid: t.metadata.uid },
  );
  return done(`NodeType ${want.phase}`);
}
