/** Reconcile contexts for tests: on a test cluster's client, or offline for cores that never call one. */
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../../shared/kube/client.ts';
import { createEventRecorder, noEvents } from '../../shared/observability/events.ts';
import { silentLogger } from '../../shared/observability/logger.ts';
import { DEFAULT_CONFIG, type ProductConfig, type ReconcileContext } from '../../shared/reconcile/context.ts';

/** A context on `client` whose Events are recorded through it (component `metal3fn-test`); no workload cluster. */
export function clusterContext(
  client: KubeClient,
  opts: { config?: Partial<ProductConfig>; component?: string } = {},
): ReconcileContext {
  return {
    client,
    workloadClient: async () => {
      throw new Error('no workload cluster in these tests');
    },
    events: createEventRecorder(client, opts.component ?? 'metal3fn-test'),
    log: silentLogger,
    config: { ...DEFAULT_CONFIG, ...opts.config },
    now: () => new Date(),
  };
}

/** A context for cores that do not touch Kubernetes (the client points at a closed port). */
export function offlineContext(): ReconcileContext {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'http://127.0.0.1:9', skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  const client = new KubeClient(kc);
  return {
    client,
    workloadClient: async () => client,
    events: noEvents,
    log: silentLogger,
    config: DEFAULT_CONFIG,
    now: () => new Date(),
  };
}
