/**
 * Release (issue 6; docs/adr/004-data-ownership-and-release.md): the deletion paths of
 * Metal3DataClaim, Metal3Data and IPClaim. Each step is idempotent and explicit; a release
 * cascades inline (claim -> its Metal3Data -> its IPClaims -> their IPAddresses) so one invocation
 * frees everything it can, and the later watch events of the same objects find nothing left to do.
 * Nothing here relies on garbage collection, although every object we create is also owned.
 */

import { addressesOfClaimCandidates } from '../allocation/address-reads.ts';
import { dataOfClaimCandidates } from '../allocation/data-reads.ts';
import { hasFinalizer, isDeleting, isOwnedBy, keyOf, removeFinalizer } from '../allocation/objects.ts';
import { isAddressOfClaim, isDataOfClaim } from '../allocation/serves.ts';
import {
  type DataClaimView,
  type IPAddressView,
  type IPClaimView,
  type Metal3DataView,
  V,
} from '../allocation/views.ts';
import { R, type Resource } from '../api/resources.ts';
import { FINALIZER } from '../api/wellknown.ts';
import { clusterLabelOrSpec } from '../capi/lookups.ts';
import { isConflict } from '../kube/errors.ts';
import { optimisticUpdate, SKIP } from '../kube/optimistic.ts';
import type { KubeObject } from '../kube/types.ts';
import type { ReconcileContext, ReconcileFn } from '../reconcile/context.ts';
import { recordEventOnly } from '../reconcile/failure.ts';
import { reconcileKinds, reconcileObject } from '../reconcile/object.ts';
import { done, type ReconcileResult, requeueAfter } from '../reconcile/result.ts';
import { ipClaimsOfData, secretsOfData } from './dependents.ts';
import { removeHeldEntries } from './held-entries.ts';

/** Deletes `obj` if it is still the same object (uid precondition); false when already gone/replaced. */
async function deleteExact<T extends KubeObject>(
  ctx: ReconcileContext,
  t: Resource<T>,
  obj: KubeObject,
): Promise<boolean> {
  try {
    return await ctx.client.delete(t, obj.metadata.namespace, obj.metadata.name!, {
      preconditions: { uid: obj.metadata.uid! },
    });
  } catch (e) {
    if (!isConflict(e)) throw e;
    // A 409 is a failed uid precondition (another object of that name now: not ours to delete) or
    // a plain conflict on our own object: only the first may be skipped. Skipping the second would
    // let the caller drop the finalizer of an object that was never deleted, and leak it.
    const fresh = await ctx.client.get(t, obj.metadata.namespace, obj.metadata.name!);
    if (!fresh || fresh.metadata.uid !== obj.metadata.uid) return false;
    if (fresh.metadata.deletionTimestamp) return true;
    throw e;
  }
}

async function dropFinalizer<T extends KubeObject>(
  ctx: ReconcileContext,
  t: Resource<T>,
  obj: T,
  finalizer: string,
): Promise<void> {
  if (!hasFinalizer(obj, finalizer)) return;
  await optimisticUpdate(
    ctx.client,
    t,
    obj.metadata.namespace,
    obj.metadata.name!,
    (o) => (removeFinalizer(o, finalizer) ? undefined : SKIP),
    {
      current: obj,
      expectedUid: obj.metadata.uid,
      retries: 20,
    },
  );
}

/** Deletes `obj` and removes `finalizer` from it (delete first: the object's own release runs on its event). */
async function deleteAndUnblock<T extends KubeObject>(
  ctx: ReconcileContext,
  t: Resource<T>,
  obj: T,
  finalizer: string,
): Promise<void> {
  if (!isDeleting(obj)) await deleteExact(ctx, t, obj);
  const fresh = await ctx.client.get(t, obj.metadata.namespace, obj.metadata.name!);
  if (fresh && fresh.metadata.uid === obj.metadata.uid) await dropFinalizer(ctx, t, fresh, finalizer);
}

/**
 * A deleting Metal3DataClaim: delete its Metal3Data, drop the template entries, then its
 * finalizer. `current`: the claim as the caller has just read it (else it is read here). Every
 * object of the release is read through a view (shared/allocation/views.ts): a deleting object is
 * released whatever its spec says.
 */
