/**
 * NodeType capacity at scale (ADR 025) against the embedded API server, on a clock the test moves:
 * a count reads the hosts its selector matches; host changes within the window after a count list
 * nothing and requeue for one due time (one deduplication id); the requeue, once due, counts, and
 * the counts equal the hosts' after a burst of claims; a requeue a later count covered, or a count
 * older than the one written, changes nothing. A NodeProvider pass lists no NodeClaim unless it
 * waits for claims; a claim without typeRef reads a candidate page per type, not every host.
 */
import { describe, expect, it } from 'vitest';
import type { MessageEnvelope } from '../../../events/envelope.ts';
import { reconcile as selectHost } from '../../../functions/select-host/core.ts';
import { R } from '../../../shared/api/resources.ts';
import type { NodeType } from '../../../shared/api/vmetal/nodetype.ts';
import { NODE_TYPE_LABEL } from '../../../shared/api/wellknown.ts';
import { CANDIDATE_PAGE_SIZE } from '../../../shared/hosts/candidates.ts';
import { KubeClient } from '../../../shared/kube/client.ts';
import type { ReconcileContext } from '../../../shared/reconcile/context.ts';
import { clusterContext } from '../../helpers/context.ts';
import { messageFor } from '../../helpers/messages.ts';
import {
  createHosts,
  HOST_NS,
  nodeClaim,
  PROJECT_NS,
  provider,
  runSelectHost,
  useVmetalCluster,
} from './setup.ts';

const tc = useVmetalCluster();
const T0 = Date.parse('2026-12-07T00:00:00Z');
/** The window for a type of 3 hosts: the 5 s floor (ADR 025). */
const WINDOW_MS = 5_000;
const clock = { ms: T0 };
/** A fresh client (its own request counts) on the test's clock. */
const at = (): ReconcileContext => ({
  ...clusterContext(KubeClient.fromString(tc.kubeconfig)),
  now: () => new Date(clock.ms),
});
const hostsListed = (ctx: ReconcileContext) => ctx.client.stats.listedByResource.get('baremetalhosts') ?? 0;

/** Two disjoint types over `<p>` hosts: `<p>-a` takes rack a, `<p>-b` rack b. */
async function rackProvider(p: string, perRack: number) {
  await createHosts(tc.client, `${p}a`, perRack, () => ({ pool: p, rack: 'a' }));
  await createHosts(tc.client, `${p}b`, perRack, () => ({ pool: p, rack: 'b' }));
  const sel = (rack: string) => ({ selector: { matchLabels: { pool: p, rack } } });
  const base = provider(p, {}, p);
  base.spec.metal3!.nodeTypes = [
    { name: `${p}-a`, bareMetalHosts: sel('a') },
    { name: `${p}-b`, bareMetalHosts: sel('b') },
  ];
  await tc.client.create(R.NodeProvider, base);
  await runSelectHost(tc.ctx, R.NodeProvider, p, undefined);
}

/** What the relay sends a NodeType when a host's change moves its counts. */
const hostChange = (type: string, host: string): MessageEnvelope => ({
  ...messageFor('selectHost', R.NodeType, type, undefined),
  reason: 'related',
  cause: `BareMetalHost/${HOST_NS}/${host}@1`,
});
const countsOf = async (type: string) => (await tc.client.get(R.NodeType, undefined, type))!.status;

