/**
 * `metal3fn render --machine NS/NAME` for a NodeClaim, as a user runs it: a child process on the
 * sample manifests in test/fixtures/render/vmetal, and on variants with one change each.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { caCertHash } from '../../../shared/vmetal/jointoken.ts';
import { runMetal3fnSplit } from '../../helpers/cli.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const FIXTURE = join(ROOT, 'test', 'fixtures', 'render', 'vmetal');
const CLAIM = 'p-team-a/worker-1';
const tmp: string[] = [];

const render = (args: string[]) => runMetal3fnSplit(['render', ...args]);

/** A copy of the fixture with `mutate` applied to the documents of one file (a document mapped to null is dropped). */
function variant(file: string, mutate: (obj: any) => any): string {
  const dir = mkdtempSync(join(tmpdir(), 'render-claim-'));
  tmp.push(dir);
  cpSync(FIXTURE, dir, { recursive: true });
  const docs = parseAllDocuments(readFileSync(join(dir, file), 'utf8'))
    .map((d) => mutate(d.toJS()))
    .filter((d) => d !== null);
  writeFileSync(join(dir, file), docs.map((d) => stringify(d)).join('---\n'));
  return dir;
}

afterAll(() => {
  for (const d of tmp) rmSync(d, { recursive: true, force: true });
});

/** The tenant CA of the fixture's kubeconfig Secret. */
function fixtureCaHash(): string {
  const docs = parseAllDocuments(readFileSync(join(FIXTURE, 'claim.yaml'), 'utf8')).map((d) => d.toJS());
  const kubeconfig = parse(docs[1].stringData.value);
  return caCertHash(
    Buffer.from(kubeconfig.clusters[0].cluster['certificate-authority-data'], 'base64').toString(),
  );
}

describe('metal3fn render for a NodeClaim', () => {
  it('previews properties, user data (token redacted) and network data on the first eligible host with the lowest free address', async () => {
    const r = await render(['-f', FIXTURE, '--machine', CLAIM]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('rendered NodeClaim p-team-a/worker-1 on BareMetalHost host-a');
    const out = JSON.parse(r.stdout);
    expect(Object.keys(out)).toEqual(['properties', 'userData', 'networkData']);
    expect(out.properties['vcluster.com/node-type']).toBe('small');
    const userData = parse(out.userData);
    expect(userData.hostname).toBe('worker-1.team-a');
    expect(userData.runcmd).toEqual([
      'echo 10.10.0.11',
      `kubeadm join tenant-a.example.com:6443 --token '<redacted>' --discovery-token-ca-cert-hash ${fixtureCaHash()} --node-name worker-1`,
    ]);
    expect(userData.ssh_authorized_keys).toHaveLength(1);
    expect(out.networkData.links).toEqual([
      { ethernet_mac_address: '52:54:00:00:00:0a', id: 'eth0', mtu: 1500, type: 'phy' },
    ]);
    expect(out.networkData.networks[0]).toMatchObject({ ip_address: '10.10.0.11', netmask: '255.255.255.0' });
    expect(out.networkData.services).toEqual([{ address: '10.10.0.2', type: 'dns' }]);
  });

  it('previews on the host --host names, and refuses one that is not eligible', async () => {
    const c = await render(['-f', FIXTURE, '--machine', CLAIM, '--host', 'host-c']);
    expect(c.code).toBe(0);
    expect(JSON.parse(c.stdout).networkData.links[0].ethernet_mac_address).toBe('52:54:00:00:00:0c');
    const b = await render(['-f', FIXTURE, '--machine', CLAIM, '--host', 'host-b']);
    expect(b.code).toBe(1);
    expect(b.stderr).toContain('host metal3/host-b pinned by properties["metal3.vcluster.com/server-name"]');
    expect(b.stdout).toBe('');
  });

  it('uses placeholders for a tenant whose kubeconfig Secret is not in the manifests, and says so', async () => {
    const dir = variant('claim.yaml', (d) => (d.kind === 'Secret' ? null : d));
    const r = await render(['-f', dir, '--machine', CLAIM]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('placeholders');
    expect(parse(JSON.parse(r.stdout).userData).runcmd[1]).toContain(
      'kubeadm join tenant-a.tenant.invalid:443',
    );
  });

  it('exits 1 naming the field for a template that does not execute', async () => {
    const dir = variant('claim.yaml', (d) => {
      if (d.kind === 'NodeClaim')
        d.spec.properties['vcluster.com/user-data-template'] = '#cloud-config\nx: {{ .Values.Nope }}\n';
      return d;
    });
    const r = await render(['-f', dir, '--machine', CLAIM]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('properties["vcluster.com/user-data-template"]');
    expect(r.stderr).toContain('Nope');
  });
});
