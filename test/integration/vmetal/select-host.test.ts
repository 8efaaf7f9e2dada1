/**
 * selectHost for the vMetal kinds against the embedded API server: a NodeProvider makes its
 * NodeTypes and its network's IPPool; a NodeClaim goes from Pending to a claimed host (consumerRef,
 * node-claim label, original network annotations saved in the same write) and an IPClaim that
 * allocateIndex serves; bad input is Failed naming the field with nothing written to any host;
 * no eligible host leaves it Pending with counts per reason; concurrent claims over overlapping
 * node types and CAPM3 claims racing for the same hosts never give a host two holders.
 */
import { describe, expect, it } from 'vitest';
import { R } from '../../../shared/api/resources.ts';
import {
  NODE_CLAIM_LABEL,
  VMETAL_CLAIM_UID_LABEL,
  VMETAL_ORIGINAL_ANNOTATIONS,
} from '../../../shared/api/wellknown.ts';
import { CANDIDATE_PAGE_SIZE } from '../../../shared/hosts/candidates.ts';
import { findOrClaimHost } from '../../../shared/hosts/claim.ts';
import { hostConsumerRef, metal3MachineConsumer } from '../../../shared/hosts/consumer.ts';
import { KubeClient } from '../../../shared/kube/client.ts';
import { compileHostSelector } from '../../../shared/selectors/labels.ts';
import { ipClaimName, parseNetwork, poolNameFor } from '../../../shared/vmetal/network.ts';
import { clusterContext } from '../../helpers/context.ts';
import {
  createHosts,
  HOST_NS,
  nodeClaim,
  PROJECT_NS,
  provider,
  runAllocate,
  runSelectHost,
  useVmetalCluster,
} from './setup.ts';

const tc = useVmetalCluster();
const freshCtx = () => clusterContext(KubeClient.fromString(tc.kubeconfig));

describe('selectHost for a NodeProvider', () => {
  it('makes its NodeTypes (owned), one IPPool for its network, and says which fields it does not act on', async () => {
    const a = provider('prov-a', {}, 'prov-a');
    a.spec.metal3!.deploy = { dhcp: { enabled: true } };
    const net = a.spec.properties!['metal3.vcluster.com/network-cidr']!.replace(/\.1\/24$/, '');
    await tc.client.create(R.NodeProvider, a);
    expect(await runSelectHost(tc.ctx, R.NodeProvider, 'prov-a', undefined)).toMatchObject({ kind: 'done' });
    const p = (await tc.client.get(R.NodeProvider, undefined, 'prov-a'))!;
    const types = (await tc.client.list(R.NodeType)).items.filter((t) => t.spec.providerRef === 'prov-a');
    expect(types.map((t) => t.metadata.name).sort()).toEqual(['prov-a-any', 'prov-a-rack-a']);
    for (const t of types)
      expect(t.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'NodeProvider', uid: p.metadata.uid });
    const pool = poolNameFor('prov-a', parseNetwork(a.spec.properties!)!);
    const pools = (await tc.client.list(R.IPPool, HOST_NS)).items.filter(
      (x) => x.metadata.ownerReferences?.[0]?.uid === p.metadata.uid,
    );
    expect(pools.map((x) => x.metadata.name)).toEqual([pool]);
    expect(pools[0]!.spec).toMatchObject({
      gateway: `${net}.1`,
      prefix: 24,
      pools: [{ start: `${net}.10`, end: `${net}.60` }],
    });
    expect(p.status?.phase).toBe('Available');
    const notSupported = p.status?.conditions?.find((c) => c.type === 'NotSupported');
    expect(notSupported).toMatchObject({ status: 'True' });
    expect(notSupported?.message).toContain('spec.metal3.deploy');
  });

  it('reports a NodeType name another provider uses and a network overlapping another pool, making neither', async () => {
    await tc.client.create(R.IPPool, {
      metadata: { name: 'capm3-pool', namespace: HOST_NS },
      spec: { namePrefix: 'capm3', pools: [{ start: '10.50.0.20', end: '10.50.0.30' }], prefix: 24 },
    });
    await tc.client.create(R.NodeProvider, provider('prov-b', {}, 'prov-b'));
    await runSelectHost(tc.ctx, R.NodeProvider, 'prov-b', undefined);
    const clash = provider('prov-c', {
      properties: {
        ...provider('prov-c').spec.properties,
        'metal3.vcluster.com/network-cidr': '10.50.0.1/24',
        'metal3.vcluster.com/network-ip-range': '10.50.0.25-10.50.0.40',
      },
    });
    clash.spec.metal3!.nodeTypes = [{ name: 'prov-b-any' }];
    await tc.client.create(R.NodeProvider, clash);
    await runSelectHost(tc.ctx, R.NodeProvider, 'prov-c', undefined);
    const c = (await tc.client.get(R.NodeProvider, undefined, 'prov-c'))!;
    expect(c.status?.phase).toBe('Failed');
    const cond = (type: string) => c.status?.conditions?.find((x) => x.type === type);
    expect(cond('NodeTypesSynced')).toMatchObject({ status: 'False', reason: 'NodeTypeConflict' });
    expect(cond('NodeTypesSynced')?.message).toContain('NodeType prov-b-any belongs to NodeProvider prov-b');
    expect(cond('NetworksReady')?.message).toContain(`overlaps IPPool ${HOST_NS}/capm3-pool`);
    expect((await tc.client.get(R.NodeType, undefined, 'prov-b-any'))!.spec.providerRef).toBe('prov-b');
    const pools = (await tc.client.list(R.IPPool, HOST_NS)).items;
    expect(pools.filter((x) => x.metadata.ownerReferences?.[0]?.name === 'prov-c')).toEqual([]);
  });
});

