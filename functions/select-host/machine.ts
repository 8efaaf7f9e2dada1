/**
 * selectHost for one Metal3Machine: the CAPI InfraMachine contract checks, host choice and claim,
 * the Metal3DataClaim, and once data is ready the host's image/userData/metaData/networkData/online.
 * Reads state, decides (pure helpers), writes through the optimistic helper, returns a result.
 */
import type { BareMetalHost } from '../../shared/api/baremetalhost.ts';
import type { Cluster, Machine } from '../../shared/api/capi.ts';
import type { Metal3Machine } from '../../shared/api/metal3machine.ts';
import { R } from '../../shared/api/resources.ts';
import {
  CAPM3_PAUSE_VALUE,
  CLUSTER_NAME_LABEL,
  FINALIZER,
  HOST_ANNOTATION,
  HOST_PAUSED_ANNOTATION,
  hostRefOf,
} from '../../shared/api/wellknown.ts';
import { COND, falseCondition, REASON, trueCondition } from '../../shared/capi/conditions.ts';
import {
  clusterInfrastructureReady,
  clusterNameOf,
  getCluster,
  getMachine,
  isPaused,
  machineOwnerRef,
  reuseOwnerOf,
} from '../../shared/capi/lookups.ts';
import { recordTerminal, StatusDraft } from '../../shared/capi/status.ts';
import { labelBmcSecret } from '../../shared/hosts/bmc-secret.ts';
import { findOrClaimHost, heldHosts } from '../../shared/hosts/claim.ts';
import { type HostConsumer, hostHeldBy, metal3MachineConsumer } from '../../shared/hosts/consumer.ts';
import {
  hostProvisioningRequested,
  hostState,
  nodeReuseValues,
  SELECTABLE_STATES,
} from '../../shared/hosts/eligibility.ts';
import { updateHeldHost } from '../../shared/hosts/held.ts';
import { releaseHost } from '../../shared/hosts/release.ts';
import { releaseStrays } from '../../shared/hosts/strays.ts';
import { optimisticUpdate, SKIP } from '../../shared/kube/optimistic.ts';
import type { ReconcileContext } from '../../shared/reconcile/context.ts';
import { TerminalError } from '../../shared/reconcile/errors.ts';
import { done, type ReconcileResult, requeueAfter } from '../../shared/reconcile/result.ts';
import { compileHostSelector } from '../../shared/selectors/labels.ts';
import { resolveData } from './data.ts';
import { applyHostSpec, crossNamespaceProblem, hostAddresses } from './hostspec.ts';

