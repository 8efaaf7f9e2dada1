/** `metal3fn worker`: long-poll the function queues and run the functions (shared/runtimes/worker.ts). */

import { createLogger } from '../../shared/observability/logger.ts';
import { buildContext, parseLegacyProviderIds } from '../../shared/runtimes/context.ts';
import { PipelineMetrics } from '../../shared/runtimes/metrics.ts';
import {
  METRICS_HELP,
  METRICS_OPTIONS,
  parseCommandArgs,
  parseFunctions,
  parsePositiveInt,
  SQS_HELP,
  SQS_OPTIONS,
  sqsFromOptions,
  startMetricsServerFromArgs,
  untilSignal,
} from '../../shared/runtimes/options.ts';
import { Worker } from '../../shared/runtimes/worker.ts';
import { FUNCTIONS } from '../function-table.ts';

const HELP = `usage: metal3fn worker [options]

  --functions a,b       the functions to run (default all)
  --concurrency N       messages processed at once (default 10)
  --wait S              long-poll wait per receive (default 20)
  --visibility S        visibility while a message runs, extended as it runs (default 60)
  --grace S             on SIGTERM, how long running messages may finish (default 25)
  --no-forward-requeues do not forward due requeue-after messages (another worker or Lambda does)
  --kubeconfig F        management cluster (default METAL3FN_KUBECONFIG, KUBECONFIG, ~/.kube/config, in-cluster)
  --legacy-provider-ids accept|refuse   (default accept)
${METRICS_HELP}${SQS_HELP}`;

export async function run(argv: string[]): Promise<number> {
  const v = parseCommandArgs(
    'worker',
    argv,
    {
      functions: { type: 'string' },
      concurrency: { type: 'string' },
      wait: { type: 'string' },
      visibility: { type: 'string' },
      grace: { type: 'string' },
      'no-forward-requeues': { type: 'boolean' },
      kubeconfig: { type: 'string' },
      'legacy-provider-ids': { type: 'string' },
      ...METRICS_OPTIONS,
      ...SQS_OPTIONS,
    },
    HELP,
  );
  if (typeof v === 'number') return v;
  try {
    const functions = parseFunctions(v.functions as string | undefined);
    const log = createLogger({ base: { component: 'worker' } });
    const metrics = new PipelineMetrics();
    const context = buildContext({
      kubeconfig: v.kubeconfig as string | undefined,
      log,
      metrics,
      component: 'metal3-functions',
      config: v['legacy-provider-ids']
        ? { legacyProviderIds: parseLegacyProviderIds(v['legacy-provider-ids'] as string) }
        : {},
    });
    metrics.observeKubeRequests(context.client.stats);
    const { sqs, queues } = await sqsFromOptions(v, functions);
    const worker = new Worker({
      sqs,
      fns: FUNCTIONS,
      context,
      queues,
      functions,
      concurrency: parsePositiveInt('concurrency', v.concurrency, 10),
      waitTimeSeconds: parsePositiveInt('wait', v.wait, 20),
      visibilityTimeoutSeconds: parsePositiveInt('visibility', v.visibility, 60),
      forwardRequeues: !v['no-forward-requeues'],
      log,
      metrics,
    }).start();
    const server = startMetricsServerFromArgs(v, metrics);
    const sig = await untilSignal();
    log.info('stopping', { signal: sig });
    await worker.stop({ graceMs: parsePositiveInt('grace', v.grace, 25) * 1000 });
    server.close();
    sqs.destroy();
    return 0;
  } catch (e) {
    process.stderr.write(`metal3fn worker: ${(e as Error).message}\n`);
    return 1;
  }
}
