/**
 * The kube client's requests as client-go's Prometheus metrics on the long-running runtimes
 * (PipelineMetrics, served on /metrics by the worker, the relay and the HTTP runtime): counted by
 * verb, resource and HTTP status as the embedded API server answered them, timed by verb and
 * resource; a request that got no answer is code `<error>`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { R } from '../../../shared/api/resources.ts';
import { KubeClient } from '../../../shared/kube/client.ts';
import { isConflict } from '../../../shared/kube/errors.ts';
import { PipelineMetrics } from '../../../shared/runtimes/metrics.ts';
import { startTestCluster, type TestCluster } from '../../helpers/cluster.ts';
import { offlineContext } from '../../helpers/context.ts';

let tc: TestCluster;
beforeAll(async () => {
  tc = await startTestCluster({ crds: false });
});
afterAll(async () => {
  await tc?.stop();
});

/** The value of one series of the registry, by its labels. */
async function seriesValue(
  m: PipelineMetrics,
  name: string,
  labels: Record<string, string>,
): Promise<number | undefined> {
  const metric = (await m.registry.getMetricsAsJSON()).find((x) => x.name === name);
  const hit = metric?.values.find((v) =>
    Object.entries(labels).every(([k, val]) => String((v.labels as Record<string, unknown>)[k]) === val),
  );
  return hit?.value;
}

describe('rest_client_* on Prometheus', () => {
  it('counts each request by verb, resource and the status the server answered, and times it', async () => {
    const metrics = new PipelineMetrics();
    const client = KubeClient.fromString(tc.kubeconfig);
    metrics.observeKubeRequests(client.stats);
    tc.server.log.reset();

    expect(await client.get(R.ConfigMap, 'default', 'absent')).toBeUndefined();
    const cm = await client.create(R.ConfigMap, { metadata: { name: 'rest-metrics', namespace: 'default' } });
    await client.list(R.ConfigMap, 'default');
    const stale = { ...cm, metadata: { ...cm.metadata, resourceVersion: '1' } };
    await expect(client.replace(R.ConfigMap, stale)).rejects.toSatisfy(isConflict);

    const served = tc.server.log.entries.map((e) => `${e.verb} ${e.resource} ${e.status}`);
    expect(served).toEqual([
      'get configmaps 404',
      'create configmaps 201',
      'list configmaps 200',
      'update configmaps 409',
    ]);
    const count = (labels: Record<string, string>) =>
      seriesValue(metrics, 'rest_client_requests_total', { resource: 'configmaps', ...labels });
    expect(await count({ verb: 'get', code: '404' })).toBe(1);
    expect(await count({ verb: 'create', code: '201' })).toBe(1);
    expect(await count({ verb: 'list', code: '200' })).toBe(1);
    expect(await count({ verb: 'update', code: '409' })).toBe(1);
    const text = await metrics.registry.metrics();
    expect(text).toContain('rest_client_request_duration_seconds_count{verb="get",resource="configmaps"} 1');
    expect(text).toContain(
      'rest_client_request_duration_seconds_bucket{le="60",verb="create",resource="configmaps"} 1',
    );
  });

  it('a request that got no answer is code <error>', async () => {
    const metrics = new PipelineMetrics();
    // A client of a closed port.
    const { client } = offlineContext();
    metrics.observeKubeRequests(client.stats);
    await expect(client.get(R.ConfigMap, 'default', 'x')).rejects.toThrow();
    expect(
      await seriesValue(metrics, 'rest_client_requests_total', {
        verb: 'get',
        resource: 'configmaps',
        code: '<error>',
      }),
    ).toBe(1);
  });
});