/** One pass for a Metal3Machine (parsed by the opening, shared/reconcile/object.ts). */
export async function reconcileMachine(ctx: ReconcileContext, obj: Metal3Machine): Promise<ReconcileResult> {
  let m3m = obj;
  const ns = m3m.metadata.namespace!;
  const name = m3m.metadata.name!;
  if (m3m.metadata.deletionTimestamp) return done('deleting: the deprovision function handles it');
  if (m3m.status?.failureReason || m3m.status?.failureMessage) return done('failed: left alone');

  let raw = m3m;
  // The owner Machine and the Cluster first: a paused machine is left alone, not even refused
  // (CAPM3 checks pause before validating); without an owner the Cluster comes from the label.
  const machine = machineOwnerRef(raw) ? await getMachine(ctx.client, raw) : undefined;
  const clusterName = clusterNameOf(machine, raw);
  const cluster = await getCluster(
    ctx,
    ns,
    clusterName,
    (c) => c !== undefined && !isPaused(c, raw) && clusterInfrastructureReady(c),
  );
  const paused = isPaused(cluster, raw);

  // Bad input next: nothing is written to any host for a machine that cannot be provisioned.
  if (!paused) {
    try {
      compileHostSelector(m3m.spec.hostSelector);
      const cross = crossNamespaceProblem(m3m);
      if (cross) throw new TerminalError('InvalidConfiguration', cross);
      // A malformed or foreign host annotation can never name our host: refuse it before any read.
      const hostRef = hostRefOf(raw);
      if (hostRef.kind === 'invalid') throw new TerminalError('InvalidConfiguration', hostRef.message);
    } catch (e) {
      if (e instanceof TerminalError) return recordTerminal(ctx, raw, e);
      throw e;
    }
  }
  const draft = new StatusDraft();
  const finish = async (result: ReconcileResult): Promise<ReconcileResult> => {
    await draft.flush(ctx, raw);
    return result;
  };

  // 1. Owner Machine.
  if (!machineOwnerRef(raw)) {
    draft.condition(
      falseCondition(
        COND.AssociateBMH,
        REASON.WaitingForOwner,
        'Info',
        'waiting for the CAPI Machine to set its ownerReference',
      ),
    );
    return finish(done('no owner Machine yet'));
  }
  if (!machine) return done('owner Machine not found');

  // 2. Cluster; a missing Cluster ends the pass.
  if (!cluster || !clusterName) return done('Cluster not found');

  // 3. Pause (Cluster spec.paused, or the paused annotation on the Cluster or the machine).
  const hostRef = hostRefOf(raw);
  const key = hostRef.kind === 'ok' ? hostRef.host : undefined;
  const me = metal3MachineConsumer({ name, namespace: ns }, clusterName);
  // The associated host by name, and the other hosts this machine holds (strays of a crashed pass:
  // a list that is empty but after one, ADR 022). Without the annotation, findOrClaimHost looks below.
  const { strays, host: associatedHost } = key
    ? await heldHosts(ctx.client, me, key)
    : { strays: [], host: undefined };
  let host: BareMetalHost | undefined = associatedHost;
  if (host) host = await syncHostPause(ctx, me, cluster, paused, host);
  if (paused) {
    draft.condition({
      type: COND.Paused,
      status: 'True',
      reason: REASON.Paused,
      message: 'the Cluster or the Metal3Machine is paused',
    });
    return finish(requeueAfter(ctx.config.safetyRequeueSeconds, 'paused'));
  }
  const selector = compileHostSelector(m3m.spec.hostSelector);
  const pausedCond = raw.status?.conditions?.find((c) => c.type === COND.Paused);
  if (pausedCond?.status === 'True')
    draft.condition({ type: COND.Paused, status: 'False', reason: 'NotPaused', severity: 'Info' });

  // 4. Finalizer, and the failure domain copied from the Machine.
  const withFinalizer = await ensureFinalizerAndFailureDomain(ctx, raw, machine);
  if (!withFinalizer || withFinalizer.metadata.deletionTimestamp)
    return done('deleting: the deprovision function handles it');
  raw = withFinalizer;
  m3m = raw;

  // 5. Cluster infrastructure ready.
  if (!clusterInfrastructureReady(cluster)) {
    draft.condition(
      falseCondition(
        COND.AssociateBMH,
        REASON.WaitingForClusterInfrastructure,
        'Info',
        `waiting for Cluster ${ns}/${clusterName} infrastructure to be ready`,
      ),
    );
    return finish(done('cluster infrastructure not ready'));
  }
  // 6. Bootstrap data.
  const dataSecretName = machine.spec?.bootstrap?.dataSecretName;
  if (!dataSecretName) {
    draft.condition(
      falseCondition(
        COND.AssociateBMH,
        REASON.WaitingForBootstrapReady,
        'Info',
        `waiting for Machine ${ns}/${machine.metadata.name} bootstrap data`,
      ),
    );
    return finish(done('bootstrap data not ready'));
  }

  // 7. Host: the associated one, else find or claim one.
  if (key) {
    if (!host || host.metadata.deletionTimestamp || !hostHeldBy(host, me)) {
      const what = !host
        ? 'was deleted'
        : host.metadata.deletionTimestamp
          ? 'is being deleted'
          : 'was released or taken by another consumer';
      return hostLost(
        ctx,
        raw,
        `BareMetalHost ${key.namespace}/${key.name} associated with this machine ${what}`,
      );
    }
    await releaseStrays(ctx, raw, me, strays, host);
  } else {
    const reuseOwner = await reuseOwnerOf(ctx.client, machine);
    const outcome = await findOrClaimHost({
      client: ctx.client,
      consumer: me,
      selector,
      reuseValues: nodeReuseValues(reuseOwner),
      failureDomain: m3m.spec.failureDomain || machine.spec?.failureDomain,
    });
    if (outcome.kind === 'wait' || outcome.kind === 'none') {
      const reason = outcome.kind === 'wait' ? REASON.WaitingForNodeReuseHost : REASON.NoHostAvailable;
      draft.condition(falseCondition(COND.AssociateBMH, reason, 'Warning', outcome.reason));
      await ctx.events.record(raw, 'Warning', reason, outcome.reason);
      return finish(requeueAfter(ctx.config.safetyRequeueSeconds, outcome.reason));
    }
    if (outcome.kind === 'contention') return finish(requeueAfter(1, outcome.reason));
    host = outcome.host;
    // The host's BMC credentials Secret gets the cluster label (clusterctl move carries it), after
    // the claim and before the annotation: a pass that stops in between finds the host again as
    // its own and labels then. A missing Secret does not block association.
    await labelBmcSecret(ctx, host, clusterName);
    const associated = await annotateHost(ctx, raw, host);
    if (!associated.ok) {
      // A concurrent pass of this machine associated another host first: give ours back.
      if (outcome.kind === 'claimed') await releaseHost(ctx, host, me, { onlyUnprovisioned: true });
      return done('another pass associated this machine first');
    }
    raw = associated.m3m;
    if (outcome.kind === 'claimed') {
      const via = outcome.via === 'reuse' ? ' (node reuse)' : '';
      await ctx.events.record(
        raw,
        'Normal',
        'Associated',
        `associated with BareMetalHost ${host.metadata.namespace}/${host.metadata.name}${via}`,
      );
    }
  }
  draft
    .condition(trueCondition(COND.AssociateBMH))
    .set('addresses', hostAddresses(host))
    .set('userData', { name: dataSecretName, namespace: ns });

  // 8. Data: claim -> Metal3Data ready -> secret refs (or the user's own secrets).
  const data = await resolveData(ctx.client, m3m);
  if (data.kind === 'wait') {
    draft.condition(falseCondition(COND.Metal3DataReady, data.reason, data.severity, data.message));
    if (data.severity === 'Error') await ctx.events.record(raw, 'Warning', data.reason, data.message);
    return finish(requeueAfter(ctx.config.safetyRequeueSeconds, data.message));
  }
  draft
    .condition(trueCondition(COND.Metal3DataReady))
    .set('metaData', data.metaData)
    .set('networkData', data.networkData)
    .set('renderedData', data.renderedData);

  // 9. The host's spec in one optimistic update (only while it is still ours).
  const refs = {
    userData: { name: dataSecretName, namespace: ns },
    metaData: data.metaData,
    networkData: data.networkData,
  };
  const wasRequested = hostProvisioningRequested(host);
  let notReadyState: string | undefined;
  const res = await updateHeldHost(ctx.client, host, me, (h) => {
    notReadyState = undefined;
    // The first provisioning write only goes to a ready/available host: a host without image in
    // another state is being deprovisioned (a stale pass must not provision it again) or inspected.
    if (!hostProvisioningRequested(h) && !SELECTABLE_STATES.has(hostState(h))) {
      notReadyState = hostState(h) || '<none>';
      return SKIP;
    }
    applyHostSpec(h, m3m, refs);
  });
  if (res.outcome === 'skipped' && notReadyState !== undefined) {
    const why = `waiting for BareMetalHost ${host.metadata.namespace}/${host.metadata.name} to be ready/available (state "${notReadyState}")`;
    draft.condition(falseCondition(COND.AssociateBMH, REASON.WaitingForHostReady, 'Info', why));
    return finish(requeueAfter(ctx.config.safetyRequeueSeconds, why));
  }
  if (res.outcome === 'gone' || res.outcome === 'skipped') {
    return hostLost(
      ctx,
      raw,
      `BareMetalHost ${host.metadata.namespace}/${host.metadata.name} was lost while being provisioned`,
    );
  }
  if (!wasRequested && hostProvisioningRequested(res.object)) {
    await ctx.events.record(
      raw,
      'Normal',
      'ProvisioningRequested',
      `BareMetalHost ${host.metadata.namespace}/${host.metadata.name} is being provisioned`,
    );
  }
  draft.edit((s) => {
    s.phase = s.ready === true ? 'Provisioned' : 'Provisioning';
  });
  return finish(done('host provisioning requested'));
}

