/**
 * The vMetal kinds (ADR 018) as a vMetal user meets them: their documented objects, with only the
 * apiVersion changed, apply with `kubectl apply --validate=strict` against the embedded API server
 * (every documented field is in the CRDs), come back unpruned, and `kubectl get nodeclaims` prints
 * phase, type, host, IP and age. A field the schema does not know is refused, not dropped.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { envelopeOf, R } from '../../../shared/api/resources.ts';
import { startTestCluster, type TestCluster } from '../../helpers/cluster.ts';
import { kubectl, kubectlAvailable, kubectlExit } from '../../helpers/kubectl.ts';

const FIXTURE = join(import.meta.dirname, '..', '..', 'fixtures', 'vmetal', 'user-objects.yaml');
const ours = (text: string) =>
  text.replaceAll('apiVersion: management.loft.sh/v1', 'apiVersion: vmetal.metal3fn.io/v1alpha1');

let tc: TestCluster;
let dir: string;
let kubeconfig: string;

describe.skipIf(!kubectlAvailable())('vMetal objects applied with kubectl --validate=strict', () => {
  beforeAll(async () => {
    tc = await startTestCluster({ namespaces: ['p-team-a'] });
    dir = mkdtempSync(join(tmpdir(), 'vmetal-apply-'));
    kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, tc.kubeconfig);
  });
  afterAll(async () => {
    await tc?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('accepts every documented field with only the apiVersion changed and reads it back unpruned', async () => {
    const text = ours(readFileSync(FIXTURE, 'utf8'));
    expect(text).not.toContain('apiVersion: management.loft.sh');
    const file = join(dir, 'objects.yaml');
    writeFileSync(file, text);
    const out = await kubectl(kubeconfig, ['apply', '--validate=strict', '-f', file]);
    expect(out).toContain('nodeprovider.vmetal.metal3fn.io/metal3-provider created');
    expect(out).toContain('nodeclaim.vmetal.metal3fn.io/tenant-a-compute-x7k2p created');

    const docs = parseAllDocuments(text).map((d) => d.toJS());
    expect(docs.map((d) => d.kind).sort()).toEqual([
      'MachineConfigTemplate',
      'NodeClaim',
      'NodeEnvironment',
      'NodeProvider',
      'OSImage',
      'SSHKey',
    ]);
    for (const doc of docs) {
      const got = await tc.client.get(
        envelopeOf(R[doc.kind as keyof typeof R]),
        doc.metadata.namespace,
        doc.metadata.name,
      );
      expect(got?.spec, `${doc.kind} ${doc.metadata.name}`).toEqual(doc.spec);
    }
  });

  it('places each kind in its scope (cluster-scoped catalogue and provider, namespaced claim and environment)', async () => {
    const out = await kubectl(kubeconfig, ['api-resources', '--api-group=vmetal.metal3fn.io', '-o', 'wide']);
    const scopeOf = (kind: string) => {
      const line = out.split('\n').find((l) => new RegExp(`\\s${kind}\\s`).test(l));
      return line?.match(/\s(true|false)\s/)?.[1];
    };
    expect(
      Object.fromEntries(
        [
          'NodeProvider',
          'NodeType',
          'NodeClaim',
          'NodeEnvironment',
          'OSImage',
          'SSHKey',
          'MachineConfigTemplate',
        ].map((k) => [k, scopeOf(k)]),
      ),
    ).toEqual({
      NodeProvider: 'false',
      NodeType: 'false',
      NodeClaim: 'true',
      NodeEnvironment: 'true',
      OSImage: 'false',
      SSHKey: 'false',
      MachineConfigTemplate: 'false',
    });
    expect(out).not.toMatch(/\smachine\s/);
  });

  it('prints phase, type, host, IP and age for NodeClaims', async () => {
    const claim = await tc.client.create(R.NodeClaim, {
      metadata: { name: 'printed', namespace: 'p-team-a' },
      spec: { vClusterRef: 'tenant-a', typeRef: 'compute' },
    });
    await tc.client.replaceStatus(R.NodeClaim, {
      ...claim,
      status: { phase: 'Pending', nodeType: 'compute', host: 'server-01', ipAddress: '10.20.0.100/24' },
    });
    const out = await kubectl(kubeconfig, ['get', 'nodeclaims', '-n', 'p-team-a', 'printed']);
    const [head, row] = out.trim().split('\n');
    expect(head!.split(/\s+/)).toEqual(['NAME', 'PHASE', 'TYPE', 'HOST', 'IP', 'AGE']);
    expect(row!.split(/\s+/).slice(0, 5)).toEqual([
      'printed',
      'Pending',
      'compute',
      'server-01',
      '10.20.0.100/24',
    ]);
  });

  it('refuses a field no vMetal document has, naming it, and writes nothing', async () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(
      file,
      ours(`apiVersion: management.loft.sh/v1
kind: SSHKey
metadata:
  name: typo-key
spec:
  publicKeys: ssh-ed25519 AAAA x
`),
    );
    const res = await kubectlExit(kubeconfig, ['apply', '--validate=strict', '-f', file]);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('publicKeys');
    expect(await tc.client.get(R.SSHKey, undefined, 'typo-key')).toBeUndefined();
  });
});
