/**
 * selectHost for a NodeProvider (issue 19): its NodeTypes (one per `metal3.nodeTypes[]` entry,
 * owned by it, created, updated and deleted with it; a name another provider uses is a
 * condition), one IPPool per distinct network of its and its types' properties (an overlap is a
 * condition, no pool), NotSupported for the fields we accept without acting on them. Deleting the
 * provider, or removing a type, waits while NodeClaims use it.
 */

import { addFinalizer } from '../../shared/allocation/objects.ts';
import { R } from '../../shared/api/resources.ts';
import type { NodeClaim } from '../../shared/api/vmetal/nodeclaim.ts';
import type { Metal3NodeTypeSpec, NodeProvider } from '../../shared/api/vmetal/nodeprovider.ts';
import type { NodeType } from '../../shared/api/vmetal/nodetype.ts';
import { FINALIZER, VMETAL_PROVIDER_LABEL } from '../../shared/api/wellknown.ts';
import { type ConditionInput, setCondition } from '../../shared/capi/conditions.ts';
import { isAlreadyExists } from '../../shared/kube/errors.ts';
import { optimisticUpdate, SKIP, sameJson } from '../../shared/kube/optimistic.ts';
import type { ReconcileContext } from '../../shared/reconcile/context.ts';
import { done, type ReconcileResult, requeueAfter } from '../../shared/reconcile/result.ts';
import { VMetalInputError } from '../../shared/vmetal/errors.ts';
import { networkKey, parseNetwork, type VMetalNetwork } from '../../shared/vmetal/network.ts';
import { providerHostNamespace } from '../../shared/vmetal/setting.ts';
import { WAIT_RECHECK_SECONDS } from '../../shared/vmetal/status.ts';
import { ensureNetworkPool, isOwnedBy, providerOwnerRef } from './vmetal-pool.ts';

export const PROVIDER_COND = {
  NodeTypesSynced: 'NodeTypesSynced',
  NetworksReady: 'NetworksReady',
  NotSupported: 'NotSupported',
} as const;

/** The fields a vMetal user may set that we accept and do not act on. */
export function notSupportedFields(p: NodeProvider): string[] {
  const m = p.spec.metal3;
  const out: string[] = [];
  if (m?.deploy !== undefined) out.push('spec.metal3.deploy');
  if (m?.neutronEnabled) out.push('spec.metal3.neutronEnabled');
  if (m?.netris !== undefined) out.push('spec.metal3.netris');
  (m?.nodeTypes ?? []).forEach((t, i) => {
    if (t.zone) out.push(`spec.metal3.nodeTypes[${i}].zone`);
    if (t.region) out.push(`spec.metal3.nodeTypes[${i}].region`);
    if (t.maxCapacity !== undefined) out.push(`spec.metal3.nodeTypes[${i}].maxCapacity`);
  });
  return out;
}

/** The NodeType a provider entry describes. */
export function desiredNodeType(p: NodeProvider, entry: Metal3NodeTypeSpec): NodeType {
  const { name, metadata, ...spec } = entry;
  return {
    apiVersion: 'vmetal.metal3fn.io/v1alpha1',
    kind: 'NodeType',
    metadata: {
      name,
      labels: { ...(metadata?.labels ?? {}), [VMETAL_PROVIDER_LABEL]: p.metadata.name! },
      ...(metadata?.annotations ? { annotations: { ...metadata.annotations } } : {}),
      ownerReferences: [providerOwnerRef(p)],
    },
    spec: { ...spec, providerRef: p.metadata.name },
  };
}

/** Whether a claim uses one of `types`, or (without) provider `p` or one of its types. */
function usesProvider(c: NodeClaim, p: NodeProvider, types?: ReadonlySet<string>): boolean {
  const type = c.spec.typeRef || c.status?.nodeType;
  if (types) return type !== undefined && types.has(type);
  return c.spec.providerRef === p.metadata.name || (type !== undefined && ownedTypeNames(p).has(type));
}
const ownedTypeNames = (p: NodeProvider) => new Set((p.spec.metal3?.nodeTypes ?? []).map((t) => t.name));

/** NodeClaims per page of a scan for users (the API can not select claims by provider or type). */
export const CLAIM_SCAN_PAGE = 100;
/** Users named in a waiting message. */
const NAMED_USERS = 10;

