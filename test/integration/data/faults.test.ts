/**
 * Transient API failures (injected by the embedded API server) on the data paths: the core throws
 * (the queue retries) or retries a 409 itself; the redelivery completes the work without a second
 * Metal3Data, IPAddress or Secret.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { R } from '../../../shared/api/resources.ts';
import { KubeApiError } from '../../../shared/kube/errors.ts';
import { allocate, createMachine, NS, render, seedTemplate } from '../../helpers/data.ts';
import { useDataCluster } from './use-data-cluster.ts';

const tc = useDataCluster({ pools: true, template: seedTemplate('flaky') });
beforeEach(() => tc.server.faults.clear());

const count = async (t: (typeof R)[keyof typeof R]) => (await tc.client.list(t, NS)).items.length;

describe('transient failures', () => {
  it('a 500 on the Metal3Data create: thrown for the queue to retry; the retry allocates once', async () => {
    await createMachine(tc.client, 'f1', 'flaky');
    tc.server.faults.failNext({ verb: 'create', resource: 'metal3datas' }, 500);
    await expect(allocate(tc.ctx, R.Metal3DataClaim, 'f1')).rejects.toBeInstanceOf(KubeApiError);
    expect(await count(R.Metal3Data)).toBe(0);
    expect(await allocate(tc.ctx, R.Metal3DataClaim, 'f1')).toEqual({ kind: 'done', note: 'index 0' });
    expect(await count(R.Metal3Data)).toBe(1);
  });

  it('a crash after the create (503 on the template status patch): the retry reuses the Metal3Data', async () => {
    await createMachine(tc.client, 'f2', 'flaky');
    tc.server.faults.failNext({ verb: 'patch', resource: 'metal3datatemplates/status' }, 503);
    await expect(allocate(tc.ctx, R.Metal3DataClaim, 'f2')).rejects.toBeInstanceOf(KubeApiError);
    expect(await count(R.Metal3Data)).toBe(2);
    tc.server.log.reset();
    expect(await allocate(tc.ctx, R.Metal3DataClaim, 'f2')).toEqual({ kind: 'done', note: 'index 1' });
    expect(tc.server.log.count('create', 'metal3datas')).toBe(0);
    const t = (await tc.client.get(R.Metal3DataTemplate, NS, 'flaky'))!;
    expect((t.status as any).indexes).toEqual({ '0': 'f1', '1': 'f2' });
  });

  it('a 409 on the claim status write is retried in place', async () => {
    await createMachine(tc.client, 'f3', 'flaky');
    tc.server.faults.failNext({ verb: 'update', resource: 'metal3dataclaims/status' }, 409);
    expect(await allocate(tc.ctx, R.Metal3DataClaim, 'f3')).toEqual({ kind: 'done', note: 'index 2' });
    expect((await tc.client.get(R.Metal3DataClaim, NS, 'f3'))?.status).toEqual({
      renderedData: { name: 'flaky-2', namespace: NS },
    });
  });

  it('a 500 on the IPAddress create and on a Secret create: retried deliveries finish with one of each, nothing twice', async () => {
    expect((await render(tc.ctx, 'flaky-0')).kind).toBe('requeue');
    tc.server.faults.failNext({ verb: 'create', resource: 'ipaddresses' }, 500);
    await expect(allocate(tc.ctx, R.IPClaim, 'flaky-0-pool-1')).rejects.toBeInstanceOf(KubeApiError);
    expect(await allocate(tc.ctx, R.IPClaim, 'flaky-0-pool-1')).toMatchObject({ kind: 'done' });
    expect(await allocate(tc.ctx, R.IPClaim, 'flaky-0-pool6-1')).toMatchObject({ kind: 'done' });
    expect(await count(R.IPAddress)).toBe(2);
    tc.server.faults.failNext({ verb: 'create', resource: 'secrets' }, 500);
    await expect(render(tc.ctx, 'flaky-0')).rejects.toBeInstanceOf(KubeApiError);
    expect(await tc.client.get(R.Secret, NS, 'f1-metadata-0')).toBeUndefined();
    const creates = tc.server.log.count('create', 'secrets');
    expect(await render(tc.ctx, 'flaky-0')).toEqual({ kind: 'done', note: 'rendered' });
    expect(tc.server.log.count('create', 'secrets') - creates).toBe(2);
    expect(await tc.client.get(R.Secret, NS, 'f1-networkdata-0')).toBeDefined();
    expect((await tc.client.get(R.Metal3Data, NS, 'flaky-0'))?.status).toEqual({ ready: true, error: false });
  });
});
