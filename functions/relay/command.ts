/** The relay's command line (`metal3fn relay`, and the relay bundle's entry): watch the cluster(s) and send key messages to the function queues. */
import { readFileSync } from 'node:fs';
import { messageOf, stringOf } from '../../shared/api/json.ts';
import { KubeClient } from '../../shared/kube/client.ts';
import { createLogger } from '../../shared/observability/logger.ts';
import { PipelineMetrics } from '../../shared/runtimes/metrics.ts';
import {
  METRICS_HELP,
  METRICS_OPTIONS,
  mainQueuesFromOptions,
  parseCommandArgs,
  parseFunctions,
  parsePositiveInt,
  SQS_HELP,
  SQS_OPTIONS,
  startMetricsServerFromArgs,
  untilSignal,
} from '../../shared/runtimes/options.ts';
import { startRelay } from './relay.ts';
import { HttpCloudEventSink } from './sink-http.ts';
import { RESYNC_DEFAULT_MS } from './watcher.ts';

const HELP = `usage: metal3fn relay [options]

  --kubeconfig F        management cluster (default KUBECONFIG, ~/.kube/config, or in-cluster)
  --namespace NS        watch one namespace only (default all)
  --functions a,b       send only to these functions' queues (default all)
  --resync S            re-send every watched object every S seconds (±10% jitter) from the
                        relay's cache, without a LIST: a safety net for lost messages, not for
                        timing (default 36000 = 10 h, controller-runtime's SyncPeriod; 0 = never;
                        docs/adr/023-relay-resync.md)
  --silence S           reconnect a watch silent for S seconds (default 90)
  --no-workload         do not watch Nodes in workload clusters
  --sink URL            send CloudEvents to this URL (a Knative Broker) instead of SQS
  --sink-token-file F   bearer token for the sink (first line), read again for every request: a
                        projected service-account token for the Broker's audience, which the
                        kubelet rotates (Knative's OIDC sender identity, docs/adr/021)
  --sink-hmac-secret-file F  sign the sink's requests (X-Metal3fn-Signature)
${METRICS_HELP}${SQS_HELP}`;

export async function run(argv: string[]): Promise<number> {
  const v = parseCommandArgs(
    'relay',
    argv,
    {
      kubeconfig: { type: 'string' },
      namespace: { type: 'string' },
      functions: { type: 'string' },
      resync: { type: 'string' },
      silence: { type: 'string' },
      'no-workload': { type: 'boolean' },
      sink: { type: 'string' },
      'sink-token-file': { type: 'string' },
      'sink-hmac-secret-file': { type: 'string' },
      ...METRICS_OPTIONS,
      ...SQS_OPTIONS,
    },
    HELP,
  );
  if (typeof v === 'number') return v;
  try {
    const functions = parseFunctions(stringOf(v.functions));
    const log = createLogger({ base: { component: 'relay' } });
    const metrics = new PipelineMetrics();
    const kubeconfig = stringOf(v.kubeconfig);
    const client = kubeconfig ? KubeClient.fromFile(kubeconfig) : KubeClient.fromDefault();
    metrics.observeKubeRequests(client.stats);
    const firstLine = (v: unknown) => {
      const f = stringOf(v);
      return f ? readFileSync(f, 'utf8').split('\n')[0]!.trim() : undefined;
    };
    const sqsParts = v.sink ? undefined : await mainQueuesFromOptions(v, functions);
    const sinkUrl = stringOf(v.sink);
    const sink = sinkUrl
      ? new HttpCloudEventSink({
          url: sinkUrl,
          bearerToken: v['sink-token-file'] ? () => firstLine(v['sink-token-file']) : undefined,
          hmacSecret: firstLine(v['sink-hmac-secret-file']),
          functions,
          log,
        })
      : undefined;
    const relay = await startRelay({
      client,
      sqs: sqsParts?.sqs,
      queues: sqsParts ? { main: sqsParts.main } : undefined,
      sink,
      log,
      metrics,
      namespace: stringOf(v.namespace),
      workloads: v['no-workload'] ? false : undefined,
      watch: {
        resyncMs: parsePositiveInt('resync', v.resync, RESYNC_DEFAULT_MS / 1000) * 1000,
        silenceMs: parsePositiveInt('silence', v.silence, 90) * 1000,
      },
    });
    const server = startMetricsServerFromArgs(v, metrics);
    const sig = await untilSignal();
    log.info('stopping', { signal: sig });
    server.close();
    await relay.stop();
    sqsParts?.sqs.destroy();
    return 0;
  } catch (e) {
    process.stderr.write(`metal3fn relay: ${messageOf(e)}\n`);
    return 1;
  }
}
