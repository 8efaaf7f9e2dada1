/**
 * deprovision of a NodeClaim and its tenant Node against the embedded API servers: the Node is
 * cordoned (a resourceVersion-checked update), drained and deleted before the host is released; a
 * tenant cluster that is gone does not hold the release up. The embedded server serves no Pods
 * (ADR 018, "Drain"): the eviction and PodDisruptionBudget paths are covered by
 * test/unit/vmetal/drain.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { reconcile as deprovision } from '../../../functions/deprovision/core.ts';
import { R } from '../../../shared/api/resources.ts';
import { FINALIZER } from '../../../shared/api/wellknown.ts';
import { messageFor } from '../../helpers/messages.ts';
import { type ClaimHostOptions, claimWithHost, useJoinEnv } from './join-setup.ts';
import { HOST_NS, PROJECT_NS, useVmetalCluster } from './setup.ts';

const tc = useVmetalCluster();
const env = useJoinEnv(() => tc.client);
const run = (name: string) => deprovision(env.ctx, messageFor('deprovision', R.NodeClaim, name, PROJECT_NS));

/** A claim of ours (finalizer) holding a provisioned host, then deleted. */
async function deletingClaim(name: string, over: Partial<ClaimHostOptions> = {}) {
  const { claim, host } = await claimWithHost(tc.client, env.opts(name, over));
  await tc.client.patch(R.NodeClaim, PROJECT_NS, name, {
    metadata: { finalizers: [FINALIZER.nodeClaim], resourceVersion: undefined },
  });
  await tc.client.delete(R.NodeClaim, PROJECT_NS, name);
  return { claim, host };
}

describe('deprovision: the tenant Node of a NodeClaim', () => {
  it('cordons the Node, then deletes it, then releases the host (waiting for it to deprovision)', async () => {
    await env.tenant.admin.create(R.Node, {
      metadata: { name: 'd-node', labels: { 'vcluster.com/node-type': 'gpu' } },
    });
    const { host } = await deletingClaim('d-node');
    const before = env.tenant.server.log.entries.length;

    const res = await run('d-node');
    expect(res).toMatchObject({ kind: 'requeue', reason: expect.stringContaining('to deprovision') });
    expect(await env.tenant.admin.get(R.Node, undefined, 'd-node')).toBeUndefined();
    const writes = env.tenant.server.log.entries
      .slice(before)
      .filter((e) => e.resource === 'nodes' && e.name === 'd-node' && e.method !== 'GET')
      .map((e) => [e.method, e.status]);
    expect(writes).toEqual([
      ['PUT', 200], // spec.unschedulable: true, conditioned on the resourceVersion read
      ['DELETE', 200],
    ]);
    const cleared = (await tc.client.get(R.BareMetalHost, HOST_NS, host))!;
    expect(cleared.spec?.online).toBe(false);
  });

  it('a Node already gone, or a tenant cluster that is gone, does not hold the release up', async () => {
    await deletingClaim('d-nonode');
    expect(await run('d-nonode')).toMatchObject({
      kind: 'requeue',
      reason: expect.stringContaining('to deprovision'),
    });
    await deletingClaim('d-gone', { vClusterRef: 'tenant-gone' });
    expect(await run('d-gone')).toMatchObject({
      kind: 'requeue',
      reason: expect.stringContaining('to deprovision'),
    });
  });
});
