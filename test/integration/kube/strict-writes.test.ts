/**
 * Tests write with fieldValidation=Strict (test/helpers/cluster.ts testClient), so a field a
 * schema lacks fails the test's write instead of vanishing with a warning, as it does for the
 * product's clients (the server's default, Warn). And the project's Cluster API stand-ins scale
 * as Cluster API's own: `kubectl scale machinedeployment`.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { R } from '../../../shared/api/resources.ts';
import { KubeClient } from '../../../shared/kube/client.ts';
import { testClient } from '../../helpers/cluster.ts';
import { kubectl, kubectlAvailable } from '../../helpers/kubectl.ts';
import { useCluster } from '../../helpers/use-cluster.ts';

const NS = 'metal3';

describe('writes of tests and of the product', () => {
  const tc = useCluster({ makeCtx: () => undefined });

  it('a test client refuses a field the CRD lacks; the product default drops it', async () => {
    // Metal3Machine has spec.providerID; providerId (another case) is a field it lacks. The image
    // makes the rest valid, so the typed client can read back what the lenient write stored.
    const machine = (name: string) => ({
      metadata: { name, namespace: NS },
      spec: {
        image: { url: 'http://img/x.qcow2', checksum: 'http://img/x.qcow2.sha256' },
        providerId: 'metal3://x',
      },
    });
    const strict = testClient(tc.kubeconfig);
    await expect(strict.create(R.Metal3Machine, machine('strict'))).rejects.toMatchObject({
      code: 400,
      status: { message: expect.stringContaining('strict decoding error: unknown field "spec.providerId"') },
    });
    expect(await tc.client.get(R.Metal3Machine, NS, 'strict')).toBeUndefined();
    const lenient = KubeClient.fromString(tc.kubeconfig);
    const created = await lenient.create<any>(R.Metal3Machine, machine('lenient'));
    expect(created.spec).not.toHaveProperty('providerId');
  });

  it.runIf(kubectlAvailable())(
    'kubectl scale machinedeployment writes spec.replicas through /scale',
    async () => {
      await tc.client.create(R.MachineDeployment, {
        metadata: { name: 'md', namespace: NS },
        spec: { clusterName: 'c', replicas: 1 },
      });
      const kubeconfig = join(mkdtempSync(join(tmpdir(), 'metal3fn-scale-')), 'kubeconfig');
      writeFileSync(kubeconfig, tc.kubeconfig);
      const out = await kubectl(kubeconfig, ['scale', '-n', NS, 'machinedeployment/md', '--replicas=3']);
      expect(out).toContain('machinedeployment.cluster.x-k8s.io/md scaled');
      expect((await tc.client.get<any>(R.MachineDeployment, NS, 'md')).spec.replicas).toBe(3);
    },
  );
});
