/**
 * resolveProviderID (seed 000): once the Metal3Machine's host is `provisioned`, find the workload
 * cluster's Node for it and make the two agree on a providerID. Reads, one pure decision
 * (shared/providerid), then writes in the order the seed asks: the machine's providerID and
 * ready first, then only `spec.providerID` of the Node, conditioned on what the decision read of
 * it (its uid, the labels it was found by, its providerID unset: JSON patch tests, ADR 026).
 *
 * Woken by the host's events and the workload cluster's Node events (the relay maps both to the
 * machine key); a requeue-after is only a safety net. A vMetal NodeClaim gets Provisioned, Joined
 * and Available here (./nodeclaim.ts).
 */

import type { MessageEnvelope } from '../../events/envelope.ts';
import {
  type BareMetalHost,
  envelopeOf,
  K,
  type MachineAddress,
  type Metal3Cluster,
  type Metal3Machine,
  R,
} from '../../shared/api/index.ts';
import { recordOf } from '../../shared/api/json.ts';
import { CAPI_PAUSED_ANNOTATION, CLUSTER_NAME_LABEL, hostRefOf } from '../../shared/api/wellknown.ts';
import { clusterLabelOrSpec, getCluster, getMetal3Cluster, isPaused } from '../../shared/capi/lookups.ts';
import { hostHeldBy, metal3MachineConsumer } from '../../shared/hosts/consumer.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { InvalidError, isConflict, NotFoundError } from '../../shared/kube/errors.ts';
import { optimisticUpdate, SKIP } from '../../shared/kube/optimistic.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { isWorkloadUnavailable } from '../../shared/kube/workload.ts';
import {
  cloudProviderEnabled,
  type Decision,
  decideProviderID,
  type NodeGuard,
  type NodeView,
  notHeld,
  providerIDPatch,
} from '../../shared/providerid/index.ts';
import type { ReconcileContext, ReconcileFn } from '../../shared/reconcile/context.ts';
import { type TerminalError, TransientError } from '../../shared/reconcile/errors.ts';
import { reconcileKinds, reconcileObject } from '../../shared/reconcile/object.ts';
import { done, type ReconcileResult, requeueAfter, terminal } from '../../shared/reconcile/result.ts';
import { recordClaimFailure } from '../../shared/vmetal/status.ts';
import { reconcileClaimJoin } from './nodeclaim.ts';
import { nodesConcerning } from './nodes.ts';
import {
  addressesFromHost,
  editStatus,
  failedByAnotherStep,
  hostnamesOf,
  NODE_READY,
  REASON,
  type StatusEdit,
} from './status.ts';

/** failureReason for every terminal error of this step (CAPI capierrors). */
const FAILURE_REASON = 'InvalidConfiguration';
const OWN_ERROR_REASONS: ReadonlySet<string> = new Set([
  'InvalidHostAnnotation',
  'DuplicateProviderID',
  'DuplicateHostProviderID',
  'LegacyProviderIDRefused',
  'ProviderIDMismatch',
  'MultipleNodesWithUUIDLabel',
  'UnsupportedProviderIDFormat',
  'ForeignProviderID',
]);

interface Loaded {
  raw: Metal3Machine;
  machine: Metal3Machine;
  host: BareMetalHost;
  hostName: string;
  hostUID: string;
  clusterName: string;
  hasBootstrapConfigRef: boolean;
  cloudProvider: boolean;
}

/** Passes within one invocation when the Node changed between the list and the patch. */
const NODE_CONFLICT_ATTEMPTS = 3;

