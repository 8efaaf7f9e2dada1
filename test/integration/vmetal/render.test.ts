/**
 * renderData for a NodeClaim against the embedded API server, with a tenant cluster (a second
 * embedded server, TLS, reached through `<vClusterRef>-kubeconfig`): the two Secrets' content, the
 * host's provisioning fields and network annotations in one write, the tenant's bootstrap token
 * (one per tenant, shared by its claims and by concurrent renders), a bad template failing the claim
 * after its host and address are released, a missing SSHKey as a wait that resumes, and the claim's
 * reboot and power requests reaching the host.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { reconcile as renderData } from '../../../functions/render-data/core.ts';
import type { BareMetalHost } from '../../../shared/api/baremetalhost.ts';
import { R } from '../../../shared/api/resources.ts';
import {
  NODE_CLAIM_LABEL,
  VMETAL_CLAIM_UID_LABEL,
  VMETAL_HOST_ANNOTATION,
  VMETAL_JOIN_TOKEN_LABEL,
} from '../../../shared/api/wellknown.ts';
import { createWorkloadClientCache } from '../../../shared/kube/workload.ts';
import type { ReconcileContext } from '../../../shared/reconcile/context.ts';
import { parseJoinCommand } from '../../../shared/vmetal/join.ts';
import { joinTokenSecretName } from '../../../shared/vmetal/jointoken.ts';
import { ipClaimName } from '../../../shared/vmetal/network.ts';
import { startTestCluster, type TestCluster } from '../../helpers/cluster.ts';
import { clusterContext } from '../../helpers/context.ts';
import { messageFor } from '../../helpers/messages.ts';
import {
  createHosts,
  HOST_NS,
  nodeClaim,
  PROJECT_NS,
  PUBLIC_KEY,
  provider,
  runAllocate,
  runSelectHost,
  useVmetalCluster,
} from './setup.ts';

const tc = useVmetalCluster();
let tenant: TestCluster;
let ctx: ReconcileContext;

const kubeconfigSecret = (name: string, kubeconfig: string) => ({
  metadata: { name: `${name}-kubeconfig`, namespace: PROJECT_NS },
  data: { value: Buffer.from(kubeconfig).toString('base64') },
});

beforeAll(async () => {
  tenant = await startTestCluster({ tls: true, crds: false });
  const workloads = createWorkloadClientCache(tc.client, { revalidateMs: 0 });
  ctx = { ...clusterContext(tc.client), workloadClient: (ns, name) => workloads.get(ns, name) };
  // Two names for the one tenant server: tenant-a (most tests) and tenant-b (the concurrent renders).
  await tc.client.create(R.Secret, kubeconfigSecret('tenant-a', tenant.kubeconfig));
  await tc.client.create(R.Secret, kubeconfigSecret('tenant-b', tenant.kubeconfig));
}, 60_000);
afterAll(async () => {
  await tenant?.stop();
});

const runRender = (name: string) => renderData(ctx, messageFor('renderData', R.NodeClaim, name, PROJECT_NS));
const getClaim = async (name: string) => (await tc.client.get(R.NodeClaim, PROJECT_NS, name))!;
const getHost = async (name: string) => (await tc.client.get(R.BareMetalHost, HOST_NS, name))!;
const secretText = async (name: string, key: string): Promise<string | undefined> => {
  const s = await tc.client.get(R.Secret, HOST_NS, name);
  const v = s?.data?.[key];
  return v === undefined ? undefined : Buffer.from(v, 'base64').toString('utf8');
};
const tenantTokens = async (vcluster: string) =>
  (await tenant.client.list(R.Secret, 'kube-system')).items.filter(
    (s) => s.metadata.labels?.[VMETAL_JOIN_TOKEN_LABEL] === vcluster,
  );

/** A provider over `n` fresh hosts labelled pool=<pool>, and the claims scheduled with their addresses. */
async function scheduled(
  pool: string,
  claims: { name: string; props?: Record<string, string>; vcluster?: string }[],
  providerProps: Record<string, string> = {},
): Promise<{ net: string; hosts: string[] }> {
  await createHosts(tc.client, pool, claims.length, () => ({ pool }));
  const p = provider(`prov-${pool}`, {}, pool);
  p.spec.properties = { ...p.spec.properties, ...providerProps };
  const net = p.spec.properties['metal3.vcluster.com/network-cidr']!.replace(/\.1\/24$/, '');
  await tc.client.create(R.NodeProvider, p);
  await runSelectHost(tc.ctx, R.NodeProvider, `prov-${pool}`, undefined);
  const hosts: string[] = [];
  for (const c of claims) {
    const claim = nodeClaim(c.name, `prov-${pool}-any`, c.props);
    if (c.vcluster) claim.spec.vClusterRef = c.vcluster;
    await tc.client.create(R.NodeClaim, claim);
    expect(await runSelectHost(tc.ctx, R.NodeClaim, c.name, PROJECT_NS)).toMatchObject({ kind: 'done' });
    await runAllocate(tc.ctx, ipClaimName({ namespace: PROJECT_NS, name: c.name }));
    hosts.push((await getClaim(c.name)).status!.host!);
  }
  return { net, hosts };
}