/**
 * Up to NAMED_USERS claims `uses` accepts, read page by page until that many are known or the list
 * ends (ADR 025): a provider pass lists no claim unless something waits for claims, and then only
 * until it knows who waits it. `more`: the list was not read to its end.
 */
async function claimsUsing(
  ctx: ReconcileContext,
  uses: (c: NodeClaim) => boolean,
): Promise<{ users: NodeClaim[]; more: boolean }> {
  const users: NodeClaim[] = [];
  let cont: string | undefined;
  do {
    const page = await ctx.client.list(R.NodeClaim, undefined, {
      limit: CLAIM_SCAN_PAGE,
      maxPages: 1,
      continue: cont,
    });
    users.push(...page.items.filter(uses));
    cont = page.continue;
  } while (cont && users.length < NAMED_USERS);
  return { users: users.slice(0, NAMED_USERS), more: Boolean(cont) || users.length > NAMED_USERS };
}

const named = (r: { users: NodeClaim[]; more: boolean }): string =>
  `${r.users.map((c) => `${c.metadata.namespace}/${c.metadata.name}`).join(', ')}${r.more ? ', …' : ''}`;

async function syncNodeTypes(ctx: ReconcileContext, p: NodeProvider): Promise<ConditionInput> {
  const problems: string[] = [];
  const entries = p.spec.metal3?.nodeTypes ?? [];
  const seen = new Set<string>();
  for (const entry of entries) {
    if (seen.has(entry.name)) {
      problems.push(`NodeType ${entry.name} is listed twice`);
      continue;
    }
    seen.add(entry.name);
    const want = desiredNodeType(p, entry);
    const have = await ctx.client.get(R.NodeType, undefined, entry.name);
    if (!have) {
      try {
        await ctx.client.create(R.NodeType, want);
      } catch (e) {
        if (!isAlreadyExists(e)) throw e;
        problems.push(`NodeType ${entry.name} was created meanwhile by someone else`);
      }
      continue;
    }
    if (!isOwnedBy(have, p.metadata.uid)) {
      problems.push(
        `NodeType ${entry.name} belongs to ${have.spec.providerRef ? `NodeProvider ${have.spec.providerRef}` : 'another owner'}`,
      );
      continue;
    }
    await optimisticUpdate(ctx.client, R.NodeType, undefined, entry.name, (t) => {
      if (!isOwnedBy(t, p.metadata.uid)) return SKIP;
      if (sameJson(t.spec, want.spec) && sameJson(t.metadata.labels, want.metadata.labels)) return SKIP;
      t.spec = want.spec;
      t.metadata.labels = want.metadata.labels;
      if (want.metadata.annotations)
        t.metadata.annotations = { ...t.metadata.annotations, ...want.metadata.annotations };
    });
  }
  // Types this provider made that its list no longer has: deleted once no claim uses them.
  const owned = (
    await ctx.client.list(R.NodeType, undefined, {
      labelSelector: `${VMETAL_PROVIDER_LABEL}=${p.metadata.name}`,
    })
  ).items;
  for (const t of owned) {
    if (seen.has(t.metadata.name!) || !isOwnedBy(t, p.metadata.uid) || t.metadata.deletionTimestamp) continue;
    const using = await claimsUsing(ctx, (c) => usesProvider(c, p, new Set([t.metadata.name!])));
    if (using.users.length > 0) {
      problems.push(`NodeType ${t.metadata.name} is removed but NodeClaims still use it: ${named(using)}`);
      continue;
    }
    await ctx.client.delete(R.NodeType, undefined, t.metadata.name!, {
      preconditions: { uid: t.metadata.uid },
    });
  }
  return problems.length === 0
    ? { type: PROVIDER_COND.NodeTypesSynced, status: 'True' }
    : {
        type: PROVIDER_COND.NodeTypesSynced,
        status: 'False',
        severity: 'Warning',
        reason: 'NodeTypeConflict',
        message: problems.join('; '),
      };
}

