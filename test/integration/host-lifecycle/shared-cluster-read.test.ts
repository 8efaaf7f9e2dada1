/**
 * Shared reads of the Cluster in selectHost (ADR 024): a pass woken by a change of its Cluster sees
 * that change, however recent the answer another pass shares. Seen in a 10-cluster run: 12
 * machines stayed "waiting for Cluster infrastructure" after it was ready, woken within a second
 * of a shared "not ready".
 */
import { expect, it } from 'vitest';
import { createSampleHosts } from '../../../infra/local/sim/bmo-hosts.ts';
import { R } from '../../../shared/api/resources.ts';
import { HOST_PAUSED_ANNOTATION } from '../../../shared/api/wellknown.ts';
import { optimisticUpdate } from '../../../shared/kube/optimistic.ts';
import { SharedReads } from '../../../shared/kube/shared-reads.ts';
import { createCluster, createMachinePair, NS, selectHost } from '../../helpers/hosts.ts';
import { useHostCluster } from './use-host-cluster.ts';

const tc = useHostCluster();

/** One function's shared reads, with a window far longer than the test and no clock skew. */
const sharedReads = () => new SharedReads(tc.client, { maxAgeMs: 600_000, clockSkewMs: 0 });

/** A machine of its own Cluster `name`, over one host of its own. */
async function machineOfCluster(name: string, infrastructureReady: boolean) {
  const cluster = await createCluster(tc.client, { name, infrastructureReady });
  await createSampleHosts(tc.client, NS, 1, { prefix: `${name}-h`, labels: () => ({ pool: name }) });
  await createMachinePair(tc.client, `${name}-m`, {
    cluster: name,
    m3mSpec: { hostSelector: { matchLabels: { pool: name } } },
  });
  return cluster;
}

const annotation = async (m3m: string): Promise<string | undefined> =>
  (await tc.client.get(R.Metal3Machine, NS, m3m))?.metadata.annotations?.['metal3.io/BareMetalHost'];

it('a machine woken by its Cluster becoming ready associates, with an older answer in the window', async () => {
  const cluster = await machineOfCluster('slow-infra', false);
  const shared = sharedReads();
  const pass = () => selectHost({ ...tc.freshCtx(), reads: shared.forMessage(Date.now()) }, 'slow-infra-m');

  expect((await pass()).kind).toBe('done');
  expect(await annotation('slow-infra-m')).toBeUndefined();

  cluster.status = { infrastructureReady: true };
  await tc.client.replaceStatus(R.Cluster, cluster);
  expect((await pass()).kind).toBe('done');
  expect(await annotation('slow-infra-m')).toBe(`${NS}/slow-infra-h-0000`);
});

it('a machine woken by its Cluster being paused pauses its host, with an unpaused answer in the window', async () => {
  await machineOfCluster('to-pause', true);
  const shared = sharedReads();
  const pass = (observedAt: number) =>
    selectHost({ ...tc.freshCtx(), reads: shared.forMessage(observedAt) }, 'to-pause-m');
  expect((await pass(Date.now())).kind).toBe('done');
  expect(await annotation('to-pause-m')).toBe(`${NS}/to-pause-h-0000`);

  await optimisticUpdate(tc.client, R.Cluster, NS, 'to-pause', (c) => {
    c.spec = { ...c.spec, paused: true };
  });
  // The relay observed the pause after it was written; the unpaused answer is older than that.
  await pass(Date.now());
  const host = await tc.client.get(R.BareMetalHost, NS, 'to-pause-h-0000');
  expect(Object.hasOwn(host?.metadata.annotations ?? {}, HOST_PAUSED_ANNOTATION)).toBe(true);
});
