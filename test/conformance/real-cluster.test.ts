/**
 * The conformance suite against a real cluster: set CONFORMANCE_KUBECONFIG (or KUBECONFIG) to a
 * kubeconfig of a reachable cluster. It creates namespaces `conf-<pid>-<n>`, two CRDs in the
 * group conformance.metal3fn.io, a few Nodes, ClusterRoles and ClusterRoleBindings named after
 * those namespaces, short-lived bootstrap-token Secrets in kube-system (15-minute expiry), and
 * deletes what it created. The kubeconfig must be a cluster admin's. Without a reachable cluster the suite is reported as skipped, with the reason.
 * Cases that need the embedded server's test hooks skip themselves there, with their reason.
 */
import { KubeConfig, VersionApi } from '@kubernetes/client-node';
import { describe, it } from 'vitest';
import { KubeClient } from '../../shared/kube/client.ts';
import { defineConformanceSuite } from './suite.ts';

const kubeconfigEnv = process.env.CONFORMANCE_KUBECONFIG ?? process.env.KUBECONFIG;

async function reachable(kc: KubeConfig): Promise<string | undefined> {
  try {
    const v = await Promise.race([
      kc.makeApiClient(VersionApi).getCode(),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timed out after 3 s')), 3000)),
    ]);
    return v.gitVersion;
  } catch (e) {
    process.stderr.write(`real-cluster conformance: cluster not reachable: ${(e as Error).message}\n`);
    return undefined;
  }
}

let kc: KubeConfig | undefined;
let version: string | undefined;
if (kubeconfigEnv) {
  kc = new KubeConfig();
  try {
    if (kubeconfigEnv.includes(':')) kc.loadFromDefault();
    else kc.loadFromFile(kubeconfigEnv);
    version = await reachable(kc);
  } catch (e) {
    process.stderr.write(`real-cluster conformance: cannot load ${kubeconfigEnv}: ${(e as Error).message}\n`);
  }
}

if (kc && version) {
  const config = kc;
  defineConformanceSuite(`real cluster (${version})`, async () => ({
    client: new KubeClient(config),
    kubeconfigPath: kubeconfigEnv!,
    teardown: async () => undefined,
  }));
} else {
  describe('real cluster', () => {
    it.skip(
      kubeconfigEnv
        ? `skipped: the cluster of ${kubeconfigEnv} is not reachable`
        : 'skipped: no CONFORMANCE_KUBECONFIG or KUBECONFIG given (documented skip: a real cluster is optional)',
      () => undefined,
    );
  });
}