/** One pass, from the machine the opening read (shared/reconcile/object.ts). */
const reconcileOnce = async (
  ctx: ReconcileContext,
  m3m: Metal3Machine,
  msg: MessageEnvelope,
): Promise<ReconcileResult> => {
  const ns = m3m.metadata.namespace!;
  const log = ctx.log.child({ fn: 'resolveProviderID', machine: `${ns}/${msg.name}` });
  const loaded = await load(ctx, m3m, msg);
  if (!('raw' in loaded)) return loaded.result;
  const { raw, machine } = loaded;
  const now = ctx.now();

  let workload: KubeClient;
  try {
    workload = await ctx.workloadClient(ns, loaded.clusterName);
  } catch (e) {
    if (!isWorkloadUnavailable(e)) throw e;
    await updateStatus(
      ctx,
      raw,
      {
        condition: {
          type: NODE_READY,
          status: 'False',
          severity: 'Info',
          reason: REASON.WaitingForWorkloadCluster,
          message: e.message,
        },
      },
      now,
    );
    return requeueAfter(ctx.config.safetyRequeueSeconds, e.message);
  }

  const fallbackAddresses = addressesFromHost(loaded.host);
  const addresses = machine.status?.addresses?.length ? machine.status.addresses : fallbackAddresses;
  const nodes = (
    await nodesConcerning(workload, {
      hostUID: loaded.hostUID,
      hostnames: hostnamesOf(addresses),
      cloudProvider: loaded.cloudProvider,
    })
  ).map(
    (n): NodeView => ({
      name: n.metadata.name!,
      providerID: n.spec?.providerID,
      labels: n.metadata.labels,
      uid: n.metadata.uid,
    }),
  );
  const decision = decideProviderID({
    namespace: ns,
    machineName: msg.name,
    machineProviderID: machine.spec.providerID,
    hostName: loaded.hostName,
    hostUID: loaded.hostUID,
    hostnames: hostnamesOf(addresses),
    hasBootstrapConfigRef: loaded.hasBootstrapConfigRef,
    cloudProvider: loaded.cloudProvider,
    legacy: ctx.config.legacyProviderIds,
    nodes,
    holdsHost: true,
    failed: false,
  });
  log.debug('decision', { decision });
  return execute(ctx, raw, decision, workload, fallbackAddresses, now);
};

async function execute(
  ctx: ReconcileContext,
  raw: Metal3Machine,
  d: Decision,
  workload: KubeClient,
  fallbackAddresses: MachineAddress[],
  now: Date,
): Promise<ReconcileResult> {
  const base = { fallbackAddresses, ownErrorReasons: OWN_ERROR_REASONS };
  switch (d.kind) {
    case 'notHeld':
      return done(d.reason);
    case 'error':
      return fail(ctx, raw, d.reason, d.message, now);
    case 'wait':
      await updateStatus(
        ctx,
        raw,
        {
          ...base,
          condition: {
            type: NODE_READY,
            status: 'False',
            severity: 'Info',
            reason: REASON.WaitingForNode,
            message: d.reason,
          },
        },
        now,
      );
      return requeueAfter(ctx.config.safetyRequeueSeconds, d.reason);
    case 'ready': {
      const m = await setProviderID(ctx, raw, d.providerID);
      if (!m) return done('machine gone, failed or re-associated meanwhile');
      await updateStatus(
        ctx,
        m,
        { ...base, ready: true, condition: { type: NODE_READY, status: 'True' } },
        now,
      );
      return done(d.note);
    }
    case 'assignAndWait': {
      const m = await setProviderID(ctx, raw, d.providerID);
      if (!m) return done('machine gone, failed or re-associated meanwhile');
      await updateStatus(
        ctx,
        m,
        {
          ...base,
          ready: true,
          condition: {
            type: NODE_READY,
            status: 'False',
            severity: 'Info',
            reason: REASON.WaitingForNode,
            message: d.reason,
          },
        },
        now,
      );
      return requeueAfter(ctx.config.safetyRequeueSeconds, d.reason);
    }
    case 'setAndPatch': {
      // Machine first (providerID, then ready and the condition in one status write), then the Node.
      // Should the Node patch fail, the error retries this message: the next pass decides again on
      // fresh state (the Node still without providerID => setAndPatch again; another writer's ID =>
      // an error recorded on the condition), so a True condition never outlives a failed patch.
      const m = await setProviderID(ctx, raw, d.providerID);
      if (!m) return done('machine gone, failed or re-associated meanwhile');
      const m2 = await updateStatus(
        ctx,
        m,
        { ...base, ready: true, condition: { type: NODE_READY, status: 'True' } },
        now,
      );
      if (!m2) return done('machine gone');
      await patchNode(workload, d.node, d.providerID, d.guard);
      await ctx.events.record(
        m2,
        'Normal',
        REASON.NodeProviderIDSet,
        `Node ${d.node}: spec.providerID set to ${d.providerID} (step ${d.step})`,
      );
      return done(`step ${d.step}: Node ${d.node} providerID set to ${d.providerID}`);
    }
  }
}

/**
 * What the decision read of a Node no longer holds (a guard test failed, the Node is gone, or it
 * refused the ID because another writer set one): decided again on fresh reads.
 */
class NodeChangedError extends TransientError {}

