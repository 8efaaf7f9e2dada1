/**
 * The dev run's 409s by function, verb and resource: the functions and the relay share one
 * client's counters, so each 409 is put down to the function whose invocation made it (async
 * context), the relay otherwise — also while two functions run at once.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ConflictAccount } from '../../../infra/local/dev/conflicts.ts';
import { R } from '../../../shared/api/resources.ts';
import { isAlreadyExists } from '../../../shared/kube/errors.ts';
import { RequestStats } from '../../../shared/kube/stats.ts';
import { done } from '../../../shared/reconcile/result.ts';
import { startTestCluster, type TestCluster, testClient } from '../../helpers/cluster.ts';
import { clusterContext } from '../../helpers/context.ts';
import { envelope } from '../../helpers/messages.ts';

let cluster: TestCluster;
beforeAll(async () => {
  cluster = await startTestCluster({ crds: false });
});
afterAll(async () => cluster?.stop());

it('counts each 409 under the function that got it, the relay outside any', async () => {
  const stats = new RequestStats();
  const client = testClient(cluster.kubeconfig, { stats });
  const account = new ConflictAccount();
  const stop = account.observe(stats);
  const cm = (name: string) => ({ metadata: { name, namespace: 'default' } });
  await cluster.client.create(R.ConfigMap, cm('taken'));
  const createTaken = async () => {
    try {
      await client.create(R.ConfigMap, cm('taken'));
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
    }
  };
  // Waits for its turn so that the two functions' requests interleave.
  let release: () => void = () => {};
  const turn = new Promise<void>((r) => {
    release = r;
  });
  const fns = account.wrap({
    selectHost: async () => {
      await turn;
      await createTaken();
      return done();
    },
    renderData: async () => {
      await createTaken();
      release();
      await createTaken();
      return done();
    },
  });
  const ctx = clusterContext(client);
  await Promise.all([fns.selectHost!(ctx, envelope()), fns.renderData!(ctx, envelope())]);
  await createTaken();
  await client.get(R.ConfigMap, 'default', 'taken');
  // A guarded JSON patch whose test fails: a 422, counted apart from the 409s.
  await client
    .patch(R.ConfigMap, 'default', 'taken', [{ op: 'test', path: '/data', value: { x: '1' } }], 'json')
    .catch(() => undefined);
  stop();
  await createTaken();

  // Largest first; the get (200) and the 409 after stop() are not counted.
  expect(Object.entries(account.byKey())).toEqual([
    ['renderData create configmaps', 2],
    ['relay create configmaps', 1],
    ['selectHost create configmaps', 1],
  ]);
  expect(account.refusedByKey()).toEqual({ 'relay patch configmaps': 1 });
});
