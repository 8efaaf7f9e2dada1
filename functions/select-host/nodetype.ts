/**
 * selectHost for a NodeType: its status. Phase Ready (some host matches), Pending (none), Failed
 * (bad selector or resources); capacity: total (matching hosts not being deleted), available
 * (eligible now), claimed (held by anyone), provisioned (held by NodeClaims of this type).
 */
import { R } from '../../shared/api/resources.ts';
import { resourceTexts } from '../../shared/api/vmetal/common.ts';
import type { NodeType } from '../../shared/api/vmetal/nodetype.ts';
import { NODE_CLAIM_LABEL } from '../../shared/api/wellknown.ts';
import { optimisticUpdate, SKIP, sameJson } from '../../shared/kube/optimistic.ts';
import type { ReconcileContext } from '../../shared/reconcile/context.ts';
import { done, type ReconcileResult } from '../../shared/reconcile/result.ts';
import {
  compileTypeSelection,
  nodeTypeCapacity,
  type TypeSelection,
} from '../../shared/vmetal/eligibility.ts';
import { VMetalInputError } from '../../shared/vmetal/errors.ts';

type TypeStatus = NonNullable<NodeType['status']>;

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
  const hosts = (await ctx.client.list(R.BareMetalHost, namespace)).items;
  const { total, claimed, free } = nodeTypeCapacity(hosts, selection, namespace);
  const claims = (await ctx.client.list(R.NodeClaim)).items;
  const ofType = new Set(
    claims
      .filter((c) => (c.spec.typeRef || c.status?.nodeType) === t.metadata.name)
      .map((c) => c.metadata.uid),
  );
  const provisioned = hosts.filter((h) => {
    const uid = h.metadata.labels?.[NODE_CLAIM_LABEL];
    return uid !== undefined && ofType.has(uid);
  }).length;
  return {
    phase: total > 0 ? 'Ready' : 'Pending',
    ...(total > 0
      ? {}
      : { reason: 'NoMatchingHost', message: `no BareMetalHost in ${namespace} matches the selector` }),
    capacity: { total, available: free, claimed, provisioned },
  };
}

export async function reconcileNodeType(ctx: ReconcileContext, t: NodeType): Promise<ReconcileResult> {
  if (t.metadata.deletionTimestamp) return done('NodeType deleting');
  const want = await decide(ctx, t);
  await optimisticUpdate(
    ctx.client,
    R.NodeType,
    undefined,
    t.metadata.name!,
    (c) => {
      const next = { ...want, ...(c.status?.conditions ? { conditions: c.status.conditions } : {}) };
      if (sameJson(c.status, next)) return SKIP;
      c.status = next;
    },
    { status: true, current: t, expectedUid: t.metadata.uid },
  );
  return done(`NodeType ${want.phase}`);
}
