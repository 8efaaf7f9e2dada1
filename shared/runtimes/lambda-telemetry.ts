/**
 * A Lambda function's logs and metrics, through Powertools for AWS Lambda: the cores' logger
 * (`ctx.log`) is Powertools Logger under our Logger interface, and the outcomes, durations and kube
 * client requests of an invocation are written as CloudWatch EMF when it ends, with only bounded
 * dimensions (shared/observability/metric-names.ts): `function` on every metric, then `outcome`,
 * or `verb`, `resource` and `code`. Powertools loads on the first event, not at import.
 */
import type { Context } from 'aws-lambda';
import type { FunctionName } from '../../events/envelope.ts';
import type { RequestStats } from '../kube/stats.ts';
import { EmfBatch } from '../observability/emf.ts';
import type { Logger } from '../observability/logger.ts';
import {
  type DeliveryOutcome,
  MESSAGES,
  METRICS_NAMESPACE,
  RECONCILE_DURATION,
  REST_CLIENT_DURATION,
  REST_CLIENT_REQUESTS,
  restClientLabels,
} from '../observability/metric-names.ts';
import { powertoolsLogger } from '../observability/powertools-logger.ts';
import { envValue } from './env.ts';

/** What became of one record, and how long its function ran (undefined when none ran). */
export interface Delivery {
  outcome: DeliveryOutcome;
  seconds: number | undefined;
}

export interface LambdaTelemetry {
  readonly log: Logger;
  /** At the start of an invocation: its context (function_name, request id, cold_start) on every line. */
  begin(context: Context | undefined): void;
  delivered(d: Delivery): void;
  /** Exports the requests `stats` records (once per RequestStats, however often it is passed). */
  observeKube(stats: RequestStats): void;
  /** At the end of an invocation: writes its metrics. */
  flush(): void;
}

export const SERVICE_NAME = 'metal3-functions';

export async function loadLambdaTelemetry(
  fn: FunctionName,
  env: NodeJS.ProcessEnv = process.env,
): Promise<LambdaTelemetry> {
  const [{ Logger, LogLevel }, { Metrics }] = await Promise.all([
    import('@aws-lambda-powertools/logger'),
    import('@aws-lambda-powertools/metrics'),
  ]);
  const serviceName = envValue('POWERTOOLS_SERVICE_NAME', env) ?? SERVICE_NAME;
  // LOG_LEVEL as every runtime reads it (lower case too; Powertools alone takes upper case only).
  const named = (envValue('POWERTOOLS_LOG_LEVEL', env) ?? envValue('LOG_LEVEL', env) ?? '').toUpperCase();
  const logLevel = Object.values(LogLevel).find((l) => l === named);
  const logger = new Logger({ serviceName, ...(logLevel ? { logLevel } : {}) });
  const metrics = new Metrics({
    serviceName,
    namespace: envValue('POWERTOOLS_METRICS_NAMESPACE', env) ?? METRICS_NAMESPACE,
  });
  // The bounded dimensions only: Powertools' default `service` dimension goes, `function` comes.
  metrics.clearDefaultDimensions();
  metrics.setDefaultDimensions({ function: fn });
  const emf = new EmfBatch(metrics);
  const observed = new WeakSet<RequestStats>();
  return {
    log: powertoolsLogger(logger, { function: fn }),
    begin(context) {
      if (context) logger.addContext(context);
    },
    delivered({ outcome, seconds }) {
      emf.count(MESSAGES, { outcome });
      if (seconds !== undefined) emf.seconds(RECONCILE_DURATION, {}, seconds);
    },
    observeKube(stats) {
      if (observed.has(stats)) return;
      observed.add(stats);
      stats.observe((o) => {
        const labels = restClientLabels(o);
        emf.count(REST_CLIENT_REQUESTS, labels);
        if (o.seconds !== undefined)
          emf.seconds(REST_CLIENT_DURATION, { verb: labels.verb, resource: labels.resource }, o.seconds);
      });
    },
    flush: () => emf.flush(),
  };
}
