/**
 * Transient API failures (injected by the embedded API server) on the data paths: the core throws
 * (the queue retries) or retries a 409 itself; the redelivery completes the work without a second
 * Metal3Data, IPAddress or Secret. Each test has its own template and machine.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { R } from '../../../shared/api/resources.ts';
import { KubeApiError } from '../../../shared/kube/errors.ts';
import { addressOf, allocate, createMachine, indexOf, NS, render, seedTemplate } from '../../helpers/data.ts';
import { useDataCluster } from './use-data-cluster.ts';

const tc = useDataCluster({ pools: true });
beforeEach(() => tc.server.faults.clear());

/** A template of the test's own (its own index space too), and one machine (with its claim) of it. */
async function machineOn(template: string, machine: string): Promise<void> {
  await tc.client.create(
    R.Metal3DataTemplate,
    seedTemplate(template, (spec) => {
      spec.templateReference = template;
    }),
  );
  await createMachine(tc.client, machine, template);
}

const dataOf = async (template: string) =>
  (await tc.client.list(R.Metal3Data, NS)).items.filter(
    (d) => (d.spec as { template?: { name?: string } }).template?.name === template,
  );

describe('transient failures', () => {
  it('a 500 on the Metal3Data create: thrown for the queue to retry; the retry allocates once', async () => {
    await machineOn('fl-create', 'f1');
    tc.server.faults.failNext({ verb: 'create', resource: 'metal3datas' }, 500);
    await expect(allocate(tc.ctx, R.Metal3DataClaim, 'f1')).rejects.toBeInstanceOf(KubeApiError);
    expect(await dataOf('fl-create')).toEqual([]);
    expect(await allocate(tc.ctx, R.Metal3DataClaim, 'f1')).toMatchObject({ kind: 'done' });
    expect(await indexOf(tc.client, 'f1')).toBe(0);
    expect(await dataOf('fl-create')).toHaveLength(1);
  });

  it('a crash after the create (503 on the template status patch): the retry reuses the Metal3Data', async () => {
    await machineOn('fl-patch', 'f2');
    tc.server.faults.failNext({ verb: 'patch', resource: 'metal3datatemplates/status' }, 503);
    await expect(allocate(tc.ctx, R.Metal3DataClaim, 'f2')).rejects.toBeInstanceOf(KubeApiError);
    expect((await dataOf('fl-patch')).map((d) => d.metadata.name)).toEqual(['fl-patch-0']);
    tc.server.log.reset();
    expect(await allocate(tc.ctx, R.Metal3DataClaim, 'f2')).toMatchObject({ kind: 'done' });
    expect(await indexOf(tc.client, 'f2')).toBe(0);
    expect(tc.server.log.count('create', 'metal3datas')).toBe(0);
    const t = (await tc.client.get(R.Metal3DataTemplate, NS, 'fl-patch'))!;
    expect((t.status as { indexes?: Record<string, string> }).indexes).toEqual({ '0': 'f2' });
  });

  it('a 409 on the claim status write is retried in place', async () => {
    await machineOn('fl-conflict', 'f3');
    tc.server.faults.failNext({ verb: 'update', resource: 'metal3dataclaims/status' }, 409);
    expect(await allocate(tc.ctx, R.Metal3DataClaim, 'f3')).toMatchObject({ kind: 'done' });
    expect((await tc.client.get(R.Metal3DataClaim, NS, 'f3'))?.status).toEqual({
      renderedData: { name: 'fl-conflict-0', namespace: NS },
    });
    expect(tc.server.faults.hits()).toEqual([1]);
  });

  it('a 500 on the IPAddress create and on a Secret create: retried deliveries finish with one of each, nothing twice', async () => {
    await machineOn('fl-render', 'f4');
    expect(await allocate(tc.ctx, R.Metal3DataClaim, 'f4')).toMatchObject({ kind: 'done' });
    expect((await render(tc.ctx, 'fl-render-0')).kind).toBe('requeue'); // its IPClaims wait for addresses
    tc.server.faults.failNext({ verb: 'create', resource: 'ipaddresses' }, 500);
    await expect(allocate(tc.ctx, R.IPClaim, 'fl-render-0-pool-1')).rejects.toBeInstanceOf(KubeApiError);
    expect(await addressOf(tc.client, 'fl-render-0-pool-1')).toBeUndefined();
    expect(await allocate(tc.ctx, R.IPClaim, 'fl-render-0-pool-1')).toMatchObject({ kind: 'done' });
    expect(await allocate(tc.ctx, R.IPClaim, 'fl-render-0-pool6-1')).toMatchObject({ kind: 'done' });
    const mine = (await tc.client.list(R.IPAddress, NS)).items.filter((a) =>
      (a.spec as { claim: { name: string } }).claim.name.startsWith('fl-render-0-'),
    );
    expect(mine).toHaveLength(2);
    tc.server.faults.failNext({ verb: 'create', resource: 'secrets' }, 500);
    await expect(render(tc.ctx, 'fl-render-0')).rejects.toBeInstanceOf(KubeApiError);
    expect(await tc.client.get(R.Secret, NS, 'f4-metadata-0')).toBeUndefined();
    const creates = tc.server.log.count('create', 'secrets');
    expect(await render(tc.ctx, 'fl-render-0')).toMatchObject({ kind: 'done' });
    expect(tc.server.log.count('create', 'secrets') - creates).toBe(2);
    expect(await tc.client.get(R.Secret, NS, 'f4-networkdata-0')).toBeDefined();
    expect((await tc.client.get(R.Metal3Data, NS, 'fl-render-0'))?.status).toEqual({
      ready: true,
      error: false,
    });
  });
});
