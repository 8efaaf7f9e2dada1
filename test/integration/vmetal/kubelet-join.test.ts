/**
 * The kubelet simulator joins vMetal hosts: from the rendered user data (cloud-config or multipart)
 * it runs kubeadm's token discovery against the tenant API server (TLS, RBAC enforced), authenticates
 * with the bootstrap token and registers Node `<claim>` with the labels, taints and address; a
 * wrong, expired or non-authenticating token leaves no Node (the reason logged) and a later host
 * event tries again; the Node goes when the host leaves provisioned.
 */
import { describe, expect, it } from 'vitest';
import { R } from '../../../shared/api/resources.ts';
import { KubeClient } from '../../../shared/kube/client.ts';
import { eventually } from '../../helpers/wait.ts';
import {
  bootstrapToken,
  type ClaimHostOptions,
  claimWithHost,
  renderedUserData,
  setHostState,
  TOKEN,
  useJoinEnv,
} from './join-setup.ts';
import { HOST_NS, useVmetalCluster } from './setup.ts';

const tc = useVmetalCluster();
const env = useJoinEnv(() => tc.client, { sim: true });
const join = (claim: string, over: Partial<ClaimHostOptions> = {}) =>
  claimWithHost(tc.client, env.opts(claim, over));
const refusal = (host: string) =>
  eventually(
    () => env.lines.find((l) => l.msg === 'kubelet sim: join refused' && l.host === host),
    `join refused for ${host}`,
  );

describe('kubelet simulator: vMetal join', () => {
  it('registers Node <claim> with the node labels, taints, Ready and the claim IP; deletes it when the host deprovisions', async () => {
    const { host } = await join('c-ok', {
      ip: '10.70.0.11',
      taints: [{ key: 'gpu', value: 'yes', effect: 'NoSchedule' }],
    });
    // Created, then its status posted (the kubelet's first update): wait for the addresses.
    const node = await eventually(async () => {
      const n = await env.tenant.admin.get(R.Node, undefined, 'c-ok');
      return n?.status?.addresses && n;
    }, 'Node c-ok with its status');
    expect(node.metadata.labels).toMatchObject({
      'vcluster.com/node-type': 'gpu',
      'kubernetes.io/os': 'linux',
      'kubernetes.io/hostname': 'c-ok',
    });
    expect(node.spec).toMatchObject({ taints: [{ key: 'gpu', value: 'yes', effect: 'NoSchedule' }] });
    expect(node.status?.addresses).toEqual([
      { type: 'InternalIP', address: '10.70.0.11' },
      { type: 'Hostname', address: 'c-ok' },
    ]);
    expect(node.status?.conditions).toContainEqual(
      expect.objectContaining({ type: 'Ready', status: 'True' }),
    );
    expect(env.lines.find((l) => l.msg === 'kubelet sim: Node joined' && l.node === 'c-ok')).toMatchObject({
      identity: 'system:bootstrap:abcdef',
    });

    await setHostState(tc.client, host, 'deprovisioning');
    await eventually(
      async () => !(await env.tenant.admin.get(R.Node, undefined, 'c-ok')),
      'Node c-ok deleted',
    );
  });

  it('the bootstrap token itself may not create a Node (RBAC enforced, as on a real cluster): why the simulator registers with its own credential', async () => {
    const asToken = KubeClient.fromString(env.tenant.server.kubeconfig({ token: TOKEN }));
    await expect(asToken.create(R.Node, { metadata: { name: 'by-token' } })).rejects.toMatchObject({
      code: 403,
    });
  });

  it('joins from multipart user data (a script first)', async () => {
    await join('c-mime', { base: '#!/bin/sh\necho hello\n' });
    const node = await eventually(() => env.tenant.admin.get(R.Node, undefined, 'c-mime'), 'Node c-mime');
    expect(node.metadata.labels?.['vcluster.com/node-type']).toBe('gpu');
  });

  it('a wrong token secret: discovery refuses the signature, no Node; fixed user data joins on the next event', async () => {
    const { host } = await join('c-wrong', { token: 'abcdef.wrongwrongwrong0' });
    expect((await refusal(host)).reason).toMatch(/signature for token id abcdef does not verify/);
    await env.idle();
    expect(await env.tenant.admin.get(R.Node, undefined, 'c-wrong')).toBeUndefined();

    // The user data gets the right token; the host's next event brings the sim back.
    const fixed = renderedUserData({ ...env.opts('c-wrong'), token: TOKEN });
    await tc.client.patch(R.Secret, HOST_NS, 'c-wrong-user-data', {
      data: { userData: Buffer.from(fixed).toString('base64') },
    });
    await tc.client.patch(R.BareMetalHost, HOST_NS, host, { metadata: { annotations: { touched: 'yes' } } });
    await eventually(() => env.tenant.admin.get(R.Node, undefined, 'c-wrong'), 'Node c-wrong after the fix');
  });

  it('an expired token: no signature in cluster-info, no Node', async () => {
    const expired = 'exp123.0123456789abcdef';
    await bootstrapToken(env.tenant.admin, expired, { expiration: '2020-01-01T00:00:00Z' });
    const { host } = await join('c-expired', { token: expired });
    expect((await refusal(host)).reason).toMatch(/no JWS signature for token id exp123/);
    await env.idle();
    expect(await env.tenant.admin.get(R.Node, undefined, 'c-expired')).toBeUndefined();
  });

  it('a token that signs but may not authenticate: discovery passes, the API server answers 401, no Node', async () => {
    const noAuth = 'noauth.0123456789abcdef';
    await bootstrapToken(env.tenant.admin, noAuth, { authentication: false });
    await eventually(async () => {
      const cm = await env.tenant.admin.get(R.ConfigMap, 'kube-public', 'cluster-info');
      return (cm?.data as Record<string, string> | undefined)?.['jws-kubeconfig-noauth'];
    }, 'the signer signs for noauth');
    const { host } = await join('c-noauth', { token: noAuth });
    expect((await refusal(host)).reason).toMatch(/bootstrap token is refused/);
    await env.idle();
    expect(await env.tenant.admin.get(R.Node, undefined, 'c-noauth')).toBeUndefined();
  });

  it('a wrong CA pin: refused before the token is sent', async () => {
    const { host } = await join('c-pin', { caCertHash: `sha256:${'00'.repeat(32)}` });
    expect((await refusal(host)).reason).toMatch(/does not match --discovery-token-ca-cert-hash/);
  });
});