async function syncNetworks(
  ctx: ReconcileContext,
  p: NodeProvider,
  namespace: string,
): Promise<ConditionInput> {
  const networks = new Map<string, VMetalNetwork>();
  const problems: string[] = [];
  const levels = [{ where: `NodeProvider ${p.metadata.name}`, props: p.spec.properties ?? {} }];
  for (const t of p.spec.metal3?.nodeTypes ?? [])
    levels.push({
      where: `NodeType ${t.name}`,
      props: { ...(p.spec.properties ?? {}), ...(t.properties ?? {}) },
    });
  for (const { where, props } of levels) {
    try {
      const n = parseNetwork(props);
      if (n) networks.set(networkKey(n), n);
    } catch (e) {
      if (!(e instanceof VMetalInputError)) throw e;
      problems.push(`${where}: ${e.message}`);
    }
  }
  const pools = (await ctx.client.list(R.IPPool)).items;
  for (const n of networks.values()) {
    const outcome = await ensureNetworkPool(ctx.client, p, namespace, n, pools);
    if (outcome.kind === 'overlap') problems.push(outcome.message);
  }
  return problems.length === 0
    ? { type: PROVIDER_COND.NetworksReady, status: 'True' }
    : {
        type: PROVIDER_COND.NetworksReady,
        status: 'False',
        severity: 'Warning',
        reason: 'NetworkProblem',
        message: problems.join('; '),
      };
}

async function writeStatus(
  ctx: ReconcileContext,
  p: NodeProvider,
  phase: string,
  conds: ConditionInput[],
  message?: string,
) {
  await optimisticUpdate(
    ctx.client,
    R.NodeProvider,
    undefined,
    p.metadata.name!,
    (c) => {
      let list = c.status?.conditions;
      for (const cond of conds) list = setCondition(list, cond, ctx.now());
      const status = { ...(c.status ?? {}), phase, conditions: list ?? [] };
      if (message) status.message = message;
      else delete status.message;
      c.status = status;
    },
    { status: true, current: p, expectedUid: p.metadata.uid },
  );
}

export async function reconcileNodeProvider(
  ctx: ReconcileContext,
  p: NodeProvider,
): Promise<ReconcileResult> {
  if (p.metadata.deletionTimestamp) {
    const using = await claimsUsing(ctx, (c) => usesProvider(c, p));
    if (using.users.length > 0) {
      const message = `deletion waits for NodeClaims: ${named(using)}`;
      await writeStatus(ctx, p, 'Pending', [], message);
      return requeueAfter(WAIT_RECHECK_SECONDS, message);
    }
    await optimisticUpdate(ctx.client, R.NodeProvider, undefined, p.metadata.name!, (c) => {
      if (!c.metadata.finalizers?.includes(FINALIZER.nodeProvider)) return SKIP;
      c.metadata.finalizers = c.metadata.finalizers.filter((f) => f !== FINALIZER.nodeProvider);
    });
    return done('NodeProvider released (its NodeTypes and IPPools go with it)');
  }
  const added = await optimisticUpdate(
    ctx.client,
    R.NodeProvider,
    undefined,
    p.metadata.name!,
    (c) => (addFinalizer(c, FINALIZER.nodeProvider) ? undefined : SKIP),
    { current: p, expectedUid: p.metadata.uid },
  );
  if (added.outcome === 'gone') return done('NodeProvider gone');
  const provider = added.object;
  const unsupported = notSupportedFields(provider);
  const notSupported: ConditionInput = unsupported.length
    ? {
        type: PROVIDER_COND.NotSupported,
        status: 'True',
        severity: 'Info',
        reason: 'FieldsNotActedOn',
        message: `accepted but not acted on: ${unsupported.join(', ')}`,
      }
    : { type: PROVIDER_COND.NotSupported, status: 'False' };
  let namespace: string;
  try {
    namespace = providerHostNamespace(provider);
  } catch (e) {
    if (!(e instanceof VMetalInputError)) throw e;
    await writeStatus(ctx, provider, 'Failed', [notSupported], e.message);
    return done(e.message);
  }
  const typesCond = await syncNodeTypes(ctx, provider);
  const networksCond = await syncNetworks(ctx, provider, namespace);
  const ok = typesCond.status === 'True' && networksCond.status === 'True';
  await writeStatus(
    ctx,
    provider,
    ok ? 'Available' : 'Failed',
    [typesCond, networksCond, notSupported],
    ok ? undefined : [typesCond.message, networksCond.message].filter(Boolean).join('; '),
  );
  return done(ok ? 'NodeProvider in sync' : 'NodeProvider has problems (see its conditions)');
}
