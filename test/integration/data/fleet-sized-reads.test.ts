/**
 * An IPPool's and a Metal3DataTemplate's status hold an entry per machine (CAPM3's shapes), so a
 * GET of either grows with the fleet: renderData reads the template only to render, never the pool
 * (only a pool it waits for, and then its metadata alone), keeps the template's spec by uid in its
 * shared reads (ADR 034), and a rendered Metal3Data's later passes read neither (issue 21: at
 * 10,000 machines these reads were most of the bytes a machine cost).
 */
import { describe, expect, it } from 'vitest';
import { R } from '../../../shared/api/resources.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { SharedReads } from '../../../shared/kube/shared-reads.ts';
import { testClient } from '../../helpers/cluster.ts';
import {
  allocate,
  createMachine,
  makeCtx,
  NS,
  render,
  secretText,
  seedTemplate,
} from '../../helpers/data.ts';
import { useDataCluster } from './use-data-cluster.ts';

const tc = useDataCluster({ pools: true, template: seedTemplate('nodepool-1') });

const gets = (c: KubeClient, plural: string) => c.stats.byResource.get(`get ${plural}`) ?? 0;

describe('renderData reads of objects that grow with the fleet', () => {
  it('no pool read once addresses are given; a rendered Metal3Data re-checks its Secrets only; a lost Secret is rendered again', async () => {
    await createMachine(tc.client, 'worker-a', 'nodepool-1');
    expect(await allocate(tc.ctx, R.Metal3DataClaim, 'worker-a')).toMatchObject({ kind: 'done' });
    // First pass: the IPClaims are made and wait; each pool they wait for is read as a Table row (exists).
    const first = testClient(tc.kubeconfig);
    expect(await render(makeCtx(first), 'nodepool-1-0')).toMatchObject({ kind: 'requeue' });
    expect(gets(first, 'ippools')).toBe(2);
    for (const c of ['nodepool-1-0-pool-1', 'nodepool-1-0-pool6-1'])
      expect(await allocate(tc.ctx, R.IPClaim, c)).toMatchObject({ kind: 'done' });

    // The render: the template once, no pool.
    const rendering = testClient(tc.kubeconfig);
    expect(await render(makeCtx(rendering), 'nodepool-1-0')).toMatchObject({ kind: 'done' });
    expect(gets(rendering, 'metal3datatemplates')).toBe(1);
    expect(gets(rendering, 'ippools')).toBe(0);
    const metaText = secretText(await tc.client.get(R.Secret, NS, 'worker-a-metadata-0'), 'metaData');
    expect(metaText).toContain('index: "0"');

    // Rendered: its Secrets are checked, nothing else is read, nothing written.
    const again = testClient(tc.kubeconfig);
    expect(await render(makeCtx(again), 'nodepool-1-0')).toMatchObject({ kind: 'done' });
    expect(gets(again, 'metal3datatemplates')).toBe(0);
    expect(gets(again, 'ippools')).toBe(0);
    expect(gets(again, 'secrets')).toBe(2);
    expect(again.stats.writes).toBe(0);

    // A Secret deleted: the full pass reads the template and writes the same bytes back.
    await tc.client.delete(R.Secret, NS, 'worker-a-metadata-0');
    const mended = testClient(tc.kubeconfig);
    expect(await render(makeCtx(mended), 'nodepool-1-0')).toMatchObject({ kind: 'done' });
    expect(gets(mended, 'metal3datatemplates')).toBe(1);
    expect(secretText(await tc.client.get(R.Secret, NS, 'worker-a-metadata-0'), 'metaData')).toBe(metaText);
  });

  it("a function's shared reads keep the template's spec by uid: two renders read it once, with each machine's own index", async () => {
    const client = testClient(tc.kubeconfig);
    const shared = new SharedReads(client, { maxAgeMs: 0 });
    const ctx = { ...makeCtx(client), reads: shared.forMessage(Date.now()) };
    const rendered: { data: string; index: number; secret: string }[] = [];
    for (const machine of ['worker-b', 'worker-c']) {
      await createMachine(tc.client, machine, 'nodepool-1');
      expect(await allocate(tc.ctx, R.Metal3DataClaim, machine)).toMatchObject({ kind: 'done' });
      const data = (await tc.client.get(R.Metal3DataClaim, NS, machine))!.status!.renderedData!.name!;
      expect(await render(ctx, data)).toMatchObject({ kind: 'requeue' });
      for (const pool of ['pool-1', 'pool6-1'])
        expect(await allocate(tc.ctx, R.IPClaim, `${data}-${pool}`)).toMatchObject({ kind: 'done' });
      expect(await render(ctx, data)).toMatchObject({ kind: 'done' });
      const index = (await tc.client.get(R.Metal3Data, NS, data))!.spec.index;
      rendered.push({ data, index, secret: `${machine}-metadata-${index}` });
    }
    expect(gets(client, 'metal3datatemplates')).toBe(1);
    expect(new Set(rendered.map((r) => r.index)).size).toBe(2);
    for (const r of rendered)
      expect(secretText(await tc.client.get(R.Secret, NS, r.secret), 'metaData')).toContain(
        `index: "${r.index}"`,
      );
    // Without shared reads (a replay by hand, the tests' contexts) every render reads it.
    await tc.client.delete(R.Secret, NS, rendered[1]!.secret);
    const fresh = testClient(tc.kubeconfig);
    expect(await render(makeCtx(fresh), rendered[1]!.data)).toMatchObject({ kind: 'done' });
    expect(gets(fresh, 'metal3datatemplates')).toBe(1);
  });
});