async function hostLost(
  ctx: ReconcileContext,
  raw: Metal3Machine,
  message: string,
): Promise<ReconcileResult> {
  return recordTerminal(ctx, raw, new TerminalError('UpdateError', message));
}

async function ensureFinalizerAndFailureDomain(
  ctx: ReconcileContext,
  raw: Metal3Machine,
  machine: Machine,
): Promise<Metal3Machine | undefined> {
  const fd = machine.spec?.failureDomain;
  const res = await optimisticUpdate(
    ctx.client,
    R.Metal3Machine,
    raw.metadata.namespace,
    raw.metadata.name!,
    (o) => {
      if (o.metadata.deletionTimestamp) return SKIP;
      const f = o.metadata.finalizers ?? [];
      if (!f.includes(FINALIZER.machine)) o.metadata.finalizers = [...f, FINALIZER.machine];
      if (fd) o.spec.failureDomain = fd;
    },
    { current: raw, expectedUid: raw.metadata.uid },
  );
  return res.outcome === 'gone' ? undefined : res.object;
}

/** Sets the host annotation; not ok when a concurrent pass set it to another host first. */
async function annotateHost(
  ctx: ReconcileContext,
  raw: Metal3Machine,
  host: BareMetalHost,
): Promise<{ ok: true; m3m: Metal3Machine } | { ok: false }> {
  const value = `${host.metadata.namespace}/${host.metadata.name}`;
  const res = await optimisticUpdate(
    ctx.client,
    R.Metal3Machine,
    raw.metadata.namespace,
    raw.metadata.name!,
    (o) => {
      const cur = o.metadata.annotations?.[HOST_ANNOTATION];
      if (cur && cur !== value) return SKIP;
      if (o.metadata.deletionTimestamp) return SKIP;
      o.metadata.annotations = { ...(o.metadata.annotations ?? {}), [HOST_ANNOTATION]: value };
    },
    { current: raw, expectedUid: raw.metadata.uid },
  );
  if (res.outcome === 'gone' || res.outcome === 'skipped') return { ok: false };
  return { ok: true, m3m: res.object };
}