describe('NodeType capacity (coalesced counts)', () => {
  it('counts at once on its own event, then coalesces a burst of host changes into one count at the window end, exact', async () => {
    await rackProvider('cap', 3);
    clock.ms = T0;
    // Its own event (spec, creation, resync): counted at once.
    for (const t of ['cap-a', 'cap-b']) {
      expect(await selectHost(at(), messageFor('selectHost', R.NodeType, t, undefined))).toMatchObject({
        kind: 'done',
      });
      expect(await countsOf(t)).toMatchObject({
        phase: 'Ready',
        capacity: { total: 3, available: 3, claimed: 0, provisioned: 0 },
        countedAt: new Date(T0).toISOString(),
      });
    }

    // The burst: three claims take hosts (two of rack a, one of rack b), each change routed to its type.
    const claims = [
      ['k1', 'cap-a'],
      ['k2', 'cap-a'],
      ['k3', 'cap-b'],
    ] as const;
    const dues = new Set<number | undefined>();
    for (const [i, [name, type]] of claims.entries()) {
      clock.ms = T0 + 1000 * (i + 1);
      await tc.client.create(R.NodeClaim, nodeClaim(name, type));
      expect(await runSelectHost(at(), R.NodeClaim, name, PROJECT_NS)).toMatchObject({ kind: 'done' });
      const claim = (await tc.client.get(R.NodeClaim, PROJECT_NS, name))!;
      const host = (await tc.client.get(R.BareMetalHost, HOST_NS, claim.status!.host!))!;
      expect(host.metadata.labels?.[NODE_TYPE_LABEL]).toBe(type);
      const ctx = at();
      const res = await selectHost(ctx, hostChange(type, host.metadata.name!));
      expect(res).toMatchObject({ kind: 'requeue' });
      dues.add(res.kind === 'requeue' ? res.notBefore : undefined);
      expect(hostsListed(ctx)).toBe(0);
    }
    // Within the window the counts are stale: what they were before the burst.
    expect((await countsOf('cap-a'))?.capacity).toEqual({
      total: 3,
      available: 3,
      claimed: 0,
      provisioned: 0,
    });
    // Every pass of the window named the same due time: the window's end (one deduplication id).
    expect([...dues]).toEqual([T0 + WINDOW_MS]);

    // Due: the requeue counts, and the counts are the hosts' now.
    clock.ms = T0 + WINDOW_MS;
    const requeue = (type: string): MessageEnvelope => ({
      ...hostChange(type, 'x'),
      reason: 'requeue',
      attempt: 1,
      notBefore: T0 + WINDOW_MS,
    });
    for (const t of ['cap-a', 'cap-b']) {
      const ctx = at();
      expect(await selectHost(ctx, requeue(t))).toMatchObject({ kind: 'done' });
      expect(hostsListed(ctx)).toBe(3); // the type's own hosts, not the namespace's
    }
    expect((await countsOf('cap-a'))?.capacity).toEqual({
      total: 3,
      available: 1,
      claimed: 2,
      provisioned: 2,
    });
    expect((await countsOf('cap-b'))?.capacity).toEqual({
      total: 3,
      available: 2,
      claimed: 1,
      provisioned: 1,
    });
    expect((await countsOf('cap-a'))?.countedAt).toBe(new Date(T0 + WINDOW_MS).toISOString());

    // The same requeue delivered again (a transport without deduplication): covered, nothing read.
    clock.ms += 10;
    const dup = at();
    expect(await selectHost(dup, requeue('cap-a'))).toMatchObject({
      kind: 'done',
      note: expect.stringMatching(/counted since/),
    });
    expect(hostsListed(dup)).toBe(0);
  });

  it("a host claimed before hosts were labelled with the type gets the label on its claim's next pass, and counts as provisioned", async () => {
    await rackProvider('up', 1);
    await tc.client.create(R.NodeClaim, nodeClaim('u1', 'up-a'));
    await runSelectHost(tc.ctx, R.NodeClaim, 'u1', PROJECT_NS);
    // As an older version left it: held, labelled with the claim only.
    const held = (await tc.client.get(R.BareMetalHost, HOST_NS, 'upa-0000'))!;
    const { [NODE_TYPE_LABEL]: _t, ...older } = held.metadata.labels ?? {};
    await tc.client.replace(R.BareMetalHost, { ...held, metadata: { ...held.metadata, labels: older } });
    clock.ms = T0 + 120_000;
    await selectHost(at(), messageFor('selectHost', R.NodeType, 'up-a', undefined));
    expect((await countsOf('up-a'))?.capacity).toMatchObject({ claimed: 1, provisioned: 0 });

    expect(await runSelectHost(tc.ctx, R.NodeClaim, 'u1', PROJECT_NS)).toMatchObject({ kind: 'done' });
    const labelled = (await tc.client.get(R.BareMetalHost, HOST_NS, 'upa-0000'))!;
    expect(labelled.metadata.labels?.[NODE_TYPE_LABEL]).toBe('up-a');
    expect(labelled.spec?.consumerRef?.name).toBe('u1');
    await selectHost(at(), messageFor('selectHost', R.NodeType, 'up-a', undefined));
    expect((await countsOf('up-a'))?.capacity).toMatchObject({ claimed: 1, provisioned: 1 });
  });

  it('a count older than the one written meanwhile does not overwrite it', async () => {
    await rackProvider('old', 1);
    clock.ms = T0 + 60_000;
    await selectHost(at(), messageFor('selectHost', R.NodeType, 'old-a', undefined));
    const newer = (await tc.client.get(R.NodeType, undefined, 'old-a'))!;
    // A pass that started (its clock) before that count finishes after it, seeing the host held.
    const host = (await tc.client.get(R.BareMetalHost, HOST_NS, 'olda-0000'))!;
    await tc.client.replace(R.BareMetalHost, {
      ...host,
      spec: { ...host.spec, consumerRef: { apiVersion: 'v1', kind: 'ConfigMap', name: 'x', namespace: 'y' } },
    });
    clock.ms = T0 + 30_000;
    await selectHost(at(), messageFor('selectHost', R.NodeType, 'old-a', undefined));
    const after = (await tc.client.get(R.NodeType, undefined, 'old-a')) as NodeType;
    expect(after.status).toEqual(newer.status);
  });
});