export async function releaseDataClaim(
  ctx: ReconcileContext,
  namespace: string,
  name: string,
  current?: DataClaimView,
): Promise<ReconcileResult> {
  const { client } = ctx;
  const raw = current ?? (await client.get(V.Metal3DataClaim, namespace, name));
  if (!raw || !isDeleting(raw)) return done('nothing to release');
  if (!hasFinalizer(raw, FINALIZER.dataClaim)) return done('released');
  const claim = raw;
  const rendered = claim.status?.renderedData?.name;
  const datas = (await dataOfClaimCandidates(client, namespace, name)).filter((d) => {
    if (isDataOfClaim(d, claim)) return true;
    return d.metadata.name === rendered && isOwnedBy(d, raw.metadata.uid);
  });
  // The one the claim's status names, owned by it, even if its spec names no claim of that name
  // (the candidates are selected by spec.claim.name).
  if (rendered && !datas.some((d) => d.metadata.name === rendered)) {
    const d = await client.get(V.Metal3Data, namespace, rendered);
    if (d && isOwnedBy(d, raw.metadata.uid)) datas.push(d);
  }
  for (const d of datas) {
    await deleteAndUnblock(ctx, V.Metal3Data, d, FINALIZER.dataClaim);
    await releaseData(ctx, namespace, d.metadata.name!);
  }
  const templateName = claim.spec?.template?.name;
  if (templateName) {
    // The entries the one Metal3Data released here was recorded under, removed without a read
    // while they still say so; anything else (more or no Metal3Data, drift) the general way.
    const [d] = datas;
    const held =
      datas.length === 1 && d?.spec && typeof d.spec.index === 'number'
        ? [
            { path: ['indexes', String(d.spec.index)], value: name },
            { path: ['dataNames', name], value: d.metadata.name! },
          ]
        : [];
    if (!(await removeHeldEntries(ctx.client, V.Metal3DataTemplate, namespace, templateName, held)))
      await dropTemplateEntries(ctx, namespace, templateName, name);
  }
  await dropFinalizer(ctx, V.Metal3DataClaim, raw, FINALIZER.dataClaim);
  ctx.log.info('Metal3DataClaim released', {
    claim: `${namespace}/${name}`,
    data: datas.map((d) => d.metadata.name),
  });
  return done(`released ${datas.length} Metal3Data`);
}

/**
 * Removes the claim `claimName` from the status maps of the template `templateName` (its index,
 * its Metal3Data name, and its burst registry entry if it was deleted after it joined, before its
 * allocation: ADR 012). With `only`, just the entries of that one Metal3Data (a batch's, whose
 * claim went away: ADR 033). No write when none is there.
 */
export async function dropTemplateEntries(
  ctx: ReconcileContext,
  namespace: string,
  templateName: string,
  claimName: string,
  only?: { index: number; dataName: string },
): Promise<void> {
  await optimisticUpdate(
    ctx.client,
    V.Metal3DataTemplate,
    namespace,
    templateName,
    (o) => {
      const status = o.status;
      let changed = false;
      if (!only && status?.allocating && claimName in status.allocating) {
        delete status.allocating[claimName];
        changed = true;
      }
      // With `only`: a new claim of that name may hold entries of its own; those stay.
      for (const [index, name] of Object.entries(status?.indexes ?? {})) {
        if (name === claimName && (!only || index === String(only.index))) {
          delete status!.indexes![index];
          changed = true;
        }
      }
      const dataName = status?.dataNames?.[claimName];
      if (dataName !== undefined && (!only || dataName === only.dataName)) {
        delete status!.dataNames![claimName];
        changed = true;
      }
      return changed ? undefined : SKIP;
    },
    { status: true, retries: 20 },
  );
}

/** A Metal3Data whose claim is gone: delete it and release it (its claim's finalizer included). */
export async function releaseOrphanData(ctx: ReconcileContext, data: Metal3DataView): Promise<void> {
  const ns = data.metadata.namespace!;
  const raw = await ctx.client.get(V.Metal3Data, ns, data.metadata.name!);
  if (!raw || raw.metadata.uid !== data.metadata.uid) return;
  if (!isDeleting(raw)) await deleteExact(ctx, V.Metal3Data, raw);
  await releaseData(ctx, ns, data.metadata.name!);
}

/**
 * A Metal3Data its (live) claim does not use: another allocation served the claim meanwhile (two
 * runtimes allocating it at once, ADR 033). Deleted and released, the claim's finalizer on it
 * dropped here (the claim would hold it until its own release).
 */
export async function releaseSurplusData(ctx: ReconcileContext, data: Metal3DataView): Promise<void> {
  await deleteAndUnblock(ctx, V.Metal3Data, data, FINALIZER.dataClaim);
  await releaseData(ctx, data.metadata.namespace!, data.metadata.name!);
}

