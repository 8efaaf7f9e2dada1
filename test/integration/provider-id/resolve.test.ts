/**
 * resolveProviderID against two embedded API servers (management + workload): every step of
 * seed 000, write order, bad input and idempotency, asserted on the objects and the request logs.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { reconcile } from '../../../functions/resolve-provider-id/core.ts';
import { envelopeOf, R } from '../../../shared/api/resources.ts';
import { testClient } from '../../helpers/cluster.ts';
import {
  CLUSTER,
  createCluster,
  createMachine,
  createNode,
  type Env,
  getMachine,
  msg,
  NS,
  nodeProviderID,
  recordWrites,
  startEnv,
  type Write,
  warnings,
} from './harness.ts';

let env: Env;
let log: { writes: Write[]; reset(): void };
beforeAll(async () => {
  env = await startEnv();
  await createCluster(env.mgmt.client);
  log = recordWrites(env);
});
afterAll(() => env?.stop());
beforeEach(() => log.reset());

const nodeWrites = () => log.writes.filter((w) => w.server === 'workload');
const machineWrites = () =>
  log.writes.filter((w) => w.server === 'mgmt' && w.resource.startsWith('metal3machines'));
const idOf = (m: string, h: string) => `metal3://${NS}/${h}/${m}`;

async function expectNoWritesOnRerun(name: string) {
  log.reset();
  await reconcile(env.ctx(), msg(name));
  expect(log.writes).toEqual([]);
}

describe('Step 3: metal3.io/uuid label', () => {
  it('empty providerID: machine providerID + ready written first, then only node.spec.providerID', async () => {
    const { hostUid } = await createMachine(env.mgmt.client, { name: 's3-a', host: 'h-s3-a' });
    await createNode(env.workload.client, 'h-s3-a', { uid: hostUid });
    log.reset();
    const r = await reconcile(env.ctx(), msg('s3-a'));
    expect(r).toMatchObject({ kind: 'done' });
    expect(await nodeProviderID(env.workload.client, 'h-s3-a')).toBe(idOf('s3-a', 'h-s3-a'));

    const m = await getMachine(env.mgmt.client, 's3-a');
    expect(m.spec.providerID).toBe(idOf('s3-a', 'h-s3-a'));
    expect(m.status?.ready).toBe(true);
    expect(m.status?.conditions).toEqual([
      expect.objectContaining({ type: 'Ready', status: 'True' }),
      expect.objectContaining({ type: 'AssociateBMH', status: 'True' }),
      expect.objectContaining({ type: 'KubernetesNodeReady', status: 'True' }),
      expect.objectContaining({ type: 'Metal3DataReady', status: 'True' }),
    ]);
    // addresses from the host kept/derived
    expect(m.status?.addresses).toEqual([
      { type: 'InternalIP', address: '192.168.111.20' },
      { type: 'Hostname', address: 'h-s3-a' },
    ]);
    const node = await env.workload.client.get(R.Node, undefined, 'h-s3-a');
    expect((node?.spec as { providerID?: string } | undefined)?.providerID).toBe(idOf('s3-a', 'h-s3-a'));
    expect(node?.metadata.labels).toEqual({ 'kubernetes.io/hostname': 'h-s3-a', 'metal3.io/uuid': hostUid });

    // write order: spec, then status (ready and the condition, one write), then the Node patch.
    expect(log.writes.map((w) => `${w.server} ${w.verb} ${w.resource}`)).toEqual([
      'mgmt update metal3machines',
      'mgmt update metal3machines/status',
      'workload patch nodes',
    ]);
    await expectNoWritesOnRerun('s3-a');
  });

  it('zero labelled Nodes with a bootstrap configRef: wait (safety requeue), no providerID yet', async () => {
    await createMachine(env.mgmt.client, { name: 's3-wait', host: 'h-s3-wait' });
    const r = await reconcile(env.ctx(), msg('s3-wait'));
    expect(r).toMatchObject({
      kind: 'requeue',
      reason: expect.stringContaining('waiting for a Node labelled metal3.io/uuid='),
    });
    const m = await getMachine(env.mgmt.client, 's3-wait');
    expect(m.spec.providerID).toBeUndefined();
    expect(m.status?.ready).toBeUndefined();
    expect(m.status?.conditions).toContainEqual(
      expect.objectContaining({
        type: 'KubernetesNodeReady',
        status: 'False',
        reason: 'WaitingForNode',
        severity: 'Info',
      }),
    );
    expect(nodeWrites()).toEqual([]);
  });

  it('two Nodes with one label: terminal error on the machine, Warning Event, no Node patch', async () => {
    const { hostUid } = await createMachine(env.mgmt.client, { name: 's3-two', host: 'h-s3-two' });
    await createNode(env.workload.client, 'h-s3-two-a', { uid: hostUid });
    await createNode(env.workload.client, 'h-s3-two-b', { uid: hostUid });
    log.reset();
    const r = await reconcile(env.ctx(), msg('s3-two'));
    const message = `more than one Node is labelled metal3.io/uuid=${hostUid} (h-s3-two-a, h-s3-two-b): misconfiguration`;
    expect(r).toEqual({ kind: 'terminal', reason: 'MultipleNodesWithUUIDLabel', message });
    const m = await getMachine(env.mgmt.client, 's3-two');
    expect(m.status).toMatchObject({ failureReason: 'InvalidConfiguration', failureMessage: message });
    expect(m.status?.conditions).toContainEqual(
      expect.objectContaining({
        type: 'KubernetesNodeReady',
        status: 'False',
        severity: 'Error',
        reason: 'MultipleNodesWithUUIDLabel',
        message,
      }),
    );
    expect(m.spec.providerID).toBeUndefined();
    expect(await warnings(env.mgmt.client, 's3-two')).toEqual([
      { reason: 'MultipleNodesWithUUIDLabel', message },
    ]);
    expect(nodeWrites()).toEqual([]);
    expect(
      env.workload.server.log.entries.filter((e) => e.verb === 'patch' && e.name?.startsWith('h-s3-two')),
    ).toEqual([]);

    // The user removes the stray Node: the next wake-up recovers and clears the failure.
    await env.workload.client.delete(R.Node, undefined, 'h-s3-two-b');
    expect((await reconcile(env.ctx(), msg('s3-two'))).kind).toBe('done');
    const healed = await getMachine(env.mgmt.client, 's3-two');
    expect(healed.status?.failureReason).toBeUndefined();
    expect(healed.status?.failureMessage).toBeUndefined();
    expect(healed.status?.ready).toBe(true);
  });

  it('unsupported providerID on the labelled Node: clear error, the Node is left alone', async () => {
    const { hostUid } = await createMachine(env.mgmt.client, { name: 's3-bad', host: 'h-s3-bad' });
    await createNode(env.workload.client, 'h-s3-bad', {
      uid: hostUid,
      providerID: 'aws:///eu-west-1a/i-0abc',
    });
    log.reset();
    const r = await reconcile(env.ctx(), msg('s3-bad'));
    expect(r).toMatchObject({
      kind: 'terminal',
      reason: 'UnsupportedProviderIDFormat',
      message: expect.stringContaining('node using unsupported providerID format'),
    });
    expect(await nodeProviderID(env.workload.client, 'h-s3-bad')).toBe('aws:///eu-west-1a/i-0abc');
    expect(nodeWrites()).toEqual([]);
    expect((await getMachine(env.mgmt.client, 's3-bad')).status?.failureMessage).toContain(
      'node using unsupported providerID format',
    );
  });

  it('a well-formed ID of another machine on the labelled Node: error, never rewritten', async () => {
    const { hostUid } = await createMachine(env.mgmt.client, { name: 's3-foreign', host: 'h-s3-foreign' });
    await createNode(env.workload.client, 'h-s3-foreign', { uid: hostUid, providerID: 'metal3://other/h/m' });
    log.reset();
    const r = await reconcile(env.ctx(), msg('s3-foreign'));
    expect(r).toMatchObject({ kind: 'terminal', reason: 'ForeignProviderID' });
    expect(await nodeProviderID(env.workload.client, 'h-s3-foreign')).toBe('metal3://other/h/m');
    expect(nodeWrites()).toEqual([]);
  });
});

describe('Step 1: a Node already carries one of the IDs', () => {
  it('machine and Node agree: ready, no Node write', async () => {
    const id = idOf('s1-a', 'h-s1-a');
    const { hostUid } = await createMachine(env.mgmt.client, {
      name: 's1-a',
      host: 'h-s1-a',
      providerID: id,
    });
    await createNode(env.workload.client, 'h-s1-a', { uid: hostUid, providerID: id });
    log.reset();
    expect((await reconcile(env.ctx(), msg('s1-a'))).kind).toBe('done');
    expect((await getMachine(env.mgmt.client, 's1-a')).status?.ready).toBe(true);
    expect(nodeWrites()).toEqual([]);
    expect(machineWrites().map((w) => w.resource)).toEqual(['metal3machines/status']);
    await expectNoWritesOnRerun('s1-a');
  });

  it('CAPI pivot/move: the Node has the new-format ID, the machine none → accepted and copied', async () => {
    const id = idOf('s1-pivot', 'h-s1-pivot');
    const { hostUid } = await createMachine(env.mgmt.client, { name: 's1-pivot', host: 'h-s1-pivot' });
    await createNode(env.workload.client, 'h-s1-pivot', { uid: hostUid, providerID: id });
    log.reset();
    const r = await reconcile(env.ctx(), msg('s1-pivot'));
    expect(r).toMatchObject({ kind: 'done' });
    const m = await getMachine(env.mgmt.client, 's1-pivot');
    expect(m.spec.providerID).toBe(id);
    expect(m.status?.ready).toBe(true);
    expect(nodeWrites()).toEqual([]);
  });

  it('legacy metal3://<uid> on the Node is accepted by default and copied verbatim', async () => {
    const { hostUid } = await createMachine(env.mgmt.client, { name: 's1-legacy', host: 'h-s1-legacy' });
    await createNode(env.workload.client, 'h-s1-legacy', { uid: hostUid, providerID: `metal3://${hostUid}` });
    log.reset();
    expect((await reconcile(env.ctx(), msg('s1-legacy'))).kind).toBe('done');
    const m = await getMachine(env.mgmt.client, 's1-legacy');
    expect(m.spec.providerID).toBe(`metal3://${hostUid}`);
    expect(m.status?.ready).toBe(true);
    expect(nodeWrites()).toEqual([]);
  });

  it('legacy refused with --legacy-provider-ids=refuse: clear error, nothing patched', async () => {
    const { hostUid } = await createMachine(env.mgmt.client, { name: 's1-refuse', host: 'h-s1-refuse' });
    await createNode(env.workload.client, 'h-s1-refuse', { uid: hostUid, providerID: `metal3://${hostUid}` });
    log.reset();
    const r = await reconcile(env.ctx({ legacyProviderIds: 'refuse' }), msg('s1-refuse'));
    expect(r).toMatchObject({
      kind: 'terminal',
      reason: 'LegacyProviderIDRefused',
      message: expect.stringContaining('migrate-provider-ids'),
    });
    const m = await getMachine(env.mgmt.client, 's1-refuse');
    expect(m.spec.providerID).toBeUndefined();
    expect(m.status?.ready).toBeUndefined();
    expect(m.status?.failureMessage).toContain(`legacy providerID metal3://${hostUid}`);
    expect(nodeWrites()).toEqual([]);
    expect(await warnings(env.mgmt.client, 's1-refuse')).toHaveLength(1);
  });

  it('duplicate providerID on two Nodes: error, no Node patch', async () => {
    const id = idOf('s1-dup', 'h-s1-dup');
    const { hostUid } = await createMachine(env.mgmt.client, { name: 's1-dup', host: 'h-s1-dup' });
    // One found by the host's uuid label, the other by the machine's hostname (ADR 008).
    await createNode(env.workload.client, 'h-s1-dup-a', { uid: hostUid, providerID: id });
    await createNode(env.workload.client, 'h-s1-dup-b', { hostname: 'h-s1-dup', providerID: id });
    log.reset();
    const r = await reconcile(env.ctx(), msg('s1-dup'));
    expect(r).toEqual({
      kind: 'terminal',
      reason: 'DuplicateProviderID',
      message: `providerID ${id} is set on more than one Node (h-s1-dup-a, h-s1-dup-b)`,
    });
    expect(nodeWrites()).toEqual([]);
  });

  it('two Nodes with IDs of the same host (a stale machine): error', async () => {
    const { hostUid } = await createMachine(env.mgmt.client, { name: 's1-stale', host: 'h-s1-stale' });
    // The stale Node ran on the same host: it carries the host's uuid label too.
    await createNode(env.workload.client, 'h-s1-stale-old', {
      uid: hostUid,
      providerID: idOf('old-m3m', 'h-s1-stale'),
    });
    await createNode(env.workload.client, 'h-s1-stale', {
      uid: hostUid,
      providerID: idOf('s1-stale', 'h-s1-stale'),
    });
    log.reset();
    expect(await reconcile(env.ctx(), msg('s1-stale'))).toMatchObject({
      kind: 'terminal',
      reason: 'DuplicateHostProviderID',
    });
    expect(nodeWrites()).toEqual([]);
  });
});

describe('Step 2: cloud provider', () => {
  const setCloud = async (spec: Record<string, unknown>) => {
    await env.mgmt.client.patch(R.Metal3Cluster, NS, CLUSTER, { spec });
  };

  it('cloudProviderEnabled: the Node ID is copied verbatim; none yet → wait, the Node is never patched', async () => {
    await setCloud({ cloudProviderEnabled: true, noCloudProvider: null });
    try {
      const id = idOf('s2-a', 'h-s2-a');
      const { hostUid } = await createMachine(env.mgmt.client, { name: 's2-a', host: 'h-s2-a' });
      await createNode(env.workload.client, 'h-s2-a', { uid: hostUid });
      log.reset();
      const r1 = await reconcile(env.ctx(), msg('s2-a'));
      expect(r1).toMatchObject({
        kind: 'requeue',
        reason: expect.stringContaining('waiting for the cloud provider'),
      });
      expect(nodeWrites()).toEqual([]);
      expect((await getMachine(env.mgmt.client, 's2-a')).spec.providerID).toBeUndefined();

      // The cloud provider sets the ID (the test plays it): copied.
      await env.workload.client.patch(R.Node, undefined, 'h-s2-a', { spec: { providerID: id } });
      log.reset();
      const r2 = await reconcile(env.ctx(), msg('s2-a'));
      expect(r2).toMatchObject({ kind: 'done' });
      expect((await getMachine(env.mgmt.client, 's2-a')).spec.providerID).toBe(id);
      expect(nodeWrites()).toEqual([]);
    } finally {
      await setCloud({ cloudProviderEnabled: null, noCloudProvider: true });
    }
  });

  it('noCloudProvider explicitly false also means a cloud provider; a legacy ID it set is copied', async () => {
    await setCloud({ noCloudProvider: false });
    try {
      const { hostUid } = await createMachine(env.mgmt.client, { name: 's2-b', host: 'h-s2-b' });
      await createNode(env.workload.client, 'h-s2-b-cloud', { providerID: `metal3://${hostUid}` });
      expect((await reconcile(env.ctx(), msg('s2-b'))).kind).toBe('done');
      expect((await getMachine(env.mgmt.client, 's2-b')).spec.providerID).toBe(`metal3://${hostUid}`);
    } finally {
      await setCloud({ noCloudProvider: true });
    }
  });
});

describe('Step 4: hostname fallback', () => {
  it('no configRef: assign the ID and ready first, wait for the Node, then patch the single match', async () => {
    await createMachine(env.mgmt.client, {
      name: 's4-a',
      host: 'h-s4-a',
      bootstrapConfigRef: false,
      addresses: [{ type: 'Hostname', address: 'worker-s4-a' }],
    });
    log.reset();
    const r1 = await reconcile(env.ctx(), msg('s4-a'));
    expect(r1).toMatchObject({
      kind: 'requeue',
      reason: expect.stringContaining('no Node with kubernetes.io/hostname in [worker-s4-a]'),
    });
    const m1 = await getMachine(env.mgmt.client, 's4-a');
    expect(m1.spec.providerID).toBe(idOf('s4-a', 'h-s4-a'));
    expect(m1.status?.ready).toBe(true);
    expect(m1.status?.addresses).toEqual([{ type: 'Hostname', address: 'worker-s4-a' }]); // association's kept
    expect(nodeWrites()).toEqual([]);

    await createNode(env.workload.client, 'worker-s4-a');
    log.reset();
    const r2 = await reconcile(env.ctx(), msg('s4-a'));
    expect(r2).toMatchObject({ kind: 'done' });
    expect(await nodeProviderID(env.workload.client, 'worker-s4-a')).toBe(idOf('s4-a', 'h-s4-a'));
    // ready was written while waiting; now the condition (one status write), then the Node.
    expect(log.writes.map((w) => `${w.server} ${w.verb} ${w.resource}`)).toEqual([
      'mgmt update metal3machines/status',
      'workload patch nodes',
    ]);
    await expectNoWritesOnRerun('s4-a');
  });

  it('one hostname match in a single run: machine written before the Node', async () => {
    await createMachine(env.mgmt.client, {
      name: 's4-one',
      host: 'h-s4-one',
      bootstrapConfigRef: false,
      addresses: [{ type: 'Hostname', address: 'worker-s4-one' }],
    });
    await createNode(env.workload.client, 'worker-s4-one');
    log.reset();
    expect((await reconcile(env.ctx(), msg('s4-one'))).kind).toBe('done');
    const order = log.writes.map((w) => `${w.server} ${w.resource}`);
    expect(order.indexOf('mgmt metal3machines')).toBeLessThan(order.indexOf('workload nodes'));
    expect(order.indexOf('mgmt metal3machines/status')).toBeLessThan(order.indexOf('workload nodes'));
  });

  it('several hostname matches: wait, not error; no Node patched', async () => {
    await createMachine(env.mgmt.client, {
      name: 's4-many',
      host: 'h-s4-many',
      bootstrapConfigRef: false,
      addresses: [
        { type: 'Hostname', address: 'w-s4-many-1' },
        { type: 'Hostname', address: 'w-s4-many-2' },
      ],
    });
    await createNode(env.workload.client, 'w-s4-many-1');
    await createNode(env.workload.client, 'w-s4-many-2');
    log.reset();
    const r = await reconcile(env.ctx(), msg('s4-many'));
    expect(r).toMatchObject({
      kind: 'requeue',
      reason: expect.stringContaining('several Nodes match hostname'),
    });
    expect(nodeWrites()).toEqual([]);
    expect((await getMachine(env.mgmt.client, 's4-many')).status?.failureReason).toBeUndefined();
  });

  it('configRef but the uuid label never configured: the single unlabelled hostname match is used', async () => {
    await createMachine(env.mgmt.client, { name: 's4-nolabel', host: 'h-s4-nolabel' });
    await createNode(env.workload.client, 'h-s4-nolabel'); // hostname = host hardware hostname
    expect((await reconcile(env.ctx(), msg('s4-nolabel'))).kind).toBe('done');
    expect(await nodeProviderID(env.workload.client, 'h-s4-nolabel')).toBe(
      idOf('s4-nolabel', 'h-s4-nolabel'),
    );
  });
});

describe('gates and bad input', () => {
  it('host not provisioned yet: done, nothing read from the workload cluster, nothing written', async () => {
    await createMachine(env.mgmt.client, { name: 'g-prov', host: 'h-g-prov', state: 'provisioning' });
    env.workload.server.log.reset();
    log.reset();
    const r = await reconcile(env.ctx(), msg('g-prov'));
    expect(r).toMatchObject({ kind: 'done' });
    expect(log.writes).toEqual([]);
    expect(env.workload.server.log.entries).toEqual([]);
  });

  it('malformed host annotation: terminal error naming the annotation, no Node request at all', async () => {
    await createMachine(env.mgmt.client, { name: 'g-ann', host: 'h-g-ann', hostAnnotation: 'no-slash-here' });
    env.workload.server.log.reset();
    const r = await reconcile(env.ctx(), msg('g-ann'));
    expect(r).toMatchObject({
      kind: 'terminal',
      reason: 'InvalidHostAnnotation',
      message: expect.stringContaining('metal3.io/BareMetalHost'),
    });
    const m = await getMachine(env.mgmt.client, 'g-ann');
    expect(m.status?.failureMessage).toContain(
      'annotation metal3.io/BareMetalHost="no-slash-here" is malformed',
    );
    expect(await warnings(env.mgmt.client, 'g-ann')).toEqual([
      { reason: 'InvalidHostAnnotation', message: m.status?.failureMessage },
    ]);
    expect(env.workload.server.log.entries).toEqual([]);
  });

  it('missing kubeconfig Secret: a waiting condition, not a crash', async () => {
    await env.mgmt.client.create(R.Cluster, {
      metadata: { name: 'c-nokc', namespace: NS },
      spec: {
        infrastructureRef: {
          apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
          kind: 'Metal3Cluster',
          name: CLUSTER,
          namespace: NS,
        },
      },
    });
    const { m3m } = await createMachine(env.mgmt.client, { name: 'g-nokc', host: 'h-g-nokc' });
    await env.mgmt.client.patch(R.Metal3Machine, NS, 'g-nokc', {
      metadata: { labels: { 'cluster.x-k8s.io/cluster-name': 'c-nokc' } },
    });
    void m3m;
    const r = await reconcile(env.ctx(), msg('g-nokc'));
    expect(r).toMatchObject({
      kind: 'requeue',
      reason: expect.stringContaining('Secret metal3/c-nokc-kubeconfig'),
    });
    const m = await getMachine(env.mgmt.client, 'g-nokc');
    expect(m.status?.conditions).toContainEqual(
      expect.objectContaining({ type: 'KubernetesNodeReady', reason: 'WaitingForWorkloadCluster' }),
    );
    expect(m.status?.failureReason).toBeUndefined();
  });

  it('a machine another step marked failed is left alone (CAPI v1beta1 contract)', async () => {
    const { hostUid, m3m } = await createMachine(env.mgmt.client, { name: 'g-failed', host: 'h-g-failed' });
    const fresh = await getMachine(env.mgmt.client, 'g-failed');
    await env.mgmt.client.replaceStatus(envelopeOf(R.Metal3Machine), {
      ...fresh,
      status: { ...fresh.status, failureReason: 'InvalidConfiguration', failureMessage: 'bad hostSelector' },
    });
    void m3m;
    await createNode(env.workload.client, 'h-g-failed', { uid: hostUid });
    log.reset();
    expect(await reconcile(env.ctx(), msg('g-failed'))).toMatchObject({ kind: 'done' });
    expect(log.writes).toEqual([]);
    expect(await nodeProviderID(env.workload.client, 'h-g-failed')).toBeUndefined();
  });

  it('a host consumed by another machine: no providerID, no Event, no Node write', async () => {
    const { hostUid } = await createMachine(env.mgmt.client, { name: 'g-notmine', host: 'h-g-notmine' });
    const host = (await env.mgmt.client.get(R.BareMetalHost, NS, 'h-g-notmine'))!;
    await env.mgmt.client.replace(R.BareMetalHost, {
      ...host,
      spec: { ...host.spec, consumerRef: { ...host.spec!.consumerRef!, name: 'someone-else' } },
    });
    await createNode(env.workload.client, 'h-g-notmine', { uid: hostUid });
    log.reset();
    expect(await reconcile(env.ctx(), msg('g-notmine'))).toMatchObject({ kind: 'done' });
    expect(log.writes).toEqual([]);
    expect((await getMachine(env.mgmt.client, 'g-notmine')).spec.providerID).toBeUndefined();
    expect(await nodeProviderID(env.workload.client, 'h-g-notmine')).toBeUndefined();
  });

  it('failed by selectHost after an error of its own: still left alone (the failure is not ours to clear)', async () => {
    const { hostUid } = await createMachine(env.mgmt.client, { name: 'g-lost', host: 'h-g-lost' });
    // An earlier pass of this step recorded an error of its own on KubernetesNodeReady ...
    await createNode(env.workload.client, 'h-g-lost-a', { uid: hostUid });
    await createNode(env.workload.client, 'h-g-lost-b', { uid: hostUid });
    expect(await reconcile(env.ctx(), msg('g-lost'))).toMatchObject({
      kind: 'terminal',
      reason: 'MultipleNodesWithUUIDLabel',
    });
    // ... then selectHost failed the machine: its host was taken by another consumer.
    const fresh = await getMachine(env.mgmt.client, 'g-lost');
    await env.mgmt.client.replaceStatus(envelopeOf(R.Metal3Machine), {
      ...fresh,
      status: {
        ...fresh.status,
        failureReason: 'UpdateError',
        failureMessage:
          'BareMetalHost metal3/h-g-lost associated with this machine was released or taken by another consumer',
      },
    });
    await env.workload.client.delete(R.Node, undefined, 'h-g-lost-b');
    log.reset();
    expect(await reconcile(env.ctx(), msg('g-lost'))).toMatchObject({ kind: 'done' });
    expect(log.writes).toEqual([]);
    expect((await getMachine(env.mgmt.client, 'g-lost')).spec.providerID).toBeUndefined();
    expect(await nodeProviderID(env.workload.client, 'h-g-lost-a')).toBeUndefined();
  });

  it('the paused annotation on the Cluster: left alone, nothing written; resolved once it is removed', async () => {
    const { hostUid } = await createMachine(env.mgmt.client, { name: 'g-paused', host: 'h-g-paused' });
    await createNode(env.workload.client, 'h-g-paused', { uid: hostUid });
    const setPaused = async (paused: boolean) => {
      const c = (await env.mgmt.client.get(R.Cluster, NS, CLUSTER))!;
      const { 'cluster.x-k8s.io/paused': _drop, ...rest } = c.metadata.annotations ?? {};
      c.metadata.annotations = paused ? { ...rest, 'cluster.x-k8s.io/paused': '' } : rest;
      await env.mgmt.client.replace(R.Cluster, c);
    };
    await setPaused(true);
    try {
      log.reset();
      expect(await reconcile(env.ctx(), msg('g-paused'))).toMatchObject({ kind: 'done', note: 'paused' });
      expect(log.writes).toEqual([]);
    } finally {
      await setPaused(false);
    }
    expect((await reconcile(env.ctx(), msg('g-paused'))).kind).toBe('done');
    expect(await nodeProviderID(env.workload.client, 'h-g-paused')).toBe(idOf('g-paused', 'h-g-paused'));
  });

  it('a message of another kind or a vanished machine is a no-op', async () => {
    log.reset();
    expect(await reconcile(env.ctx(), { ...msg('x'), kind: 'BareMetalHost' })).toMatchObject({
      kind: 'done',
    });
    expect(await reconcile(env.ctx(), msg('does-not-exist'))).toMatchObject({ kind: 'done' });
    expect(log.writes).toEqual([]);
  });

  it('a Node whose providerID is set is never changed (the server also refuses it)', async () => {
    const { hostUid } = await createMachine(env.mgmt.client, { name: 'g-imm', host: 'h-g-imm' });
    await createNode(env.workload.client, 'h-g-imm', { uid: hostUid });
    expect((await reconcile(env.ctx(), msg('g-imm'))).kind).toBe('done');
    await expect(
      env.workload.client.patch(R.Node, undefined, 'h-g-imm', { spec: { providerID: 'metal3://x/y/z' } }),
    ).rejects.toMatchObject({ code: 422 });
    // Re-running with the machine edited to another ID: mismatch error, the Node keeps its ID.
    await env.mgmt.client.patch(R.Metal3Machine, NS, 'g-imm', {
      spec: { providerID: `metal3://${hostUid}` },
    });
    log.reset();
    expect(await reconcile(env.ctx(), msg('g-imm'))).toMatchObject({
      kind: 'terminal',
      reason: 'ProviderIDMismatch',
    });
    expect(await nodeProviderID(env.workload.client, 'h-g-imm')).toBe(idOf('g-imm', 'h-g-imm'));
    expect(nodeWrites()).toEqual([]);
  });

  it('the Node patch fails (503) after the machine was written: the retry patches once, rewrites nothing else', async () => {
    const { hostUid } = await createMachine(env.mgmt.client, { name: 'g-503', host: 'h-g-503' });
    await createNode(env.workload.client, 'h-g-503', { uid: hostUid });
    const undo = env.workload.server.faults.failNext(
      { verb: 'patch', resource: 'nodes', name: 'h-g-503' },
      503,
    );
    try {
      await expect(reconcile(env.ctx(), msg('g-503'))).rejects.toMatchObject({ code: 503 });
    } finally {
      undo();
    }
    const m = await getMachine(env.mgmt.client, 'g-503');
    expect(m.spec.providerID).toBe(idOf('g-503', 'h-g-503'));
    expect(m.status?.ready).toBe(true);
    expect(await nodeProviderID(env.workload.client, 'h-g-503')).toBeUndefined();
    log.reset();
    expect((await reconcile(env.ctx(), msg('g-503'))).kind).toBe('done');
    // The machine was fully written before the failed patch: the retry only patches the Node.
    expect(log.writes.map((w) => `${w.server} ${w.verb} ${w.resource} ${w.status}`)).toEqual([
      'workload patch nodes 200',
    ]);
    expect(await nodeProviderID(env.workload.client, 'h-g-503')).toBe(idOf('g-503', 'h-g-503'));
  });
});

/**
 * The Node patch is guarded by what the decision read (ADR 026): another writer between our list
 * and our patch changes the Node first, through the test's own client (the kubelet, an operator).
 */