describe('selectHost for a NodeClaim', () => {
  it('a later pass keeps the phase of the later steps, and an input edited bad after the claim is a Warning, not Failed', async () => {
    await createHosts(tc.client, 'later', 1, () => ({ pool: 'later' }));
    await tc.client.create(R.NodeProvider, provider('prov-later', {}, 'later'));
    await runSelectHost(tc.ctx, R.NodeProvider, 'prov-later', undefined);
    await tc.client.create(R.NodeClaim, nodeClaim('c-later', 'prov-later-any'));
    expect(await runSelectHost(tc.ctx, R.NodeClaim, 'c-later', PROJECT_NS)).toMatchObject({ kind: 'done' });
    // resolveProviderID's Available, as it writes it.
    const scheduled = (await tc.client.get(R.NodeClaim, PROJECT_NS, 'c-later'))!;
    await tc.client.replaceStatus(R.NodeClaim, {
      ...scheduled,
      status: { ...scheduled.status, phase: 'Available', nodeName: 'c-later' },
    });

    expect(await runSelectHost(tc.ctx, R.NodeClaim, 'c-later', PROJECT_NS)).toMatchObject({ kind: 'done' });
    expect((await tc.client.get(R.NodeClaim, PROJECT_NS, 'c-later'))!.status).toMatchObject({
      phase: 'Available',
      host: 'later-0000',
    });

    const edited = (await tc.client.get(R.NodeClaim, PROJECT_NS, 'c-later'))!;
    await tc.client.replace(R.NodeClaim, {
      ...edited,
      spec: { ...edited.spec, properties: { 'metal3.vcluster.com/network-cidr': 'not-a-cidr' } },
    });
    expect(await runSelectHost(tc.ctx, R.NodeClaim, 'c-later', PROJECT_NS)).toMatchObject({
      kind: 'terminal',
    });
    const after = (await tc.client.get(R.NodeClaim, PROJECT_NS, 'c-later'))!;
    expect(after.status).toMatchObject({ phase: 'Available', host: 'later-0000' });
    expect((await tc.client.get(R.BareMetalHost, HOST_NS, 'later-0000'))!.spec?.consumerRef?.name).toBe(
      'c-later',
    );
    const warnings = (await tc.client.list(R.Event, PROJECT_NS)).items.filter(
      (e) => e.involvedObject?.name === 'c-later' && e.type === 'Warning',
    );
    expect(warnings.map((e) => e.message).join('\n')).toMatch(/network-cidr/);
  });

  it('claims a host (consumerRef, node-claim label, original annotations saved), then an IPClaim allocateIndex serves', async () => {
    await createHosts(tc.client, 'one', 1, () => ({ pool: 'one' }));
    const before = (await tc.client.get(R.BareMetalHost, HOST_NS, 'one-0000'))!;
    await tc.client.replace(R.BareMetalHost, {
      ...before,
      metadata: { ...before.metadata, annotations: { 'metal3.vcluster.com/dns-servers': '9.9.9.9' } },
    });
    const one = provider('prov-one', {}, 'one');
    const net = one.spec.properties!['metal3.vcluster.com/network-cidr']!.replace(/\.1\/24$/, '');
    await tc.client.create(R.NodeProvider, one);
    await runSelectHost(tc.ctx, R.NodeProvider, 'prov-one', undefined);
    const claim = await tc.client.create(R.NodeClaim, nodeClaim('c-one', 'prov-one-any'));

    expect(await runSelectHost(tc.ctx, R.NodeClaim, 'c-one', PROJECT_NS)).toMatchObject({ kind: 'done' });
    const host = (await tc.client.get(R.BareMetalHost, HOST_NS, 'one-0000'))!;
    expect(host.spec?.consumerRef).toEqual({
      apiVersion: 'vmetal.metal3fn.io/v1alpha1',
      kind: 'NodeClaim',
      name: 'c-one',
      namespace: PROJECT_NS,
      uid: claim.metadata.uid,
    });
    expect(host.metadata.labels?.[NODE_CLAIM_LABEL]).toBe(claim.metadata.uid);
    expect(JSON.parse(host.metadata.annotations![VMETAL_ORIGINAL_ANNOTATIONS]!)).toEqual({
      'metal3.vcluster.com/ip-address': null,
      'metal3.vcluster.com/gateway': null,
      'metal3.vcluster.com/dns-servers': '9.9.9.9',
      'metal3.vcluster.com/ntp-servers': null,
    });
    const got = (await tc.client.get(R.NodeClaim, PROJECT_NS, 'c-one'))!;
    expect(got.metadata.finalizers).toContain('nodeclaim.vmetal.metal3fn.io');
    expect(got.status).toMatchObject({
      phase: 'Pending',
      host: 'one-0000',
      hostNamespace: HOST_NS,
      nodeType: 'prov-one-any',
    });
    expect(got.status?.properties?.['vcluster.com/node-type']).toBe('prov-one-any');
    expect(got.status?.conditions?.find((c) => c.type === 'Scheduled')).toMatchObject({ status: 'True' });

    const ipc = ipClaimName({ namespace: PROJECT_NS, name: 'c-one' });
    const ipClaim = (await tc.client.get(R.IPClaim, HOST_NS, ipc))!;
    expect(ipClaim.metadata.labels?.[VMETAL_CLAIM_UID_LABEL]).toBe(claim.metadata.uid);
    expect(ipClaim.metadata.ownerReferences ?? []).toEqual([]);
    await runAllocate(tc.ctx, ipc);
    const allocated = (await tc.client.get(R.IPClaim, HOST_NS, ipc))!;
    const address = await tc.client.get(R.IPAddress, HOST_NS, allocated.status!.address!.name);
    expect(address?.spec).toMatchObject({ address: `${net}.10`, prefix: 24, gateway: `${net}.1` });

    // A second pass changes nothing: the same host, the same IPClaim.
    const rv = host.metadata.resourceVersion;
    await runSelectHost(tc.ctx, R.NodeClaim, 'c-one', PROJECT_NS);
    expect((await tc.client.get(R.BareMetalHost, HOST_NS, 'one-0000'))!.metadata.resourceVersion).toBe(rv);
  });

  it('is Failed naming the field on bad input, with nothing written to any host', async () => {
    await createHosts(tc.client, 'bad', 2, () => ({ pool: 'bad' }));
    await tc.client.create(R.NodeProvider, provider('prov-bad', {}, 'bad'));
    await runSelectHost(tc.ctx, R.NodeProvider, 'prov-bad', undefined);
    const hostsBefore = (await tc.client.list(R.BareMetalHost, HOST_NS)).items.map(
      (h) => h.metadata.resourceVersion,
    );
    const cases: [string, Record<string, string>, string][] = [
      [
        'bad-cidr',
        { 'metal3.vcluster.com/network-cidr': '10.40.0.1/33' },
        'properties["metal3.vcluster.com/network-cidr"]',
      ],
      [
        'bad-label',
        { 'topology.kubernetes.io/zone': 'not a label value' },
        'properties["topology.kubernetes.io/zone"]',
      ],
      [
        'bad-checksum',
        { 'metal3.vcluster.com/image-checksum-type': 'crc32' },
        'properties["metal3.vcluster.com/image-checksum-type"]',
      ],
    ];
    for (const [name, props, field] of cases) {
      await tc.client.create(R.NodeClaim, nodeClaim(name, 'prov-bad-any', props));
      expect(await runSelectHost(tc.ctx, R.NodeClaim, name, PROJECT_NS)).toMatchObject({ kind: 'terminal' });
      const got = (await tc.client.get(R.NodeClaim, PROJECT_NS, name))!;
      expect(got.status?.phase, name).toBe('Failed');
      expect(got.status?.message, name).toContain(field);
    }
    const taints = nodeClaim('bad-taint', 'prov-bad-any');
    taints.spec.taints = [{ key: 'a', effect: 'Sometimes' }];
    await tc.client.create(R.NodeClaim, taints);
    await runSelectHost(tc.ctx, R.NodeClaim, 'bad-taint', PROJECT_NS);
    expect((await tc.client.get(R.NodeClaim, PROJECT_NS, 'bad-taint'))!.status?.message).toContain(
      'spec.taints[0]',
    );
    const hostsAfter = (await tc.client.list(R.BareMetalHost, HOST_NS)).items.map(
      (h) => h.metadata.resourceVersion,
    );
    expect(hostsAfter).toEqual(hostsBefore);
    expect(
      (await tc.client.list(R.IPClaim, HOST_NS)).items.filter((c) => c.metadata.name!.startsWith('bad-')),
    ).toEqual([]);
  });

  it('waits (Pending, Scheduled=False) for a missing SSHKey and for an eligible host, with counts per reason', async () => {
    await createHosts(tc.client, 'busy', 3, () => ({ pool: 'busy' }));
    const paused = (await tc.client.get(R.BareMetalHost, HOST_NS, 'busy-0001'))!;
    await tc.client.replace(R.BareMetalHost, {
      ...paused,
      metadata: { ...paused.metadata, annotations: { 'baremetalhost.metal3.io/paused': '' } },
    });
    await tc.client.create(R.NodeProvider, provider('prov-busy', {}, 'busy'));
    await runSelectHost(tc.ctx, R.NodeProvider, 'prov-busy', undefined);
    await tc.client.create(
      R.NodeClaim,
      nodeClaim('nokey', 'prov-busy-any', { 'vcluster.com/ssh-keys': 'missing-key' }),
    );
    expect(await runSelectHost(tc.ctx, R.NodeClaim, 'nokey', PROJECT_NS)).toMatchObject({ kind: 'requeue' });
    expect((await tc.client.get(R.NodeClaim, PROJECT_NS, 'nokey'))!.status).toMatchObject({
      phase: 'Pending',
      reason: 'SSHKeyNotFound',
    });

    for (const n of ['w1', 'w2']) {
      await tc.client.create(R.NodeClaim, nodeClaim(n, 'prov-busy-any'));
      await runSelectHost(tc.ctx, R.NodeClaim, n, PROJECT_NS);
    }
    await tc.client.create(R.NodeClaim, nodeClaim('w3', 'prov-busy-any'));
    expect(await runSelectHost(tc.ctx, R.NodeClaim, 'w3', PROJECT_NS)).toMatchObject({ kind: 'requeue' });
    const w3 = (await tc.client.get(R.NodeClaim, PROJECT_NS, 'w3'))!;
    expect(w3.status).toMatchObject({ phase: 'Pending', reason: 'NoEligibleHost' });
    // The candidate list never returns held hosts (ADR 022): the message counts what it read.
    expect(w3.status?.message).toContain('among the 1 BareMetalHost in namespace');
    expect(w3.status?.message).toContain('not held or booked for node reuse: 1 is paused (busy-0001)');
    expect(w3.status?.conditions?.find((c) => c.type === 'Scheduled')).toMatchObject({
      status: 'False',
      reason: 'NoEligibleHost',
    });
  });

  it('reads a bounded number of hosts with 200 present: one candidate page to claim, none listed once scheduled', async () => {
    await createHosts(tc.client, 'many', 200, () => ({ pool: 'many' }));
    await tc.client.create(R.NodeProvider, provider('prov-many', {}, 'many'));
    await runSelectHost(tc.ctx, R.NodeProvider, 'prov-many', undefined);
    for (const n of ['many-1', 'many-2', 'many-3']) {
      await tc.client.create(R.NodeClaim, nodeClaim(n, 'prov-many-any'));
      const first = freshCtx();
      expect(await runSelectHost(first, R.NodeClaim, n, PROJECT_NS)).toMatchObject({ kind: 'done' });
      // The consumer-label list (nothing held yet) and one page of candidates.
      expect(first.client.stats.listedByResource.get('baremetalhosts')).toBeLessThanOrEqual(
        CANDIDATE_PAGE_SIZE,
      );
      const claim = (await tc.client.get(R.NodeClaim, PROJECT_NS, n))!;
      expect(claim.status?.host).toMatch(/^many-/);
      // A later pass reads its host by name and lists no host.
      const again = freshCtx();
      expect(await runSelectHost(again, R.NodeClaim, n, PROJECT_NS)).toMatchObject({ kind: 'done' });
      expect(again.client.stats.listedByResource.get('baremetalhosts') ?? 0).toBe(0);
      expect(again.client.stats.byResource.get('update baremetalhosts')).toBeUndefined();
      expect((await tc.client.get(R.NodeClaim, PROJECT_NS, n))!.status?.host).toBe(claim.status?.host);
    }
  });

  it('never gives a host two holders: concurrent claims over overlapping types and CAPM3 claims racing', async () => {
    const N = 12;
    await createHosts(tc.client, 'race', N, (i) => ({ pool: 'race', ...(i % 2 === 0 ? { rack: 'a' } : {}) }));
    await tc.client.create(R.NodeProvider, provider('prov-race', {}, 'race'));
    await runSelectHost(tc.ctx, R.NodeProvider, 'prov-race', undefined);
    const claims = Array.from({ length: 8 }, (_, i) => `r${i}`);
    for (const [i, n] of claims.entries())
      await tc.client.create(R.NodeClaim, nodeClaim(n, i % 2 === 0 ? 'prov-race-rack-a' : 'prov-race-any'));
    const machines = Array.from({ length: 8 }, (_, i) =>
      metal3MachineConsumer({ name: `race-m${i}`, namespace: HOST_NS }, 'race-cluster'),
    );
    const outcomes = await Promise.all([
      ...claims.map((n) => runSelectHost(freshCtx(), R.NodeClaim, n, PROJECT_NS)),
      ...machines.map((consumer) =>
        findOrClaimHost({
          client: freshCtx().client,
          consumer,
          selector: compileHostSelector({ matchLabels: { pool: 'race' } }),
          reuseValues: [],
        }),
      ),
    ]);
    const hosts = (await tc.client.list(R.BareMetalHost, HOST_NS)).items.filter(
      (h) => h.metadata.labels?.pool === 'race',
    );
    const holders = hosts.map((h) => hostConsumerRef(h)).filter((r) => r !== undefined);
    // Every host is held by at most one consumer (the one consumerRef), and no consumer holds two hosts.
    const keys = holders.map((r) => `${r!.kind}/${r!.namespace}/${r!.name}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(holders.length).toBe(N);
    // Each claim holds the host its status names (a claim that lost every race waits), of its type.
    let placed = 0;
    for (const [i, n] of claims.entries()) {
      const c = (await tc.client.get(R.NodeClaim, PROJECT_NS, n))!;
      if (!c.status?.host) {
        expect(c.status?.phase, n).toBe('Pending');
        continue;
      }
      placed++;
      const h = hosts.find((x) => x.metadata.name === c.status!.host)!;
      expect(hostConsumerRef(h)).toMatchObject({ kind: 'NodeClaim', name: n });
      if (i % 2 === 0) expect(h.metadata.labels?.rack).toBe('a');
    }
    expect(placed).toBeGreaterThanOrEqual(4);
    // Each machine told it claimed a host still holds it (no claim wrote over it).
    for (const [i, consumer] of machines.entries()) {
      const o = outcomes[claims.length + i] as Awaited<ReturnType<typeof findOrClaimHost>>;
      if (o.kind !== 'claimed') continue;
      const h = hosts.find((x) => x.metadata.name === o.host.metadata.name)!;
      expect(hostConsumerRef(h)).toMatchObject({ kind: 'Metal3Machine', name: consumer.name });
    }
  });
});