/** Patches only `spec.providerID` of a Node, while what the decision read of it still holds. */
async function patchNode(
  workload: KubeClient,
  node: string,
  providerID: string,
  guard: NodeGuard,
): Promise<void> {
  try {
    await workload.patch(R.Node, undefined, node, providerIDPatch(guard, providerID), 'json');
  } catch (e) {
    // 422: a failed test (another uid, other labels, an ID set meanwhile) or the API server's own
    // refusal to change a set providerID; 404: the Node is gone.
    if (e instanceof InvalidError || e instanceof NotFoundError)
      throw new NodeChangedError(`Node ${node} changed since it was read; not patched: ${e.message}`);
    throw e;
  }
}

async function setProviderID(
  ctx: ReconcileContext,
  raw: Metal3Machine,
  providerID: string,
): Promise<Metal3Machine | undefined> {
  const current = raw.spec.providerID;
  if (current === providerID) return raw;
  const host = hostRefOf(raw);
  const r = await optimisticUpdate(
    ctx.client,
    R.Metal3Machine,
    raw.metadata.namespace,
    raw.metadata.name!,
    (o) => {
      // A fresh copy (after a 409) that another step failed meanwhile, or that names another host,
      // gets no ID.
      const now = hostRefOf(o);
      if (failedByAnotherStep(o.status, OWN_ERROR_REASONS)) return SKIP;
      if (now.kind !== 'ok' || host.kind !== 'ok' || now.host.name !== host.host.name) return SKIP;
      o.spec.providerID = providerID;
    },
    { current: raw, expectedUid: raw.metadata.uid },
  );
  if (r.outcome === 'gone' || r.outcome === 'skipped') return undefined;
  await ctx.events.record(
    r.object,
    'Normal',
    'ProviderIDSet',
    `spec.providerID set to ${providerID}${current ? ` (was ${current})` : ''}`,
  );
  return r.object;
}

async function updateStatus(
  ctx: ReconcileContext,
  raw: KubeObject,
  edit: StatusEdit,
  now: Date,
): Promise<KubeObject | undefined> {
  // Through the envelope: a status is written whatever the spec holds (a failure is recorded on a
  // machine that fails its schema too).
  const r = await optimisticUpdate(
    ctx.client,
    METAL3MACHINE_ENVELOPE,
    raw.metadata.namespace,
    raw.metadata.name!,
    (o) => editStatus(o, edit, now),
    {
      status: true,
      current: raw,
      expectedUid: raw.metadata.uid,
    },
  );
  return r.outcome === 'gone' ? undefined : r.object;
}

/** Records a terminal error on the machine (failure fields, condition, Warning Event); no Node is touched. */
async function fail(
  ctx: ReconcileContext,
  raw: KubeObject,
  reason: string,
  message: string,
  now: Date,
): Promise<ReconcileResult> {
  const m = await updateStatus(
    ctx,
    raw,
    {
      failure: { reason: FAILURE_REASON, message },
      condition: { type: NODE_READY, status: 'False', severity: 'Error', reason, message },
    },
    now,
  );
  await ctx.events.record(m ?? raw, 'Warning', reason, message);
  ctx.log.warn('providerID error', {
    machine: `${raw.metadata.namespace}/${raw.metadata.name}`,
    reason,
    message,
  });
  return terminal(reason, message);
}