/**
 * Cluster paused => the associated host gets the paused annotation (value metal3.io/capm3) so the
 * baremetal-operator leaves it alone; unpaused => ours is removed (only ours, only on our cluster's host).
 */
async function syncHostPause(
  ctx: ReconcileContext,
  me: HostConsumer,
  cluster: Cluster,
  paused: boolean,
  host: BareMetalHost,
): Promise<BareMetalHost | undefined> {
  const clusterPaused = cluster.spec?.paused === true;
  const res = await updateHeldHost(ctx.client, host, me, (h) => {
    const ann = h.metadata.annotations ?? {};
    if (clusterPaused && paused) {
      if (Object.hasOwn(ann, HOST_PAUSED_ANNOTATION)) return SKIP;
      h.metadata.annotations = { ...ann, [HOST_PAUSED_ANNOTATION]: CAPM3_PAUSE_VALUE };
    } else {
      if (
        ann[HOST_PAUSED_ANNOTATION] !== CAPM3_PAUSE_VALUE ||
        h.metadata.labels?.[CLUSTER_NAME_LABEL] !== cluster.metadata.name
      )
        return SKIP;
      delete ann[HOST_PAUSED_ANNOTATION];
      h.metadata.annotations = ann;
    }
  });
  return res.outcome === 'gone' ? undefined : res.object;
}