describe('NodeProvider and typeless claims read no fleet', () => {
  it('a provider pass lists no NodeClaim; deleting, it scans claims until it can name who it waits for', async () => {
    await rackProvider('scan', 1);
    await tc.client.create(R.NodeClaim, nodeClaim('s1', 'scan-a'));
    await runSelectHost(tc.ctx, R.NodeClaim, 's1', PROJECT_NS);
    const pass = at();
    expect(await selectHost(pass, messageFor('selectHost', R.NodeProvider, 'scan', undefined))).toMatchObject(
      {
        kind: 'done',
      },
    );
    expect(pass.client.stats.listedByResource.get('nodeclaims') ?? 0).toBe(0);

    await tc.client.delete(R.NodeProvider, undefined, 'scan');
    expect(await runSelectHost(tc.ctx, R.NodeProvider, 'scan', undefined)).toMatchObject({ kind: 'requeue' });
    const p = (await tc.client.get(R.NodeProvider, undefined, 'scan'))!;
    expect(p.status).toMatchObject({
      phase: 'Pending',
      message: `deletion waits for NodeClaims: ${PROJECT_NS}/s1`,
    });
  });

  it('a claim without typeRef reads a candidate page per type, not every host', async () => {
    await rackProvider('many', 40);
    await tc.client.create(R.NodeClaim, {
      metadata: { name: 'typeless', namespace: PROJECT_NS },
      spec: {
        providerRef: 'many',
        vClusterRef: 'tenant-a',
        requirements: [{ key: 'vcluster.com/node-type', operator: 'In', values: ['many-b'] }],
      },
    });
    const ctx = at();
    expect(
      await selectHost(ctx, messageFor('selectHost', R.NodeClaim, 'typeless', PROJECT_NS)),
    ).toMatchObject({
      kind: 'done',
    });
    const claim = (await tc.client.get(R.NodeClaim, PROJECT_NS, 'typeless'))!;
    expect(claim.status).toMatchObject({ nodeType: 'many-b', host: expect.stringMatching(/^manyb-/) });
    // Two types probed (a page each) and the claim's own page: 80 hosts exist.
    expect(hostsListed(ctx)).toBeLessThanOrEqual(3 * CANDIDATE_PAGE_SIZE);
  });
});
