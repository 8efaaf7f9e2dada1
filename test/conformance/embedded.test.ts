/** The conformance suite against the embedded API server. */
import { join } from 'node:path';
import { advanceableClock, startApiServer } from '../../infra/local/apiserver/index.ts';
import { KubeClient } from '../../shared/kube/client.ts';
import { defineConformanceSuite, tempDir } from './suite.ts';

defineConformanceSuite('embedded API server', async () => {
  const clock = advanceableClock();
  const server = await startApiServer({ bookmarkIntervalMs: 60_000, tls: true, rbac: { tokens: {} }, clock });
  const kubeconfigPath = join(tempDir(), 'kubeconfig');
  await server.writeKubeconfig(kubeconfigPath);
  return {
    client: KubeClient.fromString(server.kubeconfig()),
    kubeconfigPath,
    embedded: server,
    advanceClock: (ms) => clock.advance(ms),
    now: () => clock.now(),
    teardown: () => server.stop(),
  };
});