describe('the Node patch holds only while what the decision read holds', () => {
  /** A context whose workload client runs `before` (another writer) ahead of each Node patch. */
  function racing(before: () => Promise<unknown>) {
    const workload = testClient(env.workload.kubeconfig);
    const patch = workload.patch.bind(workload);
    workload.patch = (async (...a: Parameters<typeof patch>) => {
      if (a[0] === R.Node) await before();
      return patch(...a);
    }) as typeof workload.patch;
    return { ...env.ctx(), workloadClient: async () => workload };
  }
  const nodeWriteLines = () => nodeWrites().map((w) => `${w.verb} ${w.resource} ${w.status}`);

  it("the kubelet's status post between the list and the patch: one patch, no conflict", async () => {
    const { hostUid } = await createMachine(env.mgmt.client, { name: 'g-kubelet', host: 'h-g-kubelet' });
    await createNode(env.workload.client, 'h-g-kubelet', { uid: hostUid });
    log.reset();
    let posted = false;
    const ctx = racing(async () => {
      if (posted) return;
      posted = true;
      await env.workload.client.patch(
        R.Node,
        undefined,
        'h-g-kubelet',
        { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }] } },
        'merge',
        { status: true },
      );
    });
    expect(await reconcile(ctx, msg('g-kubelet'))).toMatchObject({ kind: 'done' });
    expect(nodeWriteLines()).toEqual(['patch nodes/status 200', 'patch nodes 200']);
    expect(await nodeProviderID(env.workload.client, 'h-g-kubelet')).toBe(idOf('g-kubelet', 'h-g-kubelet'));
  });

  it('a Node whose uuid label changed is not patched (decided again: no Node of ours yet)', async () => {
    const { hostUid } = await createMachine(env.mgmt.client, { name: 'g-label', host: 'h-g-label' });
    await createNode(env.workload.client, 'h-g-label', { uid: hostUid });
    log.reset();
    const ctx = racing(() =>
      env.workload.client.patch(R.Node, undefined, 'h-g-label', {
        metadata: { labels: { 'metal3.io/uuid': 'another-host' } },
      }),
    );
    const r = await reconcile(ctx, msg('g-label'));
    expect(r).toMatchObject({
      kind: 'requeue',
      reason: expect.stringContaining('waiting for a Node labelled'),
    });
    expect(nodeWriteLines()).toEqual(['patch nodes 200', 'patch nodes 422']);
    expect(await nodeProviderID(env.workload.client, 'h-g-label')).toBeUndefined();
  });

  it('a Node deleted and created again under its name (another uid) is not patched', async () => {
    const { hostUid } = await createMachine(env.mgmt.client, { name: 'g-uid', host: 'h-g-uid' });
    await createNode(env.workload.client, 'h-g-uid', { uid: hostUid });
    log.reset();
    // Before every attempt: every decision saw a Node that is gone by the time it patches.
    const ctx = racing(async () => {
      await env.workload.client.delete(R.Node, undefined, 'h-g-uid');
      await createNode(env.workload.client, 'h-g-uid', { uid: hostUid });
    });
    await expect(reconcile(ctx, msg('g-uid'))).rejects.toThrow(
      /Node h-g-uid changed since it was read; not patched/,
    );
    const ours = nodeWrites().filter((w) => w.verb === 'patch');
    expect(ours.map((w) => w.status)).toEqual([422, 422, 422]);
    expect(await nodeProviderID(env.workload.client, 'h-g-uid')).toBeUndefined();
  });

  it('a providerID another writer set meanwhile is kept, and the machine fails on it', async () => {
    const { hostUid } = await createMachine(env.mgmt.client, { name: 'g-foreign', host: 'h-g-foreign' });
    await createNode(env.workload.client, 'h-g-foreign', { uid: hostUid });
    log.reset();
    const theirs = 'metal3://elsewhere/h-other/m-other';
    let set = false;
    const ctx = racing(async () => {
      if (set) return;
      set = true;
      await env.workload.client.patch(R.Node, undefined, 'h-g-foreign', { spec: { providerID: theirs } });
    });
    const r = await reconcile(ctx, msg('g-foreign'));
    expect(r).toMatchObject({ kind: 'terminal', reason: 'ForeignProviderID' });
    expect(nodeWriteLines()).toEqual(['patch nodes 200', 'patch nodes 422']);
    expect(await nodeProviderID(env.workload.client, 'h-g-foreign')).toBe(theirs);
  });
});