/**
 * An IPAddress whose IPClaim is gone (a crash between its create and the claim's release): nobody
 * else would ever free it, and a deleting pool waits for it. Its finalizer goes, then the object.
 */
export async function releaseOrphanAddress(ctx: ReconcileContext, address: IPAddressView): Promise<void> {
  await deleteAndUnblock(ctx, V.IPAddress, address, FINALIZER.ipAddress);
}

/** IPClaims of a Metal3Data that is gone: drop our finalizer, delete, release (GC alone would stall on the finalizer). */
export async function releaseOrphanIPClaims(
  ctx: ReconcileContext,
  namespace: string,
  dataName: string,
  dataUid: string,
): Promise<void> {
  for (const c of await ipClaimsOfData(ctx.client, namespace, dataName, dataUid)) {
    await deleteAndUnblock(ctx, V.IPClaim, c, FINALIZER.data);
    await releaseIPClaim(ctx, namespace, c.metadata.name!);
  }
}

/** A deleting Metal3Data: delete its IPClaims and rendered Secrets, then drop our finalizer(s). */
export async function releaseData(
  ctx: ReconcileContext,
  namespace: string,
  name: string,
  current?: Metal3DataView,
): Promise<ReconcileResult> {
  const { client } = ctx;
  const raw = current ?? (await client.get(V.Metal3Data, namespace, name));
  if (!raw || !isDeleting(raw)) return done('nothing to release');
  const uid = raw.metadata.uid;
  if (hasFinalizer(raw, FINALIZER.data)) {
    await releaseOrphanIPClaims(ctx, namespace, name, uid!);
    for (const s of await secretsOfData(client, raw)) await deleteExact(ctx, R.Secret, s);
    await dropFinalizer(ctx, V.Metal3Data, raw, FINALIZER.data);
  }
  // The claim's finalizer is the claim's to drop; if the claim is gone (or another object of that
  // name), nobody else will.
  const fresh = await client.get(V.Metal3Data, namespace, name);
  if (fresh && fresh.metadata.uid === uid && hasFinalizer(fresh, FINALIZER.dataClaim)) {
    const data = fresh;
    const claim = await client.get(
      V.Metal3DataClaim,
      data.spec?.claim?.namespace || namespace,
      data.spec?.claim?.name ?? '',
    );
    if (!claim || isDeleting(claim) || !isOwnedBy(fresh, claim.metadata.uid)) {
      await dropFinalizer(ctx, V.Metal3Data, fresh, FINALIZER.dataClaim);
    }
  }
  return done('released');
}

/** A deleting IPClaim: delete its IPAddress, drop the pool's entry, then the IPAM finalizer. */
export async function releaseIPClaim(
  ctx: ReconcileContext,
  namespace: string,
  name: string,
  current?: IPClaimView,
): Promise<ReconcileResult> {
  const { client } = ctx;
  const raw = current ?? (await client.get(V.IPClaim, namespace, name));
  if (!raw || !isDeleting(raw)) return done('nothing to release');
  if (!hasFinalizer(raw, FINALIZER.ipClaim)) return done('released');
  const others = (raw.metadata.finalizers ?? []).filter((f) => f !== FINALIZER.ipClaim);
  // As ip-address-manager: wait while its user (the Metal3Data) still holds it.
  if (others.length > 0) return done(`waiting for finalizers ${others.join(', ')}`);
  const claim = raw;
  const poolName = claim.spec?.pool?.name;
  const addresses = (await addressesOfClaimCandidates(client, namespace, name)).filter(
    (a) => (!poolName || a.spec?.pool?.name === poolName) && isAddressOfClaim(a, claim),
  );
  for (const a of addresses) await deleteAndUnblock(ctx, V.IPAddress, a, FINALIZER.ipAddress);
  if (poolName) {
    const [a] = addresses;
    const held =
      addresses.length === 1 && a?.spec?.address ? [{ path: ['indexes', name], value: a.spec.address }] : [];
    if (!(await removeHeldEntries(ctx.client, V.IPPool, namespace, poolName, held)))
      await dropPoolEntries(ctx, namespace, poolName, name);
  }
  await dropFinalizer(ctx, V.IPClaim, raw, FINALIZER.ipClaim);
  return done(`released ${addresses.length} IPAddress`);
}

