/**
 * A test cluster: the embedded API server with every CRD the project ships (infra/crds and
 * infra/local/crds, created through the API like `kubectl apply` would), the namespaces
 * `default` and `metal3`, and a KubeClient talking to it over HTTP.
 */
import { loadCrdFiles, PROJECT_CRD_DIRS } from '../../infra/local/apiserver/crds.ts';
import {
  type ApiServerHandle,
  type ApiServerOptions,
  startApiServer,
} from '../../infra/local/apiserver/index.ts';
import { R } from '../../shared/api/resources.ts';
import { KubeClient, type KubeClientOptions } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/types.ts';

export const CRD_DIRS = PROJECT_CRD_DIRS;

export interface TestCluster {
  server: ApiServerHandle;
  client: KubeClient;
  kubeconfig: string;
  stop(): Promise<void>;
}

export interface TestClusterOptions extends Omit<ApiServerOptions, 'faults'> {
  /** Create the project's CRDs (default true). */
  crds?: boolean;
  faults?: boolean;
  /** Extra namespaces to create besides `default` and `metal3`. */
  namespaces?: string[];
}

/**
 * A client for tests: writes with fieldValidation=Strict, so a field our schemas (or upstream's,
 * for built-in kinds) lack fails the write instead of being dropped with a warning.
 */
export const testClient = (kubeconfig: string, opts: KubeClientOptions = {}): KubeClient =>
  KubeClient.fromString(kubeconfig, { fieldValidation: 'Strict', ...opts });

/** Every CustomResourceDefinition document in the project's CRD folders (missing folders: none). */
export const loadProjectCrds = (dirs: string[] = CRD_DIRS): KubeObject[] => loadCrdFiles(dirs);

export async function startTestCluster(opts: TestClusterOptions = {}): Promise<TestCluster> {
  const { crds = true, namespaces = [], ...serverOpts } = opts;
  const server = await startApiServer(serverOpts);
  try {
    const kubeconfig = server.kubeconfig();
    const client = testClient(kubeconfig);
    if (crds) {
      for (const crd of loadProjectCrds()) await client.create(R.CustomResourceDefinition, crd);
    }
    for (const ns of ['metal3', ...namespaces]) {
      if (!(await client.get(R.Namespace, undefined, ns)))
        await client.create(R.Namespace, { metadata: { name: ns } });
    }
    return { server, client, kubeconfig, stop: () => server.stop() };
  } catch (e) {
    await server.stop();
    throw e;
  }
}
