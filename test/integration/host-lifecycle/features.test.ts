/**
 * selectHost / deprovision / reconcileCluster rules against the embedded API server, one scenario
 * each: data template path and seed 001's hybrid rule, user secrets waited for, pause, failure
 * domain, Metal3MachineTemplate propagation, power handling on release, foreign hosts untouched,
 * Metal3Cluster endpoint and deletion.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcile as allocateIndex } from '../../../functions/allocate-index/core.ts';
import { reconcileCluster } from '../../../functions/metal3-cluster/core.ts';
import { reconcile as renderData } from '../../../functions/render-data/core.ts';
import { reconcile as selectHostCore } from '../../../functions/select-host/core.ts';
import { createSampleHosts } from '../../../infra/local/sim/bmo-hosts.ts';
import { apiVersionOf, envelopeOf, R } from '../../../shared/api/resources.ts';
import { optimisticUpdate } from '../../../shared/kube/optimistic.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { startTestCluster, type TestCluster } from '../../helpers/cluster.ts';
import {
  CLUSTER,
  createCluster,
  createMachinePair,
  deprovision,
  makeCtx,
  msg,
  NS,
  selectHost,
} from '../../helpers/hosts.ts';

let tc: TestCluster;
let ctx: ReturnType<typeof makeCtx>;

beforeAll(async () => {
  tc = await startTestCluster();
  ctx = makeCtx(tc.client);
  await createCluster(tc.client);
}, 30_000);
afterAll(async () => {
  await tc?.stop();
});

const get = (t: typeof R.Metal3Machine, name: string) => tc.client.get(t, NS, name);
const hostOf = async (m3m: string): Promise<KubeObject> => {
  const m = await get(R.Metal3Machine, m3m);
  const key = m!.metadata.annotations!['metal3.io/BareMetalHost']!;
  return (await tc.client.get(R.BareMetalHost, NS, key.split('/')[1]!))!;
};
const cond = (o: KubeObject | undefined, type: string) =>
  ((o?.status as any)?.conditions ?? []).find((c: any) => c.type === type);
const setState = (name: string, state: string, extra: Record<string, unknown> = {}) =>
  optimisticUpdate(
    tc.client,
    R.BareMetalHost,
    NS,
    name,
    (h) => {
      (h.status as any).provisioning.state = state;
      Object.assign(h.status as object, extra);
    },
    { status: true },
  );
const secret = (name: string, key: string) =>
  tc.client.create(R.Secret, {
    metadata: { name, namespace: NS },
    data: { [key]: Buffer.from('{}').toString('base64') },
  });

describe('data: template claim, hybrid override, user secrets', () => {
  it('a Metal3DataTemplate created after its machine: a wait with a condition (claim made, host associated), resumed once it exists', async () => {
    await createSampleHosts(tc.client, NS, 1, {
      prefix: 'late',
      bmcSecrets: false,
      labels: () => ({ pool: 'late' }),
    });
    await createMachinePair(tc.client, 'late', {
      m3mSpec: { dataTemplate: { name: 'late-tmpl' }, hostSelector: { matchLabels: { pool: 'late' } } },
    });
    expect(await selectHost(ctx, 'late')).toMatchObject({ kind: 'requeue' });
    let m = await get(R.Metal3Machine, 'late');
    expect((m!.status as any).failureReason).toBeUndefined();
    expect(cond(m, 'Metal3DataReady')).toMatchObject({
      status: 'False',
      reason: 'WaitingForMetal3DataTemplate',
      message: 'waiting for Metal3DataTemplate metal3/late-tmpl (spec.dataTemplate) to exist',
    });
    expect(cond(m, 'AssociateBMH')?.status).toBe('True');
    expect(await tc.client.get(R.Metal3DataClaim, NS, 'late')).toBeDefined();
    expect(((await hostOf('late')).spec as any).image).toBeUndefined();
    expect((await allocateIndex(ctx, msg('allocateIndex', R.Metal3DataClaim, 'late'))).kind).toBe('requeue');

    await tc.client.create(R.Metal3DataTemplate, {
      metadata: { name: 'late-tmpl', namespace: NS },
      spec: { clusterName: 'cluster', metaData: { strings: [{ key: 'role', value: 'worker' }] } },
    });
    expect((await allocateIndex(ctx, msg('allocateIndex', R.Metal3DataClaim, 'late'))).kind).toBe('done');
    expect((await renderData(ctx, msg('renderData', R.Metal3Data, 'late-tmpl-0'))).kind).toBe('done');
    expect((await selectHost(ctx, 'late')).kind).toBe('done');
    m = await get(R.Metal3Machine, 'late');
    expect(cond(m, 'Metal3DataReady')?.status).toBe('True');
    const host = await hostOf('late');
    expect((host.spec as any).image?.url).toBe('http://172.22.0.1/images/node.img');
    expect((host.spec as any).metaData).toEqual({ name: 'late-metadata-0', namespace: NS });
  });

  it('creates the Metal3DataClaim, waits for Metal3Data, then gives the host its secrets (spec.metaData overriding the template)', async () => {
    await createSampleHosts(tc.client, NS, 1, {
      prefix: 'data',
      bmcSecrets: false,
      labels: () => ({ pool: 'data' }),
    });
    await tc.client.create(R.Metal3DataTemplate, {
      metadata: { name: 'tmpl', namespace: NS },
      spec: { clusterName: 'cluster', metaData: { strings: [{ key: 'a', value: 'b' }] } },
    });
    await secret('user-meta', 'metaData');
    const { m3m } = await createMachinePair(tc.client, 'dm', {
      m3mSpec: {
        dataTemplate: { name: 'tmpl' },
        metaData: { name: 'user-meta' },
        hostSelector: { matchLabels: { pool: 'data' } },
      },
    });
    const r1 = await selectHost(ctx, 'dm');
    expect(r1.kind).toBe('requeue');
    const claim = await tc.client.get(R.Metal3DataClaim, NS, 'dm');
    expect(claim!.metadata.ownerReferences).toEqual([
      {
        apiVersion: apiVersionOf(R.Metal3Machine),
        kind: 'Metal3Machine',
        name: 'dm',
        uid: m3m.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    // Created with allocateIndex's finalizer too (one write fewer than adding it afterwards).
    expect(claim!.metadata.finalizers).toEqual([
      'metal3machine.infrastructure.cluster.x-k8s.io',
      'metal3dataclaim.infrastructure.cluster.x-k8s.io',
    ]);
    expect(claim!.metadata.labels).toEqual({ 'cluster.x-k8s.io/cluster-name': 'cluster' });
    expect((claim!.spec as any).template).toEqual({ name: 'tmpl', namespace: NS });
    let host = await hostOf('dm');
    expect((host.spec as any).image).toBeUndefined(); // associated, but not provisioned before data is ready
    expect(cond(await get(R.Metal3Machine, 'dm'), 'Metal3DataReady')).toMatchObject({
      status: 'False',
      reason: 'WaitingForMetal3Data',
    });

    // The data path (allocateIndex + renderData) is simulated: renderedData, Metal3Data ready.
    await tc.client.create(R.Metal3Data, {
      metadata: { name: 'tmpl-0', namespace: NS },
      spec: {
        index: 0,
        claim: { name: 'dm', namespace: NS },
        template: { name: 'tmpl', namespace: NS },
        metaData: { name: 'dm-metadata', namespace: NS },
        networkData: { name: 'dm-networkdata', namespace: NS },
      },
    });
    await optimisticUpdate(
      tc.client,
      R.Metal3DataClaim,
      NS,
      'dm',
      (c) => {
        c.status ??= {};
        Object.assign(c.status as object, { renderedData: { name: 'tmpl-0', namespace: NS } });
      },
      { status: true },
    );
    expect((await selectHost(ctx, 'dm')).kind).toBe('requeue'); // Metal3Data not ready yet
    await optimisticUpdate(
      tc.client,
      R.Metal3Data,
      NS,
      'tmpl-0',
      (d) => {
        d.status ??= {};
        Object.assign(d.status as object, { ready: true });
      },
      { status: true },
    );
    expect((await selectHost(ctx, 'dm')).kind).toBe('done');
    host = await hostOf('dm');
    expect((host.spec as any).metaData).toEqual({ name: 'user-meta', namespace: NS }); // the user's secret wins for that part
    expect((host.spec as any).networkData).toEqual({ name: 'dm-networkdata', namespace: NS });
    const st = (await get(R.Metal3Machine, 'dm'))!.status as any;
    expect(st.renderedData).toEqual({ name: 'tmpl-0', namespace: NS });
    expect(st.metaData).toEqual({ name: 'user-meta', namespace: NS });
    expect(st.networkData).toEqual({ name: 'dm-networkdata', namespace: NS });

    // Deletion deletes the claim (the data path releases the rest) and clears the refs.
    await tc.client.delete(R.Metal3Machine, NS, 'dm');
    await deprovision(ctx, 'dm');
    const c2 = await tc.client.get(R.Metal3DataClaim, NS, 'dm');
    expect(c2 === undefined || Boolean(c2.metadata.deletionTimestamp)).toBe(true);
    expect(c2?.metadata.finalizers ?? []).not.toContain('metal3machine.infrastructure.cluster.x-k8s.io');
  });

  it('surfaces a data path error on the machine (condition and Warning Event), not as a host write', async () => {
    await createSampleHosts(tc.client, NS, 1, {
      prefix: 'derr',
      bmcSecrets: false,
      labels: () => ({ pool: 'derr' }),
    });
    await createMachinePair(tc.client, 'em', {
      m3mSpec: { dataTemplate: { name: 'tmpl' }, hostSelector: { matchLabels: { pool: 'derr' } } },
    });
    expect((await selectHost(ctx, 'em')).kind).toBe('requeue');
    await optimisticUpdate(
      tc.client,
      R.Metal3DataClaim,
      NS,
      'em',
      (c) => {
        c.status = { errorMessage: 'Failed to create associated Metal3Data object' };
      },
      { status: true },
    );
    expect((await selectHost(ctx, 'em')).kind).toBe('requeue');
    const c = cond(await get(R.Metal3Machine, 'em'), 'Metal3DataReady');
    expect(c).toMatchObject({ status: 'False', severity: 'Error', reason: 'Metal3DataFailed' });
    expect(c.message).toBe('Metal3DataClaim metal3/em: Failed to create associated Metal3Data object');
    const ev = ((await tc.client.list(R.Event, NS)).items as any[]).find(
      (e) => e.involvedObject?.name === 'em' && e.type === 'Warning',
    );
    expect(ev?.reason).toBe('Metal3DataFailed');
    expect((await hostOf('em')).spec).not.toHaveProperty('image');
  });

  it('waits for the user secrets that do not exist yet, without a template', async () => {
    await createSampleHosts(tc.client, NS, 1, {
      prefix: 'usec',
      bmcSecrets: false,
      labels: () => ({ pool: 'usec' }),
    });
    await createMachinePair(tc.client, 'um', {
      m3mSpec: { networkData: { name: 'um-net' }, hostSelector: { matchLabels: { pool: 'usec' } } },
    });
    const r = await selectHost(ctx, 'um');
    expect(r.kind).toBe('requeue');
    expect(cond(await get(R.Metal3Machine, 'um'), 'Metal3DataReady')).toMatchObject({
      status: 'False',
      reason: 'WaitingForSecrets',
    });
    expect((await hostOf('um')).spec).not.toHaveProperty('image');
    await secret('um-net', 'networkData');
    expect((await selectHost(ctx, 'um')).kind).toBe('done');
    expect(((await hostOf('um')).spec as any).networkData).toEqual({ name: 'um-net', namespace: NS });
  });
});

describe('contract: pause, failure domain, owner', () => {
  it('a paused Cluster pauses the associated host and stops; unpausing removes only our annotation', async () => {
    await createCluster(tc.client, { name: 'pc' });
    await createSampleHosts(tc.client, NS, 1, {
      prefix: 'pause',
      bmcSecrets: false,
      labels: () => ({ pool: 'pause' }),
    });
    await createMachinePair(tc.client, 'pm', {
      cluster: 'pc',
      m3mSpec: { hostSelector: { matchLabels: { pool: 'pause' } } },
    });
    expect((await selectHost(ctx, 'pm')).kind).toBe('done');
    await optimisticUpdate(tc.client, R.Cluster, NS, 'pc', (c) => {
      (c.spec as any).paused = true;
    });
    const r = await selectHost(ctx, 'pm');
    expect(r.kind).toBe('requeue');
    expect((await hostOf('pm')).metadata.annotations?.['baremetalhost.metal3.io/paused']).toBe(
      'metal3.io/capm3',
    );
    expect(cond(await get(R.Metal3Machine, 'pm'), 'Paused')?.status).toBe('True');
    await optimisticUpdate(tc.client, R.Cluster, NS, 'pc', (c) => {
      (c.spec as any).paused = false;
    });
    expect((await selectHost(ctx, 'pm')).kind).toBe('done');
    expect((await hostOf('pm')).metadata.annotations?.['baremetalhost.metal3.io/paused']).toBeUndefined();
    expect(cond(await get(R.Metal3Machine, 'pm'), 'Paused')?.status).toBe('False');
  });

  it('a paused Cluster: bad input is not refused, a deleting machine keeps its host, nothing is propagated; all resume once unpaused', async () => {
    const setPaused = (name: string, paused: boolean) =>
      optimisticUpdate(tc.client, R.Cluster, NS, name, (c) => {
        (c.spec as any).paused = paused;
      });
    await createCluster(tc.client, { name: 'pz', paused: true });
    // Bad input selectHost refuses itself (a host annotation in another namespace) and a schema
    // failure (the opening's).
    await createMachinePair(tc.client, 'pz-cross', { cluster: 'pz' });
    await optimisticUpdate(tc.client, envelopeOf(R.Metal3Machine), NS, 'pz-cross', (m) => {
      m.metadata.annotations = { 'metal3.io/BareMetalHost': 'other/host-0' };
    });
    await createMachinePair(tc.client, 'pz-schema', {
      cluster: 'pz',
      m3mSpec: { metaData: { name: 'md', namespace: 'other' } },
    });
    for (const m of ['pz-cross', 'pz-schema']) {
      expect(await selectHost(ctx, m)).toMatchObject({
        kind: 'requeue',
        reason: expect.stringMatching(/paused/),
      });
      const status = (await tc.client.get(envelopeOf(R.Metal3Machine), NS, m))!.status as any;
      expect(status?.failureReason).toBeUndefined();
    }
    // A provisioned machine of the paused Cluster is deleted: its host is left as it is.
    await setPaused('pz', false);
    await createSampleHosts(tc.client, NS, 1, {
      prefix: 'pzh',
      bmcSecrets: false,
      labels: () => ({ pool: 'pzh' }),
    });
    await tc.client.create(R.Metal3MachineTemplate, {
      metadata: { name: 'pz-mt', namespace: NS, labels: { 'cluster.x-k8s.io/cluster-name': 'pz' } },
      spec: {
        template: {
          spec: { image: { url: 'http://x/i.img', checksum: 'abc' }, automatedCleaningMode: 'disabled' },
        },
      },
    });
    await createMachinePair(tc.client, 'pz-del', {
      cluster: 'pz',
      m3mSpec: { hostSelector: { matchLabels: { pool: 'pzh' } } },
    });
    await optimisticUpdate(tc.client, R.Metal3Machine, NS, 'pz-del', (m) => {
      m.metadata.annotations = {
        ...(m.metadata.annotations ?? {}),
        'cluster.x-k8s.io/cloned-from-name': 'pz-mt',
        'cluster.x-k8s.io/cloned-from-groupkind': 'Metal3MachineTemplate.infrastructure.cluster.x-k8s.io',
      };
    });
    expect((await selectHost(ctx, 'pz-del')).kind).toBe('done');
    const hostName = (await hostOf('pz-del')).metadata.name!;
    await setState(hostName, 'provisioned', { poweredOn: true });
    await setPaused('pz', true);
    expect((await selectHost(ctx, 'pz-del')).kind).toBe('requeue');
    const before = (await tc.client.get(R.BareMetalHost, NS, hostName))!;
    expect(await selectHostCore(ctx, msg('selectHost', R.Metal3MachineTemplate, 'pz-mt'))).toMatchObject({
      kind: 'requeue',
    });
    expect(((await get(R.Metal3Machine, 'pz-del'))!.spec as any).automatedCleaningMode).toBe('metadata');
    // A template naming no Cluster: its paused Cluster's machines are left alone all the same.
    await optimisticUpdate(tc.client, R.Metal3MachineTemplate, NS, 'pz-mt', (t) => {
      t.metadata.labels = {};
    });
    expect(await selectHostCore(ctx, msg('selectHost', R.Metal3MachineTemplate, 'pz-mt'))).toEqual({
      kind: 'done',
      note: 'automatedCleaningMode disabled: 0 machine(s), 0 host(s) updated',
    });
    expect(((await get(R.Metal3Machine, 'pz-del'))!.spec as any).automatedCleaningMode).toBe('metadata');
    await tc.client.delete(R.Metal3Machine, NS, 'pz-del');
    expect(await deprovision(ctx, 'pz-del')).toMatchObject({
      kind: 'requeue',
      reason: expect.stringMatching(/paused/),
    });
    const after = (await tc.client.get(R.BareMetalHost, NS, hostName))!;
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect((await get(R.Metal3Machine, 'pz-del'))!.metadata.finalizers).toContain(
      'metal3machine.infrastructure.cluster.x-k8s.io',
    );

    await setPaused('pz', false);
    expect((await selectHost(ctx, 'pz-cross')).kind).toBe('terminal');
    expect((await selectHost(ctx, 'pz-schema')).kind).toBe('terminal');
    expect((await deprovision(ctx, 'pz-del')).kind).toBe('requeue'); // deprovisioning started
    expect(((await tc.client.get(R.BareMetalHost, NS, hostName))!.spec as any).image).toBeUndefined();
  });

  it('copies the failure domain from the Machine, prefers a host in it, then takes any available host (CAPM3 pickHost)', async () => {
    await createSampleHosts(tc.client, NS, 3, {
      prefix: 'fd',
      bmcSecrets: false,
      labels: (i) => ({
        pool: 'fd',
        'infrastructure.cluster.x-k8s.io/failure-domain': i === 1 ? 'fd-b' : 'fd-a',
      }),
    });
    await createMachinePair(tc.client, 'fm', {
      failureDomain: 'fd-b',
      m3mSpec: { hostSelector: { matchLabels: { pool: 'fd' } } },
    });
    expect((await selectHost(ctx, 'fm')).kind).toBe('done');
    expect((await get(R.Metal3Machine, 'fm'))!.spec).toMatchObject({ failureDomain: 'fd-b' });
    expect((await hostOf('fm')).metadata.name).toBe('fd-0001');
    // fd-b's only host is taken: the next fd-b machine gets a host of another failure domain.
    for (const name of ['fm2', 'fm3']) {
      await createMachinePair(tc.client, name, {
        failureDomain: 'fd-b',
        m3mSpec: { hostSelector: { matchLabels: { pool: 'fd' } } },
      });
      expect((await selectHost(ctx, name)).kind).toBe('done');
    }
    expect([(await hostOf('fm2')).metadata.name, (await hostOf('fm3')).metadata.name].sort()).toEqual([
      'fd-0000',
      'fd-0002',
    ]);
    // Nothing left anywhere: no host, and the condition says so.
    await createMachinePair(tc.client, 'fm4', {
      failureDomain: 'fd-b',
      m3mSpec: { hostSelector: { matchLabels: { pool: 'fd' } } },
    });
    expect(await selectHost(ctx, 'fm4')).toMatchObject({ kind: 'requeue' });
    expect(cond(await get(R.Metal3Machine, 'fm4'), 'AssociateBMH')).toMatchObject({
      status: 'False',
      reason: 'NoAvailableHost',
    });
    expect(cond(await get(R.Metal3Machine, 'fm4'), 'AssociateBMH').message).toMatch(
      /no available host found/,
    );
  });

  it('without an owner Machine it waits; deleting it just drops the finalizer', async () => {
    await tc.client.create(R.Metal3Machine, {
      metadata: {
        name: 'orphan',
        namespace: NS,
        finalizers: ['metal3machine.infrastructure.cluster.x-k8s.io'],
      },
      spec: { image: { url: 'http://x/i.img', checksum: 'abc' } },
    });
    expect((await selectHost(ctx, 'orphan')).kind).toBe('done');
    expect(cond(await get(R.Metal3Machine, 'orphan'), 'AssociateBMH')).toMatchObject({
      reason: 'WaitingForMetal3MachineOwnerRef',
    });
    await tc.client.delete(R.Metal3Machine, NS, 'orphan');
    expect((await deprovision(ctx, 'orphan')).kind).toBe('done');
    expect(await get(R.Metal3Machine, 'orphan')).toBeUndefined();
  });
});

describe('deprovision: power, foreign hosts, administrator power-off', () => {
  async function provisioned(
    name: string,
    hostLabels: Record<string, string>,
    hostSpec: Record<string, unknown> = {},
  ) {
    const pool = Object.values(hostLabels)[0]!;
    const [h] = await createSampleHosts(tc.client, NS, 1, {
      prefix: pool,
      bmcSecrets: false,
      labels: () => hostLabels,
    });
    if (Object.keys(hostSpec).length)
      await optimisticUpdate(tc.client, R.BareMetalHost, NS, h!.metadata.name!, (x) => {
        x.status ??= {};
        Object.assign(x.spec as object, hostSpec);
      });
    const cleaning = hostSpec.automatedCleaningMode
      ? { automatedCleaningMode: hostSpec.automatedCleaningMode }
      : {};
    await createMachinePair(tc.client, name, {
      m3mSpec: { hostSelector: { matchLabels: hostLabels }, ...cleaning },
    });
    expect((await selectHost(ctx, name)).kind).toBe('done');
    await setState(h!.metadata.name!, 'provisioned', { poweredOn: true });
    return h!.metadata.name!;
  }

  it.each([
    ['powers off by default', {}, {}, false],
    ['keeps power with disablePowerOff', { disablePowerOff: true }, {}, true],
    ['keeps power with fast track while cleaning is enabled', {}, { fastTrack: true }, true],
    [
      'powers off with fast track when cleaning is disabled',
      { automatedCleaningMode: 'disabled' },
      { fastTrack: true },
      false,
    ],
  ] as const)('%s', async (title, hostSpec, config, online) => {
    const name = `pw-${title.length}-${String(online)}-${Object.keys(config).length}`;
    const hostName = await provisioned(name, { pool: name }, hostSpec);
    await tc.client.delete(R.Metal3Machine, NS, name);
    const c = makeCtx(tc.client, config);
    expect((await deprovision(c, name)).kind).toBe('requeue');
    const h = await tc.client.get(R.BareMetalHost, NS, hostName);
    expect((h!.spec as any).online).toBe(online);
    expect((h!.spec as any).image).toBeUndefined();

    // An administrator's later power change is never overridden by a repeat pass.
    await optimisticUpdate(tc.client, R.BareMetalHost, NS, hostName, (x) => {
      (x.spec as any).online = !online;
    });
    await deprovision(c, name);
    expect(((await tc.client.get(R.BareMetalHost, NS, hostName))!.spec as any).online).toBe(!online);

    await setState(hostName, 'available');
    expect((await deprovision(c, name)).kind).toBe('done');
    const released = await tc.client.get(R.BareMetalHost, NS, hostName);
    expect((released!.spec as any).consumerRef).toBeUndefined();
    expect(await get(R.Metal3Machine, name)).toBeUndefined();
  });

  it('a held host is powered on again on every pass (CAPM3 setHostSpec); the poweroff annotation is never touched', async () => {
    const hostName = await provisioned('po', { pool: 'poweron' });
    const poweroff = 'reboot.metal3.io/poweroff';
    await optimisticUpdate(tc.client, R.BareMetalHost, NS, hostName, (x) => {
      (x.spec as any).online = false;
      x.metadata.annotations = { ...(x.metadata.annotations ?? {}), [poweroff]: '' };
    });
    expect((await selectHost(ctx, 'po')).kind).toBe('done');
    const h = (await tc.client.get(R.BareMetalHost, NS, hostName))!;
    expect((h.spec as any).online).toBe(true);
    expect(h.metadata.annotations?.[poweroff]).toBe('');
    // Already on: a repeat pass writes nothing.
    const before = h.metadata.resourceVersion;
    expect((await selectHost(ctx, 'po')).kind).toBe('done');
    expect((await tc.client.get(R.BareMetalHost, NS, hostName))!.metadata.resourceVersion).toBe(before);
  });

  it("release keeps the host's own metaData/networkData, which the machine did not set", async () => {
    const own = {
      metaData: { name: 'adm-meta', namespace: NS },
      networkData: { name: 'adm-net', namespace: NS },
    };
    const hostName = await provisioned('keepdata', { pool: 'keepdata' }, own);
    const provisionedHost = (await tc.client.get(R.BareMetalHost, NS, hostName))!;
    expect(provisionedHost.spec).toMatchObject({
      ...own,
      userData: { name: 'keepdata-bootstrap', namespace: NS },
    });
    await tc.client.delete(R.Metal3Machine, NS, 'keepdata');
    expect((await deprovision(ctx, 'keepdata')).kind).toBe('requeue');
    await setState(hostName, 'available');
    expect((await deprovision(ctx, 'keepdata')).kind).toBe('done');
    const h = (await tc.client.get(R.BareMetalHost, NS, hostName))!;
    expect(h.spec).toMatchObject(own);
    expect((h.spec as any).userData).toBeUndefined();
    expect((h.spec as any).image).toBeUndefined();
    expect((h.spec as any).consumerRef).toBeUndefined();
  });

  it('never touches a host consumed by another machine', async () => {
    const hostName = await provisioned('fa', { pool: 'foreign' });
    // Someone re-pointed the host at another machine.
    await optimisticUpdate(tc.client, R.BareMetalHost, NS, hostName, (x) => {
      (x.spec as any).consumerRef = {
        apiVersion: apiVersionOf(R.Metal3Machine),
        kind: 'Metal3Machine',
        name: 'other',
        namespace: NS,
      };
    });
    const before = await tc.client.get(R.BareMetalHost, NS, hostName);
    await tc.client.delete(R.Metal3Machine, NS, 'fa');
    expect((await deprovision(ctx, 'fa')).kind).toBe('done');
    const after = await tc.client.get(R.BareMetalHost, NS, hostName);
    expect(after!.metadata.resourceVersion).toBe(before!.metadata.resourceVersion);
    expect(await get(R.Metal3Machine, 'fa')).toBeUndefined();
  });
});

describe('Metal3MachineTemplate: automatedCleaningMode propagation', () => {
  it('updates the machines cloned from it and their hosts', async () => {
    await tc.client.create(R.Metal3MachineTemplate, {
      metadata: { name: 'mt', namespace: NS },
      spec: {
        template: {
          spec: { image: { url: 'http://x/i.img', checksum: 'abc' }, automatedCleaningMode: 'disabled' },
        },
      },
    });
    await createSampleHosts(tc.client, NS, 1, {
      prefix: 'mt',
      bmcSecrets: false,
      labels: () => ({ pool: 'mt' }),
    });
    await createMachinePair(tc.client, 'mtm', { m3mSpec: { hostSelector: { matchLabels: { pool: 'mt' } } } });
    await optimisticUpdate(tc.client, R.Metal3Machine, NS, 'mtm', (m) => {
      m.metadata.annotations = {
        ...(m.metadata.annotations ?? {}),
        'cluster.x-k8s.io/cloned-from-name': 'mt',
        'cluster.x-k8s.io/cloned-from-groupkind': 'Metal3MachineTemplate.infrastructure.cluster.x-k8s.io',
      };
    });
    await createMachinePair(tc.client, 'notcloned', {
      m3mSpec: { hostSelector: { matchLabels: { pool: 'none' } } },
    });
    expect((await selectHost(ctx, 'mtm')).kind).toBe('done');
    expect(((await hostOf('mtm')).spec as any).automatedCleaningMode).toBe('metadata');
    const r = await selectHostCore(ctx, msg('selectHost', R.Metal3MachineTemplate, 'mt'));
    expect(r).toMatchObject({ kind: 'done' });
    expect(((await get(R.Metal3Machine, 'mtm'))!.spec as any).automatedCleaningMode).toBe('disabled');
    expect(((await hostOf('mtm')).spec as any).automatedCleaningMode).toBe('disabled');
    expect(((await get(R.Metal3Machine, 'notcloned'))!.spec as any).automatedCleaningMode).toBe('metadata');
  });
});

describe('reconcileCluster', () => {
  const m3c = (
    name: string,
    endpoint: unknown,
    labels: Record<string, string> = { 'cluster.x-k8s.io/cluster-name': 'cluster' },
  ) =>
    // Any endpoint, also one the schema refuses: the test posts what a user could.
    tc.client.create(envelopeOf(R.Metal3Cluster), {
      metadata: { name, namespace: NS, labels },
      spec: { controlPlaneEndpoint: endpoint },
    });
  const run = (name: string) => reconcileCluster(ctx, msg('reconcileCluster', R.Metal3Cluster, name));

  it('waits for its owner Cluster before doing anything', async () => {
    await m3c('lonely', { host: 'api.example', port: 6443 }, {});
    // Done (the Cluster's event wakes it), and nothing written to the Metal3Cluster.
    expect(await run('lonely')).toMatchObject({ kind: 'done' });
    const o = await tc.client.get(R.Metal3Cluster, NS, 'lonely');
    expect(o!.metadata.finalizers).toBeUndefined();
    expect(o!.status).toBeUndefined();
  });

  it('is ready with a valid endpoint and fails terminally without one', async () => {
    await m3c('good', { host: '192.168.111.249', port: 6443 });
    expect((await run('good')).kind).toBe('done');
    let o = await tc.client.get(R.Metal3Cluster, NS, 'good');
    expect(o!.metadata.finalizers).toEqual(['metal3cluster.infrastructure.cluster.x-k8s.io']);
    expect((o!.status as any).ready).toBe(true);
    expect(cond(o, 'Ready')?.status).toBe('True');

    await m3c('bad', { host: '', port: 6443 });
    const r = await run('bad');
    expect(r).toEqual({
      kind: 'terminal',
      reason: 'InvalidConfiguration',
      message: 'spec.controlPlaneEndpoint.host must not be empty',
    });
    o = await tc.client.get(R.Metal3Cluster, NS, 'bad');
    expect(o!.status).toMatchObject({
      ready: false,
      failureReason: 'InvalidConfiguration',
      failureMessage: 'spec.controlPlaneEndpoint.host must not be empty',
    });
    expect(cond(o, 'BaremetalInfrastructureReady')).toMatchObject({ status: 'False', severity: 'Error' });
    // Fixed by the user: the failure clears.
    await optimisticUpdate(tc.client, R.Metal3Cluster, NS, 'bad', (x) => {
      (x.spec as any).controlPlaneEndpoint = { host: 'api.example', port: 443 };
    });
    expect((await run('bad')).kind).toBe('done');
    o = await tc.client.get(R.Metal3Cluster, NS, 'bad');
    expect((o!.status as any).failureReason).toBeUndefined();
    expect((o!.status as any).ready).toBe(true);
  });

  it('a paused Cluster: its Metal3Cluster is left alone, its deletion included', async () => {
    await createCluster(tc.client, { name: 'pzc', paused: true });
    await m3c('pzc', { host: 'api.example', port: 6443 }, { 'cluster.x-k8s.io/cluster-name': 'pzc' });
    expect(await run('pzc')).toMatchObject({ kind: 'requeue', reason: expect.stringMatching(/paused/) });
    expect((await tc.client.get(R.Metal3Cluster, NS, 'pzc'))!.metadata.finalizers).toBeUndefined();
    await optimisticUpdate(tc.client, R.Cluster, NS, 'pzc', (c) => {
      (c.spec as any).paused = false;
    });
    expect((await run('pzc')).kind).toBe('done');
    await optimisticUpdate(tc.client, R.Cluster, NS, 'pzc', (c) => {
      c.metadata.annotations = { 'cluster.x-k8s.io/paused': '' };
    });
    await tc.client.delete(R.Metal3Cluster, NS, 'pzc');
    expect(await run('pzc')).toMatchObject({ kind: 'requeue', reason: expect.stringMatching(/paused/) });
    expect((await tc.client.get(R.Metal3Cluster, NS, 'pzc'))!.metadata.finalizers).toEqual([
      'metal3cluster.infrastructure.cluster.x-k8s.io',
    ]);
  });

  it('deletion waits for the cluster machines, then drops the finalizer', async () => {
    await m3c('del', { host: 'api.example', port: 6443 }, { 'cluster.x-k8s.io/cluster-name': 'delc' });
    await run('del');
    await tc.client.create(R.Metal3Machine, {
      metadata: { name: 'delm', namespace: NS, labels: { 'cluster.x-k8s.io/cluster-name': 'delc' } },
      spec: { image: { url: 'http://x', checksum: 'y' } },
    });
    await tc.client.delete(R.Metal3Cluster, NS, 'del');
    expect((await run('del')).kind).toBe('requeue');
    expect(await tc.client.get(R.Metal3Cluster, NS, 'del')).toBeDefined();
    await tc.client.delete(R.Metal3Machine, NS, 'delm');
    expect((await run('del')).kind).toBe('done');
    expect(await tc.client.get(R.Metal3Cluster, NS, 'del')).toBeUndefined();
  });
});

describe('host guards', () => {
  it('never gives an image to a claimed host that is not ready/available (a stale pass during deprovisioning)', async () => {
    await createSampleHosts(tc.client, NS, 1, {
      prefix: 'stale',
      bmcSecrets: false,
      labels: () => ({ pool: 'stale' }),
    });
    await createMachinePair(tc.client, 'sm', {
      m3mSpec: { networkData: { name: 'sm-net' }, hostSelector: { matchLabels: { pool: 'stale' } } },
    });
    expect((await selectHost(ctx, 'sm')).kind).toBe('requeue'); // associated, waiting for the secret
    const hostName = (await hostOf('sm')).metadata.name!;
    await setState(hostName, 'deprovisioning');
    await secret('sm-net', 'networkData');
    const before = await tc.client.get(R.BareMetalHost, NS, hostName);
    const r = await selectHost(ctx, 'sm');
    expect(r.kind).toBe('requeue');
    expect(cond(await get(R.Metal3Machine, 'sm'), 'AssociateBMH')).toMatchObject({
      status: 'False',
      reason: 'WaitingForHostReady',
    });
    expect((await tc.client.get(R.BareMetalHost, NS, hostName))!.metadata.resourceVersion).toBe(
      before!.metadata.resourceVersion,
    );
    await setState(hostName, 'available');
    expect((await selectHost(ctx, 'sm')).kind).toBe('done');
    expect(((await hostOf('sm')).spec as any).image.url).toBe('http://172.22.0.1/images/node.img');
  });

  it('a claimed host being deleted fails the machine', async () => {
    await createSampleHosts(tc.client, NS, 1, {
      prefix: 'gone',
      bmcSecrets: false,
      labels: () => ({ pool: 'gone' }),
    });
    await createMachinePair(tc.client, 'gm', {
      m3mSpec: { hostSelector: { matchLabels: { pool: 'gone' } } },
    });
    expect((await selectHost(ctx, 'gm')).kind).toBe('done');
    const hostName = (await hostOf('gm')).metadata.name!;
    await optimisticUpdate(tc.client, R.BareMetalHost, NS, hostName, (h) => {
      h.metadata.finalizers = ['test/hold'];
    });
    await tc.client.delete(R.BareMetalHost, NS, hostName);
    const r = await selectHost(ctx, 'gm');
    expect(r).toMatchObject({ kind: 'terminal', reason: 'UpdateError' });
    expect(((await get(R.Metal3Machine, 'gm'))!.status as any).failureMessage).toMatch(/is being deleted/);
  });
});

describe('host choice on the server', () => {
  it('applies matchLabels and matchExpressions (In, gt, DoesNotExist) together', async () => {
    const labels: Record<string, string>[] = [
      { pool: 'sel', tier: 'gold', cpus: '64' },
      { pool: 'sel', tier: 'gold', cpus: '16' },
      { pool: 'sel', tier: 'bronze', cpus: '64' },
      { pool: 'sel', tier: 'gold', cpus: '64', retired: 'yes' },
      { pool: 'other', tier: 'gold', cpus: '64' },
    ];
    await createSampleHosts(tc.client, NS, labels.length, {
      prefix: 'sel',
      bmcSecrets: false,
      labels: (i) => labels[i]!,
    });
    await createMachinePair(tc.client, 'selm', {
      m3mSpec: {
        hostSelector: {
          matchLabels: { pool: 'sel' },
          matchExpressions: [
            { key: 'tier', operator: 'In', values: ['gold', 'silver'] },
            { key: 'cpus', operator: 'gt', values: ['32'] },
            { key: 'retired', operator: 'DoesNotExist' },
          ],
        },
      },
    });
    expect((await selectHost(ctx, 'selm')).kind).toBe('done');
    expect((await hostOf('selm')).metadata.name).toBe('sel-0000');
  });

  it('waits for a host booked for node reuse that is not ready yet, then takes it and drops the booking', async () => {
    await createSampleHosts(tc.client, NS, 2, {
      prefix: 'reuse',
      bmcSecrets: false,
      labels: (i) => ({
        pool: 'reuse',
        ...(i === 1 ? { 'infrastructure.cluster.x-k8s.io/node-reuse': 'md-r' } : {}),
      }),
    });
    await setState('reuse-0001', 'deprovisioning');
    // A real owner: the API server's garbage collector deletes a Machine whose MachineSet does not exist.
    const ms = await tc.client.create<KubeObject>(R.MachineSet, {
      metadata: { name: 'md-r-abc', namespace: NS },
      spec: { clusterName: CLUSTER },
    });
    await createMachinePair(tc.client, 'rm', {
      machineLabels: { 'cluster.x-k8s.io/deployment-name': 'md-r' },
      machineOwners: [
        {
          apiVersion: 'cluster.x-k8s.io/v1beta1',
          kind: 'MachineSet',
          name: 'md-r-abc',
          uid: ms.metadata.uid!,
          controller: true,
        },
      ],
      m3mSpec: { hostSelector: { matchLabels: { pool: 'reuse' } } },
    });
    const r = await selectHost(ctx, 'rm');
    expect(r.kind).toBe('requeue');
    const c = cond(await get(R.Metal3Machine, 'rm'), 'AssociateBMH');
    expect(c).toMatchObject({ status: 'False', reason: 'WaitingForNodeReuseHost' });
    expect(c.message).toMatch(/reuse-0001 booked for node reuse is in state "deprovisioning"/);
    expect(
      ((await tc.client.get(R.BareMetalHost, NS, 'reuse-0000'))!.spec as any).consumerRef,
    ).toBeUndefined();
    await setState('reuse-0001', 'available');
    expect((await selectHost(ctx, 'rm')).kind).toBe('done');
    const h = await hostOf('rm');
    expect(h.metadata.name).toBe('reuse-0001');
    expect(h.metadata.labels?.['infrastructure.cluster.x-k8s.io/node-reuse']).toBeUndefined();
    const ev = ((await tc.client.list(R.Event, NS)).items as any[]).find(
      (e) => e.involvedObject?.name === 'rm' && e.reason === 'Associated',
    );
    expect(ev.message).toMatch(/\(node reuse\)$/);
  });
});