/**
 * Removes the IPClaim `claimName` from the pool's status: its entry, and its burst registry entry
 * if it was deleted before its allocation (ADR 012). With `onlyAddress`, just its entry, and only
 * while it names that address (a batch's, whose claim went away: ADR 033).
 */
export async function dropPoolEntries(
  ctx: ReconcileContext,
  namespace: string,
  poolName: string,
  claimName: string,
  onlyAddress?: string,
): Promise<void> {
  await optimisticUpdate(
    ctx.client,
    V.IPPool,
    namespace,
    poolName,
    (o) => {
      const status = o.status;
      const maps = (onlyAddress ? [status?.indexes] : [status?.indexes, status?.allocating]).filter(
        (m) => m !== undefined && claimName in m,
      );
      if (onlyAddress && status?.indexes?.[claimName] !== onlyAddress) return SKIP;
      if (maps.length === 0) return SKIP;
      for (const m of maps) delete m![claimName];
    },
    { status: true, retries: 20 },
  );
}

/**
 * The deprovision function's core dispatches deleting Metal3DataClaim, Metal3Data and IPClaim
 * here, each read once by the shared opening through its release view.
 */
export const reconcileRelease: ReconcileFn = reconcileKinds(
  {
    Metal3DataClaim: reconcileObject({
      resource: V.Metal3DataClaim,
      gone: 'nothing to release',
      reconcile: (ctx, claim) =>
        releaseDataClaim(ctx, claim.metadata.namespace!, claim.metadata.name!, claim),
      recordFailure: recordEventOnly,
      cluster: clusterLabelOrSpec,
    }),
    Metal3Data: reconcileObject({
      resource: V.Metal3Data,
      gone: 'nothing to release',
      reconcile: (ctx, data) => releaseData(ctx, data.metadata.namespace!, data.metadata.name!, data),
      recordFailure: recordEventOnly,
      cluster: clusterLabelOrSpec,
    }),
    IPClaim: reconcileObject({
      resource: V.IPClaim,
      gone: 'nothing to release',
      reconcile: (ctx, claim) => releaseIPClaim(ctx, claim.metadata.namespace!, claim.metadata.name!, claim),
      recordFailure: recordEventOnly,
      cluster: clusterLabelOrSpec,
    }),
  },
  (kind) => `release: ${kind} is not a kind released here`,
);

/** What still holds a deleting template or pool: its live claims, then what it handed out. */
export interface DeletionHolders {
  /** Live (not deleting) claims of it, and how to name them (`Metal3DataClaim(s)`). */
  claims: readonly KubeObject[];
  claimsNoun: string;
  /** The Metal3Data / IPAddresses it handed out that are still there (`IPAddress(es)`). */
  handedOut: readonly KubeObject[];
  handedOutNoun: string;
  /** The result note once nothing holds it. */
  releasedNote: string;
  /** The log field naming it (`template`, `pool`). */
  logField: string;
}

/**
 * The end of a template's or pool's deletion: wait while a live claim uses it (its deletion wakes
 * us: no requeue, as in CAPM3), then while anything it handed out is left (woken by its deletion;
 * the requeue is only a safety net), then drop `finalizer`.
 */
export async function dropFinalizerWhenUnheld<T extends KubeObject>(
  ctx: ReconcileContext,
  t: Resource<T>,
  raw: T,
  finalizer: string,
  h: DeletionHolders,
): Promise<ReconcileResult> {
  const key = keyOf(raw);
  if (h.claims.length > 0) {
    return done(
      `${t.kind} ${key} is being deleted: waiting for ${h.claims.length} ${h.claimsNoun} using it (${listed(h.claims)})`,
    );
  }
  if (h.handedOut.length > 0) {
    return requeueAfter(
      ctx.config.safetyRequeueSeconds,
      `${t.kind} ${key} is being deleted: waiting for ${h.handedOut.length} ${h.handedOutNoun} to be released (${listed(h.handedOut)})`,
    );
  }
  await optimisticUpdate(
    ctx.client,
    t,
    raw.metadata.namespace,
    raw.metadata.name!,
    (o) => (removeFinalizer(o, finalizer) ? undefined : SKIP),
    { current: raw, expectedUid: raw.metadata.uid, retries: 20 },
  );
  ctx.log.info(`${t.kind} released`, { [h.logField]: key });
  return done(h.releasedNote);
}

/** At most five keys, for a message a person reads. */
function listed(objs: readonly KubeObject[]): string {
  const names = objs.slice(0, 5).map((o) => keyOf(o));
  return objs.length > 5 ? `${names.join(', ')}, ...` : names.join(', ');
}
