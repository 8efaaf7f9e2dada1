/**
 * A machine waiting for its Cluster's infrastructure, with the Cluster read through shared reads
 * (ADR 024): the pass that the Cluster's readiness event wakes must see it ready, even when another
 * pass's answer from before the event is still within the sharing window. Seen in a 10-cluster
 * run: 12 machines stayed "waiting for Cluster infrastructure" after it was ready.
 */
import { expect, it } from 'vitest';
import { createSampleHosts } from '../../../infra/local/sim/bmo-hosts.ts';
import { R } from '../../../shared/api/resources.ts';
import { SharedReads } from '../../../shared/kube/shared-reads.ts';
import { createCluster, createMachinePair, NS, selectHost } from '../../helpers/hosts.ts';
import { useHostCluster } from './use-host-cluster.ts';

const tc = useHostCluster();

it('a machine woken by its Cluster becoming ready associates, with an older shared answer in the window', async () => {
  const cluster = await createCluster(tc.client, { name: 'slow-infra', infrastructureReady: false });
  await createSampleHosts(tc.client, NS, 1, { prefix: 'slow-h', labels: () => ({ pool: 'slow-infra' }) });
  await createMachinePair(tc.client, 'slow-m', {
    cluster: 'slow-infra',
    m3mSpec: { hostSelector: { matchLabels: { pool: 'slow-infra' } } },
  });
  // One function's shared reads, with a window far longer than the test.
  const ctx = { ...tc.freshCtx(), reads: new SharedReads(tc.client, { maxAgeMs: 600_000 }) };
  const annotation = async (): Promise<string | undefined> =>
    (await tc.client.get(R.Metal3Machine, NS, 'slow-m'))?.metadata.annotations?.['metal3.io/BareMetalHost'];

  expect((await selectHost(ctx, 'slow-m')).kind).toBe('done');
  expect(await annotation()).toBeUndefined();

  cluster.status = { infrastructureReady: true };
  await tc.client.replaceStatus(R.Cluster, cluster);
  expect((await selectHost(ctx, 'slow-m')).kind).toBe('done');
  expect(await annotation()).toBe(`${NS}/slow-h-0000`);
});
