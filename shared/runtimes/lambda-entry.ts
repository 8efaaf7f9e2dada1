/**
 * What a function's Lambda `handler` is, built once for every function: each
 * `functions/<step>/lambda.ts` is one line over this.
 *
 * On the first event it loads Powertools (logs and EMF metrics, ./lambda-telemetry.ts); on every
 * event it reads the kubeconfig from its source (./kubeconfig-source.ts: Secrets Manager or SSM,
 * cached for its max age, or the environment) and builds a new client and context when the value
 * changed, so a rotated credential is used without a redeploy.
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { FunctionName } from '../../events/envelope.ts';
import { messageOf } from '../api/json.ts';
import { KubeClient } from '../kube/client.ts';
import { RequestStats } from '../kube/stats.ts';
import type { ReconcileFn } from '../reconcile/context.ts';
import { buildContext, type RuntimeContext } from './context.ts';
import { readEnv } from './env.ts';
import { kubeconfigSource } from './kubeconfig-source.ts';
import { createSqsHandler, sqsClientOnFirstUse } from './lambda.ts';
import { type LambdaTelemetry, loadLambdaTelemetry } from './lambda-telemetry.ts';

/** The SQS handler of one function: its core, the context built on the first event. */
export function functionHandler(
  fn: FunctionName,
  reconcile: ReconcileFn,
): (event: SQSEvent, context?: Context) => Promise<SQSBatchResponse> {
  // At module load: a bad setting fails the function's INIT instead of running on a default.
  const env = readEnv();
  const kubeconfig = kubeconfigSource();
  // One set of counters across the clients a rotation replaces: its observer is registered once.
  const stats = new RequestStats();
  let loading: Promise<LambdaTelemetry> | undefined;
  let telemetry: LambdaTelemetry | undefined;
  let context: RuntimeContext | undefined;
  let contextText: string | undefined;

  const handle = createSqsHandler({
    fns: { [fn]: reconcile },
    context: () => {
      if (!context) throw new Error('no context: the handler builds it before the first record');
      return context;
    },
    sqs: sqsClientOnFirstUse,
    naming: { prefix: env.QUEUE_PREFIX },
    requeueUrl: env.REQUEUE_QUEUE_URL ?? '',
    // The queue's redrive limit, set next to it in serverless.yml (ADR 017).
    maxReceiveCount: env.MAX_RECEIVE_COUNT,
    onDelivered: (d) => telemetry?.delivered(d),
  });

  /** The context on the current kubeconfig; a failed refresh keeps the last one (and says so). */
  const refresh = async (t: LambdaTelemetry): Promise<void> => {
    let text: string | undefined;
    try {
      text = await kubeconfig.get();
    } catch (e) {
      if (!context) throw e;
      t.log.warn('kubeconfig not refreshed; the last one stays in use', {
        source: kubeconfig.description,
        error: messageOf(e),
      });
      return;
    }
    if (context && text === contextText) return;
    const opts = { fieldManager: fn, stats };
    const client = text === undefined ? KubeClient.fromDefault(opts) : KubeClient.fromString(text, opts);
    if (context) t.log.info('kubeconfig changed: new client', { source: kubeconfig.description });
    context = buildContext({ client, component: fn, log: t.log });
    contextText = text;
  };

  return async (event, lambdaContext) => {
    if (!loading) {
      loading = loadLambdaTelemetry(fn);
      loading.catch(() => {
        loading = undefined;
      });
    }
    const t = await loading;
    if (!telemetry) {
      telemetry = t;
      t.observeKube(stats);
    }
    t.begin(lambdaContext);
    try {
      await refresh(t);
      return await handle(event, lambdaContext);
    } finally {
      t.flush();
    }
  };
}
