/**
 * resolveProviderID on NodeClaims against the embedded API server and a tenant API server: Pending
 * while the host provisions, waiting (requeue, reason) while the tenant cannot be reached,
 * Available with Joined=True and nodeName once the kubelet simulator's join registered Node
 * `<claim>` with the node-type label; a Node without it stays Pending; a host in error is Failed.
 */
import { describe, expect, it } from 'vitest';
import { reconcile } from '../../../functions/resolve-provider-id/core.ts';
import { R } from '../../../shared/api/resources.ts';
import type { NodeClaim } from '../../../shared/api/vmetal/nodeclaim.ts';
import { messageFor } from '../../helpers/messages.ts';
import { eventually } from '../../helpers/wait.ts';
import { claimWithHost, setHostState, useJoinEnv } from './join-setup.ts';
import { HOST_NS, PROJECT_NS, useVmetalCluster } from './setup.ts';

const tc = useVmetalCluster();
const env = useJoinEnv(() => tc.client, { sim: true });
const run = (name: string) =>
  reconcile(env.ctx, messageFor('resolveProviderID', R.NodeClaim, name, PROJECT_NS));
const claimOf = async (name: string): Promise<NodeClaim> =>
  (await tc.client.get(R.NodeClaim, PROJECT_NS, name))!;
const cond = (c: NodeClaim, type: string) => c.status?.conditions?.find((x) => x.type === type);

describe('resolveProviderID for NodeClaims', () => {
  it('Pending while the host provisions; Available, Joined and nodeName once Node <claim> joined with its type label', async () => {
    const { host } = await claimWithHost(tc.client, env.opts('j-ok', { state: 'provisioning' }));
    expect(await run('j-ok')).toMatchObject({ kind: 'done' });
    let c = await claimOf('j-ok');
    expect(c.status).toMatchObject({ phase: 'Pending', reason: 'HostNotProvisioned' });
    expect(cond(c, 'Provisioned')).toMatchObject({ status: 'False', reason: 'HostNotProvisioned' });

    await setHostState(tc.client, host, 'provisioned');
    await eventually(() => env.tenant.admin.get(R.Node, undefined, 'j-ok'), 'Node j-ok joined');
    expect(await run('j-ok')).toMatchObject({ kind: 'done' });
    c = await claimOf('j-ok');
    expect(c.status).toMatchObject({ phase: 'Available', nodeName: 'j-ok' });
    expect(c.status?.reason).toBeUndefined();
    expect(cond(c, 'Provisioned')).toMatchObject({ status: 'True' });
    expect(cond(c, 'Joined')).toMatchObject({ status: 'True', reason: 'NodeJoined' });
    expect(cond(c, 'Scheduled')).toMatchObject({ status: 'True' }); // selectHost's, kept
  });

  it('a tenant that cannot be reached: Pending, Joined=False with the reason, requeued', async () => {
    await claimWithHost(tc.client, env.opts('j-away', { vClusterRef: 'tenant-gone' }));
    expect(await run('j-away')).toMatchObject({ kind: 'requeue' });
    const c = await claimOf('j-away');
    expect(c.status).toMatchObject({ phase: 'Pending', reason: 'TenantClusterUnavailable' });
    expect(cond(c, 'Provisioned')).toMatchObject({ status: 'True' });
    expect(cond(c, 'Joined')?.message).toMatch(/tenant-gone/);
  });

  it('a Node without the node-type label is not Joined', async () => {
    // The host stays provisioning (no join by the simulator); someone else registered the Node.
    const { host } = await claimWithHost(tc.client, env.opts('j-nolabel', { state: 'provisioning' }));
    await env.tenant.admin.create(R.Node, {
      metadata: { name: 'j-nolabel', labels: { 'kubernetes.io/os': 'linux' } },
    });
    await tc.client.patch(R.BareMetalHost, HOST_NS, host, {
      spec: { userData: null },
    });
    await setHostState(tc.client, host, 'provisioned');
    expect(await run('j-nolabel')).toMatchObject({ kind: 'requeue' });
    const c = await claimOf('j-nolabel');
    expect(c.status).toMatchObject({ phase: 'Pending', reason: 'NodeTypeLabelMissing' });
    expect(c.status?.message).toBe('Node j-nolabel has no vcluster.com/node-type label, want gpu');
  });

  it('a host in error: Failed with its errorMessage (terminal)', async () => {
    const { host } = await claimWithHost(tc.client, env.opts('j-err', { state: 'provisioning' }));
    await setHostState(tc.client, host, 'provisioning', {
      errorType: 'provisioning error',
      errorMessage: 'image download failed',
      operationalStatus: 'error',
    });
    expect(await run('j-err')).toMatchObject({ kind: 'terminal', reason: 'HostError' });
    const c = await claimOf('j-err');
    expect(c.status).toMatchObject({
      phase: 'Failed',
      reason: 'HostError',
      message: `BareMetalHost ${HOST_NS}/${host}: image download failed`,
    });
    expect(cond(c, 'Provisioned')).toMatchObject({ status: 'False', severity: 'Error' });
  });
});