describe('Nodes are read by label, not all of them (ADR 008)', () => {
  it('two label-selected lists return only the Nodes that concern the machine', async () => {
    const { hostUid } = await createMachine(env.mgmt.client, { name: 'narrow', host: 'h-narrow' });
    for (let i = 0; i < 30; i++) await createNode(env.workload.client, `unrelated-${i}`);
    await createNode(env.workload.client, 'h-narrow', { uid: hostUid });
    const workload = testClient(env.workload.kubeconfig);
    const ctx = { ...env.ctx(), workloadClient: async () => workload };
    expect(await reconcile(ctx, msg('narrow'))).toMatchObject({ kind: 'done' });
    expect(await nodeProviderID(env.workload.client, 'h-narrow')).toBe(idOf('narrow', 'h-narrow'));
    expect(workload.stats.byResource.get('list nodes')).toBe(2);
    // The machine's Node, returned by both lists; none of the 30 others.
    expect(workload.stats.listedItems).toBe(2);
  });

  it('with a cloud provider every Node is read (the provider may have given our ID to any of them)', async () => {
    await env.mgmt.client.patch(R.Metal3Cluster, NS, CLUSTER, { spec: { noCloudProvider: false } });
    try {
      await createMachine(env.mgmt.client, { name: 'cloud-all', host: 'h-cloud-all' });
      const workload = testClient(env.workload.kubeconfig);
      const ctx = { ...env.ctx(), workloadClient: async () => workload };
      const all = (await env.workload.client.list(R.Node)).items.length;
      expect(all).toBeGreaterThan(30);
      await reconcile(ctx, msg('cloud-all'));
      expect(workload.stats.byResource.get('list nodes')).toBe(1);
      expect(workload.stats.listedItems).toBe(all);
    } finally {
      await env.mgmt.client.patch(R.Metal3Cluster, NS, CLUSTER, { spec: { noCloudProvider: true } });
    }
  });
});
