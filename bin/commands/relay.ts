/** `metal3fn relay`: watch the cluster(s) and send key messages to the function queues (functions/relay). */
import { parseArgs } from 'node:util';
import { startRelay } from '../../functions/relay/relay.ts';
import { KubeClient } from '../../shared/kube/client.ts';
import { createLogger } from '../../shared/observability/logger.ts';
import { PipelineMetrics } from '../../shared/runtimes/metrics.ts';
import {
  mainQueuesFromOptions,
  parseFunctions,
  parsePositiveInt,
  SQS_HELP,
  SQS_OPTIONS,
  startMetricsServer,
  untilSignal,
  type Values,
} from '../../shared/runtimes/options.ts';

const HELP = `usage: metal3fn relay [options]

  --kubeconfig F        management cluster (default KUBECONFIG, ~/.kube/config, or in-cluster)
  --namespace NS        watch one namespace only (default all)
  --functions a,b       send only to these functions' queues (default all)
  --resync S            re-list every S seconds, with ±10% jitter (default 600; 0 = never)
  --silence S           reconnect a watch silent for S seconds (default 90)
  --no-workload         do not watch Nodes in workload clusters
  --metrics-port N      serve /metrics and /healthz on this port (default 0 = off)
  --metrics-host H      (default 127.0.0.1; 0.0.0.0 in a pod)
${SQS_HELP}`;

export async function run(argv: string[]): Promise<number> {
  let v: Values;
  try {
    v = parseArgs({
      args: argv,
      options: {
        kubeconfig: { type: 'string' },
        namespace: { type: 'string' },
        functions: { type: 'string' },
        resync: { type: 'string' },
        silence: { type: 'string' },
        'no-workload': { type: 'boolean' },
        'metrics-port': { type: 'string' },
        'metrics-host': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        ...SQS_OPTIONS,
      },
      strict: true,
    }).values;
  } catch (e) {
    process.stderr.write(`metal3fn relay: ${(e as Error).message}\n\n${HELP}`);
    return 2;
  }
  if (v.help) {
    process.stdout.write(HELP);
    return 0;
  }
  try {
    const functions = parseFunctions(v.functions as string | undefined);
    const log = createLogger({ base: { component: 'relay' } });
    const metrics = new PipelineMetrics();
    const client = v.kubeconfig ? KubeClient.fromFile(v.kubeconfig as string) : KubeClient.fromDefault();
    const { sqs, main } = await mainQueuesFromOptions(v, functions);
    const relay = await startRelay({
      client,
      sqs,
      queues: { main },
      log,
      metrics,
      namespace: v.namespace as string | undefined,
      workloads: v['no-workload'] ? false : undefined,
      watch: {
        resyncMs: parsePositiveInt('resync', v.resync, 600) * 1000,
        silenceMs: parsePositiveInt('silence', v.silence, 90) * 1000,
      },
    });
    const server = startMetricsServer(
      parsePositiveInt('metrics-port', v['metrics-port'], 0),
      (v['metrics-host'] as string | undefined) ?? '127.0.0.1',
      metrics,
    );
    const sig = await untilSignal();
    log.info('stopping', { signal: sig });
    server.close();
    await relay.stop();
    sqs.destroy();
    return 0;
  } catch (e) {
    process.stderr.write(`metal3fn relay: ${(e as Error).message}\n`);
    return 1;
  }
}
