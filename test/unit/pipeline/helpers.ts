/** Shared pieces of the pipeline tests: a real SQS server and a context whose cluster is never called. */
import { KubeConfig } from '@kubernetes/client-node';
import type { MessageEnvelope } from '../../../events/envelope.ts';
import { type LocalSqs, type SqsBackendSetting, startLocalSqs } from '../../../infra/local/sqs.ts';
import { KubeClient } from '../../../shared/kube/client.ts';
import { noEvents } from '../../../shared/observability/events.ts';
import { silentLogger } from '../../../shared/observability/logger.ts';
import { createSqsClient } from '../../../shared/queue/sqs.ts';
import { DEFAULT_CONFIG, type ReconcileContext } from '../../../shared/reconcile/context.ts';

let backendOfThisFile: SqsBackendSetting | undefined;

/** The backend startSqs starts in this test file (localstack.test.ts runs the pipeline tests on LocalStack). */
export function useSqsBackend(backend: SqsBackendSetting): void {
  backendOfThisFile = backend;
}

/** fauxqs, or LocalStack when SQS_TEST_BACKEND=localstack (or useSqsBackend) says so. */
export async function startSqs(): Promise<LocalSqs & { sqs: ReturnType<typeof createSqsClient> }> {
  const local = await startLocalSqs({
    backend: backendOfThisFile ?? (process.env.SQS_TEST_BACKEND === 'localstack' ? 'localstack' : 'fauxqs'),
  });
  return { ...local, sqs: createSqsClient({ endpoint: local.endpoint, region: 'us-east-1' }) };
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

export function envelope(over: Partial<MessageEnvelope> = {}): MessageEnvelope {
  return {
    v: 1,
    function: 'selectHost',
    cluster: 'management',
    apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
    kind: 'Metal3Machine',
    namespace: 'metal3',
    name: 'm-0',
    uid: 'uid-m-0',
    resourceVersion: '1',
    reason: 'modified',
    ...over,
  };
}

export async function until<T>(
  fn: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 10_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
