/** EmbeddedClusters: one API server per (namespace, name), started once, found, stopped. */
import { afterEach, describe, expect, it } from 'vitest';
import { EmbeddedClusters } from '../../../infra/local/workload/embedded.ts';
import { R } from '../../../shared/api/resources.ts';

let clusters: EmbeddedClusters | undefined;
afterEach(async () => {
  await clusters?.stopAll();
});

describe('EmbeddedClusters', () => {
  it('starts one API server per key, once, however many ask at the same time', async () => {
    const prepared: string[] = [];
    clusters = new EmbeddedClusters({ prepare: (c) => void prepared.push(c.key) });
    const [a1, a2, b] = await Promise.all([
      clusters.ensure('ns-1', 'c'),
      clusters.ensure('ns-1', 'c'),
      clusters.ensure('ns-2', 'c'),
    ]);
    expect(a1).toBe(a2);
    expect(a1.server.url).not.toBe(b.server.url);
    expect(prepared.sort()).toEqual(['ns-1/c', 'ns-2/c']);
    expect(clusters.lookup('ns-1', 'c')).toBe(a1);
    expect(clusters.lookup('ns-3', 'c')).toBeUndefined();
    expect(
      clusters
        .list()
        .map((c) => c.key)
        .sort(),
    ).toEqual(['ns-1/c', 'ns-2/c']);
    // Separate clusters: a Node in one is not in the other.
    await a1.admin.create(R.Node, { metadata: { name: 'n' } });
    expect((await b.admin.list(R.Node)).items).toEqual([]);
  });

  it('tells every listener of the clusters running and of those started later', async () => {
    clusters = new EmbeddedClusters();
    await clusters.ensure('ns', 'early');
    const seen: string[] = [];
    const off = clusters.onStarted((c) => seen.push(c.key));
    await clusters.ensure('ns', 'late');
    off();
    await clusters.ensure('ns', 'after-unsubscribe');
    expect(seen).toEqual(['ns/early', 'ns/late']);
  });

  it('stops one cluster (its port closes) and then all, refusing new ones', async () => {
    clusters = new EmbeddedClusters();
    const a = await clusters.ensure('ns', 'a');
    await clusters.ensure('ns', 'b');
    await clusters.stop('ns', 'a');
    expect(clusters.lookup('ns', 'a')).toBeUndefined();
    await expect(fetch(`${a.server.url}/api/v1/nodes`)).rejects.toThrow();
    await clusters.stopAll();
    expect(clusters.list()).toEqual([]);
    await expect(clusters.ensure('ns', 'c')).rejects.toThrow('the embedded workload clusters are stopped');
  });

  it('does not keep a cluster whose preparation failed', async () => {
    clusters = new EmbeddedClusters({
      prepare: () => {
        throw new Error('roles refused');
      },
    });
    await expect(clusters.ensure('ns', 'x')).rejects.toThrow('roles refused');
    expect(clusters.lookup('ns', 'x')).toBeUndefined();
  });
});
