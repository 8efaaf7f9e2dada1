/**
 * The relay watches Nodes in each workload cluster: started when a Cluster and its
 * `<cluster>-kubeconfig` Secret exist, stopped when the Cluster goes; a Node carrying a host's
 * uid reaches resolveProviderID for the host's consumer machine.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Relay, startRelay } from '../../../functions/relay/relay.ts';
import { envelopeOf, R } from '../../../shared/api/resources.ts';
import { ensureQueues } from '../../../shared/queue/ensure.ts';
import type { RoutedMessage } from '../../../shared/queue/message.ts';
import { startTestCluster, type TestCluster } from '../../helpers/cluster.ts';
import { startSqs } from '../../helpers/sqs.ts';
import { until } from '../../helpers/wait.ts';

const NS = 'metal3';
let mgmt: TestCluster;
let workload: TestCluster;
let local: Awaited<ReturnType<typeof startSqs>>;
let relay: Relay;
const sent: RoutedMessage[] = [];

beforeAll(async () => {
  mgmt = await startTestCluster();
  workload = await startTestCluster({ crds: false });
  local = await startSqs();
  const queues = await ensureQueues(local.sqs, { prefix: 'wl-' });
  relay = await startRelay({
    client: mgmt.client,
    sqs: local.sqs,
    queues,
    watch: { resyncMs: 0, silenceMs: 5_000 },
    onMessages: (msgs) => sent.push(...msgs),
  });
});
afterAll(async () => {
  await relay?.stop();
  local?.sqs.destroy();
  await local?.stop();
  await workload?.stop();
  await mgmt?.stop();
});

describe('relay: workload clusters', () => {
  it('starts a Node watch per Cluster with a kubeconfig Secret, routes Nodes, and stops when the Cluster goes', async () => {
    await mgmt.client.create(envelopeOf(R.Metal3Machine), {
      metadata: { name: 'm-0', namespace: NS },
      spec: {},
    });
    const host = await mgmt.client.create(R.BareMetalHost, {
      metadata: { name: 'host-0', namespace: NS },
      spec: {
        consumerRef: {
          apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
          kind: 'Metal3Machine',
          name: 'm-0',
          namespace: NS,
        },
      },
    });
    await mgmt.client.create(R.Cluster, { metadata: { name: 'c1', namespace: NS }, spec: {} });
    expect(relay.workloadClusters()).toEqual([]); // no kubeconfig yet
    await mgmt.client.create(R.Secret, {
      metadata: { name: 'c1-kubeconfig', namespace: NS },
      type: 'cluster.x-k8s.io/secret',
      data: { value: Buffer.from(workload.kubeconfig).toString('base64') },
    });
    await until(() => relay.workloadClusters().includes(`${NS}/c1`));

    const uid = (host.metadata as { uid?: string }).uid!;
    await workload.client.create(R.Node, {
      metadata: { name: 'node-a', labels: { 'metal3.io/uuid': uid } },
      spec: {},
    });
    const msg = await until(() =>
      sent.find((m) => m.msg.function === 'resolveProviderID' && m.msg.cause?.startsWith(`${NS}/c1:Node/`)),
    );
    expect(msg.msg).toMatchObject({ kind: 'Metal3Machine', namespace: NS, name: 'm-0', reason: 'related' });

    // Secrets are cached without their data; no object with its managedFields (the server keeps them).
    expect(relay.cache.get('Secret', NS, 'c1-kubeconfig')).not.toHaveProperty('data');
    const secret = await mgmt.client.get(R.Secret, NS, 'c1-kubeconfig');
    const bmh = await mgmt.client.get(R.BareMetalHost, NS, 'host-0');
    expect(secret?.metadata.managedFields).not.toEqual([]);
    expect(bmh?.metadata.managedFields).not.toEqual([]);
    expect(secret?.metadata).toHaveProperty('managedFields');
    expect(bmh?.metadata).toHaveProperty('managedFields');
    expect(relay.cache.get('Secret', NS, 'c1-kubeconfig')?.metadata).not.toHaveProperty('managedFields');
    expect(relay.cache.get('BareMetalHost', NS, 'host-0')?.metadata).not.toHaveProperty('managedFields');

    await mgmt.client.delete(R.Cluster, NS, 'c1');
    await until(() => relay.workloadClusters().length === 0);
  });

  it('watches a vMetal tenant cluster while a NodeClaim names it, and routes its Nodes to the claim', async () => {
    const ns = 'p-alpha';
    await mgmt.client.create(R.Namespace, { metadata: { name: ns } });
    await mgmt.client.create(R.Secret, {
      metadata: { name: 'alpha-kubeconfig', namespace: ns },
      data: { value: Buffer.from(workload.kubeconfig).toString('base64') },
    });
    // The kubeconfig alone (no Cluster, no claim) is no tenant to watch.
    await until(() => relay.cache.get('Secret', ns, 'alpha-kubeconfig'));
    expect(relay.workloadClusters()).not.toContain(`${ns}/alpha`);
    await mgmt.client.create(R.NodeClaim, {
      metadata: { name: 'alpha-small-x', namespace: ns },
      spec: { vClusterRef: 'alpha', typeRef: 'small' },
    });
    await until(() => relay.workloadClusters().includes(`${ns}/alpha`));
    await workload.client.create(R.Node, { metadata: { name: 'alpha-small-x' }, spec: {} });
    const msg = await until(() =>
      sent.find(
        (m) => m.msg.function === 'resolveProviderID' && m.msg.cause?.startsWith(`${ns}/alpha:Node/`),
      ),
    );
    expect(msg.msg).toMatchObject({
      kind: 'NodeClaim',
      namespace: ns,
      name: 'alpha-small-x',
      reason: 'related',
    });
    await mgmt.client.delete(R.NodeClaim, ns, 'alpha-small-x');
    await until(() => !relay.workloadClusters().includes(`${ns}/alpha`));
  });

  it('re-sends every object as a resync on a period, from its store: no LIST, the watch stays (ADR 023)', async () => {
    const seen: RoutedMessage[] = [];
    const queues = await ensureQueues(local.sqs, { prefix: 'wl2-' });
    const r = await startRelay({
      client: mgmt.client,
      sqs: local.sqs,
      queues,
      workloads: false,
      watch: { resyncMs: 300, jitter: 0.1 },
      onMessages: (msgs) => seen.push(...msgs),
    });
    try {
      await until(() =>
        seen.some(
          (m) => m.msg.reason === 'resync' && m.msg.name === 'm-0' && m.msg.function === 'selectHost',
        ),
      );
      const w = r.watchers.get('Metal3Machine')!;
      await until(() => w.counts.resyncs >= 2);
      expect(w.relistsByCause).toEqual({ start: 1, gone: 0, error: 0 });
      expect(w.counts.watches).toBe(1);
    } finally {
      await r.stop();
    }
  });

  it('stamps every message with when the relay observed its event', async () => {
    const t0 = Date.now();
    await mgmt.client.create(envelopeOf(R.Metal3Machine), {
      metadata: { name: 'm-observed', namespace: NS },
      spec: {},
    });
    const msg = await until(() => sent.find((r) => r.msg.name === 'm-observed')?.msg);
    expect(msg.observedAt).toBeGreaterThanOrEqual(t0);
    expect(msg.observedAt).toBeLessThanOrEqual(Date.now());
  });
});