/** Reads everything the decision needs; returns a result instead when there is nothing to do yet. */
async function load(
  ctx: ReconcileContext,
  raw: Metal3Machine,
  msg: MessageEnvelope,
): Promise<Loaded | { result: ReconcileResult }> {
  const ns = raw.metadata.namespace!;
  if (msg.uid && raw.metadata.uid !== msg.uid) return { result: done('Metal3Machine was replaced') };
  if (raw.metadata.deletionTimestamp) return { result: done('Metal3Machine is being deleted') };
  if (raw.metadata.annotations?.[CAPI_PAUSED_ANNOTATION] !== undefined) return { result: done('paused') };
  const now = ctx.now();

  const ref = hostRefOf(raw);
  if (ref.kind === 'absent') return { result: done('not associated with a host yet') };
  if (ref.kind === 'invalid')
    return { result: await fail(ctx, raw, 'InvalidHostAnnotation', ref.message, now) };

  const machine = raw;
  // CAPI v1beta1 contract: a machine another step marked failed is left alone. Failures this
  // step recorded are re-evaluated (the user may have fixed the Nodes) and cleared on success.
  if (failedByAnotherStep(machine.status, OWN_ERROR_REASONS)) {
    return {
      result: done(
        `machine failed (${machine.status?.failureReason ?? ''}): ${machine.status?.failureMessage ?? ''}`,
      ),
    };
  }

  const host = await ctx.client.get(R.BareMetalHost, ref.host.namespace, ref.host.name);
  if (!host) return { result: done(`BareMetalHost ${ref.host.namespace}/${ref.host.name} not found`) };
  // A host this machine does not hold (released, or taken by another consumer) never gives it its ID.
  const gate = notHeld({
    namespace: ref.host.namespace,
    hostName: ref.host.name,
    holdsHost: hostHeldBy(host, metal3MachineConsumer({ name: raw.metadata.name!, namespace: ns })),
    failed: false,
  });
  if (gate) return { result: done(gate.reason) };
  if (host.status?.provisioning?.state !== 'provisioned') {
    return {
      result: done(
        `host ${ref.host.namespace}/${ref.host.name} is ${host.status?.provisioning?.state || 'not provisioned'}; its event wakes us`,
      ),
    };
  }

  const owner = raw.metadata.ownerReferences?.find(
    (o) => o.kind === 'Machine' && o.apiVersion.startsWith('cluster.x-k8s.io/'),
  );
  const capiMachine = owner ? await ctx.client.get(R.Machine, ns, owner.name) : undefined;
  const clusterName = raw.metadata.labels?.[CLUSTER_NAME_LABEL] ?? capiMachine?.spec?.clusterName;
  if (!clusterName) return { result: done('no cluster name (label cluster.x-k8s.io/cluster-name) yet') };

  const cluster = await getCluster(ctx, ns, clusterName, (c) => c !== undefined && !isPaused(c, raw));
  if (!cluster) return { result: done(`Cluster ${ns}/${clusterName} not found`) };
  // Cluster API pause: spec.paused, or the paused annotation on the Cluster (or the machine).
  if (isPaused(cluster, raw)) return { result: done('paused') };
  const infra = cluster.spec?.infrastructureRef;
  let m3c: Metal3Cluster | undefined;
  if (infra?.name && (infra.kind ?? 'Metal3Cluster') === 'Metal3Cluster') {
    m3c = await getMetal3Cluster(ctx, infra.namespace || ns, infra.name);
    if (!m3c)
      return {
        result: requeueAfter(ctx.config.safetyRequeueSeconds, `Metal3Cluster ${infra.name} not found`),
      };
  }

  return {
    raw,
    machine,
    host,
    hostName: ref.host.name,
    hostUID: host.metadata.uid!,
    clusterName,
    hasBootstrapConfigRef: Boolean(capiMachine?.spec?.bootstrap?.configRef),
    cloudProvider: cloudProviderEnabled(m3c?.spec),
  };
}

const METAL3MACHINE_ENVELOPE = envelopeOf(K.Metal3Machine);

/**
 * The opening's recorder: a schema failure (the machine's or an object it read) on
 * KubernetesNodeReady, once: a machine already marked failed (by this step or another: the CAPI
 * v1beta1 contract, as `load` does for a valid one) is left alone, nothing written.
 */
async function recordFailure(
  ctx: ReconcileContext,
  obj: KubeObject,
  err: TerminalError,
): Promise<ReconcileResult> {
  if (recordOf(obj.status).failureReason) return terminal(err.reason, err.message);
  return fail(ctx, obj, err.reason, err.message, ctx.now());
}

/** Node patches whose Node changed between our list and our patch (or a 409): decided again at once. */
const withNodeConflictRetry =
  (fn: ReconcileFn): ReconcileFn =>
  async (ctx, msg) => {
    // A Node another writer changed between our list and our guarded patch: read and decide again
    // at once rather than fail the message into the queue's retry backoff.
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn(ctx, msg);
      } catch (e) {
        if (!(isConflict(e) || e instanceof NodeChangedError) || attempt >= NODE_CONFLICT_ATTEMPTS) throw e;
      }
    }
  };

export const reconcile: ReconcileFn = withNodeConflictRetry(
  reconcileKinds(
    {
      Metal3Machine: reconcileObject({
        resource: R.Metal3Machine,
        gone: 'Metal3Machine not found',
        reconcile: reconcileOnce,
        recordFailure,
        // The machine's Cluster is read anyway (load): pause is checked there.
        cluster: clusterLabelOrSpec,
        pausesItself: true,
      }),
      NodeClaim: reconcileObject({
        resource: R.NodeClaim,
        gone: 'NodeClaim not found',
        reconcile: reconcileClaimJoin,
        recordFailure: recordClaimFailure,
        // vMetal objects belong to no Cluster API Cluster: Cluster API pause does not apply.
        cluster: () => undefined,
      }),
    },
    (kind) => `ignored ${kind} message`,
  ),
);