describe('renderData for a NodeClaim', () => {
  it('renders cloud-config user data (user entries first, join and keys added), generated network data, and provisions the host in one write', async () => {
    const template = [
      '#cloud-config',
      'hostname: {{ .Values.NodeClaim.Name }}',
      'runcmd:',
      '- echo {{ .Values.Project.Name }} {{ .Values.AllocatedIP }}/{{ .Values.PrefixLength }}',
      'ssh_authorized_keys:',
      '- ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl user@example.com',
      '',
    ].join('\n');
    const { net, hosts } = await scheduled('rcc', [
      {
        name: 'c-cc',
        props: {
          'vcluster.com/user-data-template': template,
          'metal3.vcluster.com/dns-servers': '192.0.2.53',
        },
      },
    ]);
    const hostName = hosts[0]!;
    const claim = await getClaim('c-cc');
    const before = await getHost(hostName);

    expect(await runRender('c-cc')).toMatchObject({ kind: 'done' });

    const userData = (await secretText('c-cc-user-data', 'userData'))!;
    expect(userData.startsWith('#cloud-config\n')).toBe(true);
    const doc = parse(userData) as Record<string, unknown>;
    expect(doc.hostname).toBe('c-cc');
    const runcmd = doc.runcmd as string[];
    expect(runcmd[0]).toBe(`echo team-a ${net}.10/24`);
    expect(runcmd).toHaveLength(2);
    const join = parseJoinCommand(runcmd[1]!)!;
    const [, port] = /:(\d+)$/.exec(new URL(tenant.server.url).host)!;
    expect(join).toMatchObject({
      endpoint: `127.0.0.1:${port}`,
      caCertHash: tenant.server.auth.caCertHash(),
      nodeName: 'c-cc',
    });
    expect(doc.ssh_authorized_keys).toEqual([
      'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl user@example.com',
      PUBLIC_KEY,
    ]);
    const files = doc.write_files as { path: string; content: string }[];
    expect(files.map((f) => f.path)).toEqual(['/etc/default/kubelet', '/etc/sysconfig/kubelet']);
    expect(files[0]!.content).toContain('--node-labels=');
    expect(files[0]!.content).toContain('vcluster.com/node-type=prov-rcc-any');

    // The token: one bootstrap-token Secret in the tenant, as kubeadm writes it, kept in the management Secret.
    const [id, secret] = join.token.split('.');
    const tokens = await tenantTokens('tenant-a');
    expect(tokens.map((s) => s.metadata.name)).toEqual([`bootstrap-token-${id}`]);
    const data = Object.fromEntries(
      Object.entries(tokens[0]!.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
    );
    expect(tokens[0]!.type).toBe('bootstrap.kubernetes.io/token');
    expect(data).toMatchObject({
      'token-id': id,
      'token-secret': secret,
      'usage-bootstrap-authentication': 'true',
      'usage-bootstrap-signing': 'true',
      'auth-extra-groups': 'system:bootstrappers:kubeadm:default-node-token',
    });
    const ttlLeft = Date.parse(data.expiration!) - Date.now();
    expect(ttlLeft).toBeGreaterThan(23 * 3600 * 1000);
    expect(ttlLeft).toBeLessThanOrEqual(24 * 3600 * 1000);
    expect(await tc.client.get(R.Secret, PROJECT_NS, joinTokenSecretName('tenant-a'))).toBeDefined();

    const networkData = parse((await secretText('c-cc-network-data', 'networkData'))!) as Record<
      string,
      unknown
    >;
    expect(networkData).toEqual({
      links: [
        {
          id: 'eth0',
          type: 'phy',
          mtu: 1500,
          ethernet_mac_address: before.spec!.bootMACAddress!.toLowerCase(),
        },
      ],
      networks: [
        {
          id: 'network0',
          type: 'ipv4',
          link: 'eth0',
          ip_address: `${net}.10`,
          netmask: '255.255.255.0',
          routes: [{ network: '0.0.0.0', netmask: '0.0.0.0', gateway: `${net}.1`, services: [] }],
        },
      ],
      services: [{ type: 'dns', address: '192.0.2.53' }],
    });
    for (const name of ['c-cc-user-data', 'c-cc-network-data']) {
      const s = (await tc.client.get(R.Secret, HOST_NS, name))!;
      expect(s.metadata.labels?.[VMETAL_CLAIM_UID_LABEL]).toBe(claim.metadata.uid);
      // The claim lives in the project namespace: no cross-namespace ownerReference.
      expect(s.metadata.ownerReferences ?? []).toEqual([]);
    }

    const host = await getHost(hostName);
    // One write: the host's resourceVersion moved once.
    expect(Number(host.metadata.resourceVersion)).toBeGreaterThan(Number(before.metadata.resourceVersion));
    expect(host.spec).toMatchObject({
      image: {
        url: 'http://images.example.com/ubuntu.qcow2',
        checksum: 'http://images.example.com/ubuntu.qcow2.sha256sum',
      },
      userData: { name: 'c-cc-user-data', namespace: HOST_NS },
      networkData: { name: 'c-cc-network-data', namespace: HOST_NS },
      online: true,
    });
    expect(host.metadata.annotations).toMatchObject({
      [VMETAL_HOST_ANNOTATION.ipAddress]: `${net}.10/24`,
      [VMETAL_HOST_ANNOTATION.gateway]: `${net}.1`,
      [VMETAL_HOST_ANNOTATION.dnsServers]: '192.0.2.53',
    });
    expect(host.metadata.annotations?.[VMETAL_HOST_ANNOTATION.ntpServers]).toBeUndefined();
    const got = await getClaim('c-cc');
    expect(got.status?.ipAddress).toBe(`${net}.10/24`);
    expect(got.status?.conditions?.find((c) => c.type === 'Provisioned')).toMatchObject({
      status: 'False',
      reason: 'DataRendered',
    });

    // Rendered once: a second pass writes nothing (host, Secrets, token all as they were).
    const userDataRv = (await tc.client.get(R.Secret, HOST_NS, 'c-cc-user-data'))!.metadata.resourceVersion;
    expect(await runRender('c-cc')).toMatchObject({ kind: 'done' });
    expect((await getHost(hostName)).metadata.resourceVersion).toBe(host.metadata.resourceVersion);
    expect((await tc.client.get(R.Secret, HOST_NS, 'c-cc-user-data'))!.metadata.resourceVersion).toBe(
      userDataRv,
    );
    // The claim's status too: a pass that changes nothing writes nothing (no event loop).
    expect((await getClaim('c-cc')).metadata.resourceVersion).toBe(got.metadata.resourceVersion);

    // A second claim of the same tenant joins with the same token.
    await scheduled('rcc2', [{ name: 'c-cc2' }]);
    expect(await runRender('c-cc2')).toMatchObject({ kind: 'done' });
    const second = parse((await secretText('c-cc2-user-data', 'userData'))!) as { runcmd: string[] };
    expect(parseJoinCommand(second.runcmd.at(-1)!)!.token).toBe(join.token);
    expect((await tenantTokens('tenant-a')).length).toBe(1);
  });

  it('makes one token for concurrent renders of one tenant', async () => {
    const names = ['c-par-0', 'c-par-1', 'c-par-2', 'c-par-3'];
    await scheduled(
      'rpar',
      names.map((name) => ({ name, vcluster: 'tenant-b' })),
    );
    const results = await Promise.all(names.map((n) => runRender(n)));
    for (const r of results) expect(r).toMatchObject({ kind: 'done' });
    const joins = await Promise.all(
      names.map(async (n) => {
        const doc = parse((await secretText(`${n}-user-data`, 'userData'))!) as { runcmd: string[] };
        return parseJoinCommand(doc.runcmd.at(-1)!)!.token;
      }),
    );
    expect(new Set(joins).size).toBe(1);
    const tokens = await tenantTokens('tenant-b');
    expect(tokens.map((s) => s.metadata.name)).toEqual([`bootstrap-token-${joins[0]!.split('.')[0]}`]);
  });

  it('rotates the tenant token once less than half its TTL is left (the old one is left to expire)', async () => {
    const name = joinTokenSecretName('tenant-b');
    const kept = (await tc.client.get(R.Secret, PROJECT_NS, name))!;
    const oldId = Buffer.from(kept.data!['token-id']!, 'base64').toString('utf8');
    const soon = new Date(Date.now() + 3600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    await tc.client.replace(R.Secret, {
      ...kept,
      data: { ...kept.data, expiration: Buffer.from(soon).toString('base64') },
    });
    await scheduled('rrot', [{ name: 'c-rot', vcluster: 'tenant-b' }]);
    expect(await runRender('c-rot')).toMatchObject({ kind: 'done' });
    const doc = parse((await secretText('c-rot-user-data', 'userData'))!) as { runcmd: string[] };
    const [id] = parseJoinCommand(doc.runcmd.at(-1)!)!.token.split('.');
    expect(id).not.toBe(oldId);
    const rotated = (await tc.client.get(R.Secret, PROJECT_NS, name))!;
    expect(Buffer.from(rotated.data!['token-id']!, 'base64').toString('utf8')).toBe(id);
    expect((await tenantTokens('tenant-b')).map((s) => s.metadata.name).sort()).toEqual(
      [`bootstrap-token-${id}`, `bootstrap-token-${oldId}`].sort(),
    );
  });

  it('wraps user data that is not a cloud-config in MIME multipart (the user part first) and keeps a network-data override', async () => {
    const override = '{"links": [], "networks": [], "services": []}';
    await scheduled('rmp', [
      {
        name: 'c-mp',
        props: {
          'vcluster.com/user-data': '#!/bin/sh\necho hello\n',
          'metal3.vcluster.com/network-data': override,
        },
      },
    ]);
    expect(await runRender('c-mp')).toMatchObject({ kind: 'done' });
    const userData = (await secretText('c-mp-user-data', 'userData'))!;
    const boundary = /^Content-Type: multipart\/mixed; boundary="([^"]+)"/.exec(userData)![1]!;
    const parts = userData.split(`--${boundary}`).slice(1, -1);
    expect(parts).toHaveLength(2);
    expect(parts[0]).toContain('Content-Type: text/x-shellscript');
    expect(parts[0]).toContain('#!/bin/sh\necho hello\n');
    expect(parts[1]).toContain('Content-Type: text/cloud-config');
    expect(parts[1]).toContain('Merge-Type: list(append)+dict(no_replace,recurse_list)+str()');
    expect(parts[1]).toContain('kubeadm join');
    expect(parts[1]).toContain(PUBLIC_KEY);
    expect(await secretText('c-mp-network-data', 'networkData')).toBe(override);
  });

  it('fails a claim whose template does not execute after releasing its host and address; nothing is left', async () => {
    const { hosts } = await scheduled('rbad', [
      {
        name: 'c-bad',
        props: { 'vcluster.com/user-data-template': '#cloud-config\nhostname: {{ .Values.Nope }}\n' },
      },
    ]);
    const hostName = hosts[0]!;
    expect(await runRender('c-bad')).toMatchObject({ kind: 'terminal' });
    const claim = await getClaim('c-bad');
    expect(claim.status).toMatchObject({ phase: 'Failed', reason: 'InvalidConfiguration' });
    expect(claim.status?.message).toContain('properties["vcluster.com/user-data-template"]');
    expect(claim.status?.message).toContain('Nope');
    expect(claim.status?.conditions?.find((c) => c.type === 'Provisioned')).toMatchObject({
      status: 'False',
      reason: 'RenderFailed',
    });
    const host: BareMetalHost = await getHost(hostName);
    expect(host.spec?.consumerRef).toBeUndefined();
    expect(host.metadata.labels?.[NODE_CLAIM_LABEL]).toBeUndefined();
    expect(host.metadata.annotations ?? {}).toEqual({});
    expect(host.spec?.image).toBeUndefined();
    // Deleted: IPAM's finalizer frees the address (allocateIndex), then the IPClaim is gone.
    const ipc = ipClaimName({ namespace: PROJECT_NS, name: 'c-bad' });
    expect((await tc.client.get(R.IPClaim, HOST_NS, ipc))?.metadata.deletionTimestamp).toBeDefined();
    await runAllocate(tc.ctx, ipc);
    expect(await tc.client.get(R.IPClaim, HOST_NS, ipc)).toBeUndefined();
    expect(await tc.client.get(R.Secret, HOST_NS, 'c-bad-user-data')).toBeUndefined();
    expect(await tc.client.get(R.Secret, HOST_NS, 'c-bad-network-data')).toBeUndefined();

    // Not given another host: selectHost leaves a claim that failed after its release alone.
    expect(await runSelectHost(tc.ctx, R.NodeClaim, 'c-bad', PROJECT_NS)).toMatchObject({ kind: 'terminal' });
    expect((await getHost(hostName)).spec?.consumerRef).toBeUndefined();
  });

  it('fails a template that does not parse before any host is taken', async () => {
    await createHosts(tc.client, 'rparse', 1, () => ({ pool: 'rparse' }));
    await tc.client.create(R.NodeProvider, provider('prov-rparse', {}, 'rparse'));
    await runSelectHost(tc.ctx, R.NodeProvider, 'prov-rparse', undefined);
    await tc.client.create(
      R.NodeClaim,
      nodeClaim('c-parse', 'prov-rparse-any', {
        'vcluster.com/user-data-template': '#cloud-config\n{{ if }}\n',
      }),
    );
    expect(await runSelectHost(tc.ctx, R.NodeClaim, 'c-parse', PROJECT_NS)).toMatchObject({
      kind: 'terminal',
    });
    const claim = await getClaim('c-parse');
    expect(claim.status).toMatchObject({ phase: 'Failed' });
    expect(claim.status?.message).toContain('properties["vcluster.com/user-data-template"]');
    expect(claim.status?.host).toBeUndefined();
    expect((await getHost('rparse-0000')).spec?.consumerRef).toBeUndefined();
  });

  it('waits (Pending) for an SSHKey deleted after the claim, and resumes when it is back', async () => {
    await tc.client.create(R.SSHKey, { metadata: { name: 'late-key' }, spec: { publicKey: PUBLIC_KEY } });
    await scheduled('rkey', [{ name: 'c-key', props: { 'vcluster.com/ssh-keys': 'late-key' } }]);
    await tc.client.delete(R.SSHKey, undefined, 'late-key');
    expect(await runRender('c-key')).toMatchObject({ kind: 'requeue' });
    let claim = await getClaim('c-key');
    expect(claim.status).toMatchObject({ phase: 'Pending', reason: 'SSHKeyNotFound' });
    expect(claim.status?.conditions?.find((c) => c.type === 'Provisioned')).toMatchObject({
      status: 'False',
      reason: 'SSHKeyNotFound',
    });
    expect(await tc.client.get(R.Secret, HOST_NS, 'c-key-user-data')).toBeUndefined();

    await tc.client.create(R.SSHKey, { metadata: { name: 'late-key' }, spec: { publicKey: PUBLIC_KEY } });
    expect(await runRender('c-key')).toMatchObject({ kind: 'done' });
    claim = await getClaim('c-key');
    expect(claim.status?.reason).toBeUndefined();
    expect(claim.status?.conditions?.find((c) => c.type === 'Provisioned')).toMatchObject({
      reason: 'DataRendered',
    });
    expect(await tc.client.get(R.Secret, HOST_NS, 'c-key-user-data')).toBeDefined();

    // Once its host is provisioned, the claim's inputs are not read again: a key deleted or a
    // template broken later neither sends it back to Pending nor fails and releases it.
    await tc.client.delete(R.SSHKey, undefined, 'late-key');
    const now = await getClaim('c-key');
    await tc.client.replace(R.NodeClaim, {
      ...now,
      spec: {
        ...now.spec,
        properties: { ...now.spec.properties, 'vcluster.com/user-data-template': '{{ .Values.Nope }}' },
      },
    });
    expect(await runRender('c-key')).toMatchObject({ kind: 'done' });
    claim = await getClaim('c-key');
    expect(claim.status?.phase).toBe('Pending');
    expect(claim.status?.reason).toBeUndefined();
    expect((await getHost(claim.status!.host!)).spec?.consumerRef?.name).toBe('c-key');
  });

  it("carries the claim's reboot request (to a provisioned host) and power to its host", async () => {
    const { hosts } = await scheduled('rpow', [{ name: 'c-pow' }]);
    expect(await runRender('c-pow')).toMatchObject({ kind: 'done' });
    // What baremetal-operator does next: the host provisions its image.
    const provisioning = await getHost(hosts[0]!);
    await tc.client.replaceStatus(R.BareMetalHost, {
      ...provisioning,
      status: {
        ...provisioning.status,
        provisioning: { ...provisioning.status?.provisioning, state: 'provisioned' },
      },
    });
    const claim = await getClaim('c-pow');
    await tc.client.replace(R.NodeClaim, {
      ...claim,
      metadata: { ...claim.metadata, annotations: { 'machines.vcluster.com/reboot': 'now' } },
      spec: { ...claim.spec, power: 'Off' },
    });
    expect(await runRender('c-pow')).toMatchObject({ kind: 'done' });
    const host = await getHost(hosts[0]!);
    expect(host.metadata.annotations?.['reboot.metal3.io']).toBe('');
    expect(host.spec?.online).toBe(false);
    expect((await getClaim('c-pow')).metadata.annotations?.['machines.vcluster.com/reboot']).toBeUndefined();
  });
});
