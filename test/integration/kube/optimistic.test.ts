/**
 * The one optimistic-update helper every write of existing state goes through, against the
 * embedded API server: conditioned on resourceVersion, re-read and re-applied on 409, bounded,
 * no write when nothing changed, and `gone` for objects deleted or replaced under us.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { recordOf } from '../../../shared/api/json.ts';
import { R } from '../../../shared/api/resources.ts';
import { ConflictError } from '../../../shared/kube/errors.ts';
import { optimisticUpdate, SKIP } from '../../../shared/kube/optimistic.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { startTestCluster, type TestCluster, testClient } from '../../helpers/cluster.ts';

let cluster: TestCluster;
const ns = 'default';
let n = 0;
let name: string;

beforeAll(async () => {
  cluster = await startTestCluster({ crds: false, faults: true });
});
afterAll(async () => cluster?.stop());
beforeEach(async () => {
  cluster.server.faults.clear();
  name = `cm-${n++}`;
  await cluster.client.create(R.ConfigMap, { metadata: { name, namespace: ns }, data: { count: '0' } });
});

const managedEntries = (o: KubeObject) =>
  (Array.isArray(o.metadata.managedFields) ? o.metadata.managedFields : []).map((e) => ({
    manager: recordOf(e).manager,
    fieldsV1: recordOf(recordOf(e).fieldsV1),
  }));
const data = (o: KubeObject) => (o as { data?: Record<string, string> }).data ?? {};
const bump = (o: KubeObject) => {
  const cm = o as { data?: Record<string, string> };
  cm.data = { ...cm.data, count: String(Number(cm.data?.count ?? 0) + 1) };
};

describe('optimisticUpdate', () => {
  it('writes the mutation conditioned on the resourceVersion it read', async () => {
    const before = (await cluster.client.get(R.ConfigMap, ns, name))!;
    const r = await optimisticUpdate(cluster.client, R.ConfigMap, ns, name, bump);
    expect(r.outcome).toBe('updated');
    const after = (await cluster.client.get(R.ConfigMap, ns, name))!;
    expect(data(after).count).toBe('1');
    expect(after.metadata.resourceVersion).not.toBe(before.metadata.resourceVersion);
  });

  it('writes nothing when the mutation changes nothing', async () => {
    cluster.server.log.reset();
    const r = await optimisticUpdate(cluster.client, R.ConfigMap, ns, name, () => {});
    expect(r.outcome).toBe('unchanged');
    expect(cluster.server.log.entries.filter((e) => e.verb !== 'get')).toEqual([]);
  });

  it('writes nothing when the mutator says SKIP', async () => {
    cluster.server.log.reset();
    const r = await optimisticUpdate(cluster.client, R.ConfigMap, ns, name, (o) => {
      bump(o);
      return SKIP;
    });
    expect(r.outcome).toBe('skipped');
    expect(cluster.server.log.entries.filter((e) => e.verb !== 'get')).toEqual([]);
  });

  it('re-reads and re-applies the mutation after a concurrent writer won', async () => {
    // Our read, then another writer's change, then our write from that read: the race, in order.
    const ours = (await cluster.client.get(R.ConfigMap, ns, name))!;
    await cluster.client.patch(R.ConfigMap, ns, name, { data: { other: 'x' } });
    cluster.server.log.reset();
    let calls = 0;
    const r = await optimisticUpdate(
      cluster.client,
      R.ConfigMap,
      ns,
      name,
      (o) => {
        calls++;
        bump(o);
      },
      { current: ours },
    );
    expect(r.outcome).toBe('updated');
    // The server refused the write from the stale read (409); the helper re-read and re-applied.
    expect(cluster.server.log.entries.map((e) => `${e.verb} ${e.status}`)).toEqual([
      'update 409',
      'get 200',
      'update 200',
    ]);
    expect(calls).toBe(2);
    const after = (await cluster.client.get(R.ConfigMap, ns, name))!;
    expect(data(after)).toEqual({ count: '1', other: 'x' });
  });

  it('retries injected conflicts with fresh reads, then gives up with the ConflictError', async () => {
    cluster.server.faults.failNext({ verb: 'update', resource: 'configmaps', name }, 409, 2);
    const ok = await optimisticUpdate(cluster.client, R.ConfigMap, ns, name, bump, { retries: 2 });
    expect(ok.outcome).toBe('updated');
    expect(data((await cluster.client.get(R.ConfigMap, ns, name))!).count).toBe('1');

    cluster.server.faults.failNext({ verb: 'update', resource: 'configmaps', name }, 409, 3);
    await expect(
      optimisticUpdate(cluster.client, R.ConfigMap, ns, name, bump, { retries: 2 }),
    ).rejects.toBeInstanceOf(ConflictError);
    expect(data((await cluster.client.get(R.ConfigMap, ns, name))!).count).toBe('1');
  });

  it('reports gone for a missing object, a replaced one (uid) and one deleted between read and write', async () => {
    expect((await optimisticUpdate(cluster.client, R.ConfigMap, ns, 'does-not-exist', bump)).outcome).toBe(
      'gone',
    );
    expect(
      (await optimisticUpdate(cluster.client, R.ConfigMap, ns, name, bump, { expectedUid: 'another-uid' }))
        .outcome,
    ).toBe('gone');
    const current = (await cluster.client.get(R.ConfigMap, ns, name))!;
    await cluster.client.delete(R.ConfigMap, ns, name);
    expect((await optimisticUpdate(cluster.client, R.ConfigMap, ns, name, bump, { current })).outcome).toBe(
      'gone',
    );
  });

  it('sends no managedFields (the server keeps the live ones: every manager stays, ours is added)', async () => {
    // 200 keys of another manager: a managedFields record as large as the data it describes.
    const wide = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`key-${i}`, 'v']));
    const other = testClient(cluster.kubeconfig, { fieldManager: 'other' });
    await other.patch(R.ConfigMap, ns, name, { data: wide }, 'merge');
    const before = (await cluster.client.get(R.ConfigMap, ns, name))!;
    const managedBytes = JSON.stringify(before.metadata.managedFields).length;
    expect(managedBytes).toBeGreaterThan(2_000);
    cluster.server.log.reset();
    expect((await optimisticUpdate(cluster.client, R.ConfigMap, ns, name, bump)).outcome).toBe('updated');
    const [put] = cluster.server.log.entries.filter((e) => e.verb === 'update');
    const { managedFields: _m, ...meta } = before.metadata;
    // The body is the object without its managedFields (plus the one value bumped).
    expect(put!.requestBytes).toBeLessThan(JSON.stringify({ ...before, metadata: meta }).length + 64);
    const after = (await cluster.client.get(R.ConfigMap, ns, name))!;
    const entries = managedEntries(after);
    expect(entries.map((m) => m.manager).sort()).toEqual(['metal3-functions', 'other']);
    // The other manager's 200 keys are still its own.
    const others = entries.find((m) => m.manager === 'other');
    expect(Object.keys(recordOf(others?.fieldsV1?.['f:data']))).toHaveLength(200);
    expect(data(after).count).toBe('1');
  });
});
