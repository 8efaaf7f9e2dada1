/**
 * Command-line plumbing shared by the long-running commands (relay, worker, http): SQS settings,
 * function lists, a small metrics/health server, and shutdown on SIGTERM/SIGINT.
 */
import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { FUNCTION_NAMES, type FunctionName, isFunctionName } from '../../events/envelope.ts';
import { messageOf, stringOf } from '../api/json.ts';
import { ensureQueues, type QueueUrls, resolveMainQueues, resolveQueues } from '../queue/ensure.ts';
import { createSqsClient, sqsEndpointFromEnv } from '../queue/sqs.ts';
import { EnvConfigError, envValue, readEnv } from './env.ts';
import type { PipelineMetrics } from './metrics.ts';

export const SQS_OPTIONS = {
  'sqs-endpoint': { type: 'string' },
  region: { type: 'string' },
  'queue-prefix': { type: 'string' },
  'create-queues': { type: 'boolean' },
  'no-create-queues': { type: 'boolean' },
} as const;

export const SQS_HELP = `  --sqs-endpoint URL    SQS endpoint (default AWS_ENDPOINT_URL_SQS, else AWS)
  --region R            AWS region (default AWS_REGION, else us-east-1)
  --queue-prefix P      queue name prefix (default QUEUE_PREFIX or none)
  --create-queues       create the queues if missing (default: only with a custom endpoint)
  --no-create-queues    never create queues (IaC owns them)
`;

/** The metrics/health server of the long-running commands (see startMetricsServerFromArgs). */
export const METRICS_OPTIONS = {
  'metrics-port': { type: 'string' },
  'metrics-host': { type: 'string' },
} as const;

export const METRICS_HELP = `  --metrics-port N      serve /metrics and /healthz on this port (default 0 = off)
  --metrics-host H      (default 127.0.0.1; 0.0.0.0 in a pod)
`;

export type Values = Record<string, string | boolean | undefined>;

/**
 * Parses a command's options (strict, with `--help`/`-h`) and checks the environment (./env.ts).
 * Returns the values, or the exit code the command should return: 0 after printing the help, 2
 * after a usage error with the help, or after naming every environment variable set to a value it
 * does not accept (nothing has started).
 */
export function parseCommandArgs(
  command: string,
  argv: string[],
  options: ParseArgsOptionsConfig,
  help: string,
): Values | number {
  let v: Values;
  try {
    v = parseArgs({
      args: argv,
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      strict: true,
    }).values;
  } catch (e) {
    process.stderr.write(`metal3fn ${command}: ${messageOf(e)}\n\n${help}`);
    return 2;
  }
  if (v.help) {
    process.stdout.write(help);
    return 0;
  }
  return checkEnvAtStart(command) ?? v;
}

/**
 * The start-up check of the environment (./env.ts) for a command: undefined when every variable
 * set is valid, else 2 after naming each bad one.
 */
export function checkEnvAtStart(command: string): number | undefined {
  try {
    readEnv();
    return undefined;
  } catch (e) {
    if (!(e instanceof EnvConfigError)) throw e;
    process.stderr.write(`metal3fn ${command}: ${e.message}\n`);
    return 2;
  }
}

export function parseFunctions(raw: string | undefined): FunctionName[] {
  if (!raw) return [...FUNCTION_NAMES];
  const list = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return list.map((f) => {
    if (!isFunctionName(f)) throw new Error(`unknown function '${f}' (one of ${FUNCTION_NAMES.join(', ')})`);
    return f;
  });
}

export function parsePositiveInt(name: string, raw: string | boolean | undefined, fallback: number): number {
  if (raw === undefined || typeof raw === 'boolean') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0)
    throw new Error(`--${name} must be a non-negative integer, not '${raw}'`);
  return n;
}

/** The SQS client and the queue URLs (created or looked up) the options describe. */
export async function sqsFromOptions(v: Values, functions: readonly FunctionName[]) {
  const endpoint = stringOf(v['sqs-endpoint']) ?? sqsEndpointFromEnv();
  const sqs = createSqsClient({ endpoint, region: stringOf(v.region) });
  const prefix = stringOf(v['queue-prefix']) ?? envValue('QUEUE_PREFIX') ?? '';
  const create = v['no-create-queues'] ? false : v['create-queues'] ? true : endpoint !== undefined;
  const queues: QueueUrls = create
    ? await ensureQueues(sqs, { prefix, functions })
    : await resolveQueues(sqs, { prefix, functions });
  return { sqs, queues, prefix, endpoint };
}

/** For the relay: the main queues only (created with everything else when asked to). */
export async function mainQueuesFromOptions(v: Values, functions: readonly FunctionName[]) {
  const endpoint = stringOf(v['sqs-endpoint']) ?? sqsEndpointFromEnv();
  const sqs = createSqsClient({ endpoint, region: stringOf(v.region) });
  const prefix = stringOf(v['queue-prefix']) ?? envValue('QUEUE_PREFIX') ?? '';
  const create = v['no-create-queues'] ? false : v['create-queues'] ? true : endpoint !== undefined;
  const main = create
    ? (await ensureQueues(sqs, { prefix, functions })).main
    : await resolveMainQueues(sqs, { prefix, functions });
  return { sqs, main };
}

/** /healthz and /metrics on a port of their own (0 = none). */
/** startMetricsServer with the port and host of METRICS_OPTIONS. */
export function startMetricsServerFromArgs(v: Values, metrics: PipelineMetrics) {
  return startMetricsServer(
    parsePositiveInt('metrics-port', v['metrics-port'], 0),
    stringOf(v['metrics-host']) ?? '127.0.0.1',
    metrics,
  );
}

export function startMetricsServer(
  port: number,
  host: string,
  metrics: PipelineMetrics,
  healthy: () => boolean = () => true,
) {
  if (!port) return { close: () => {} };
  const app = new Hono();
  app.get('/healthz', (c) => (healthy() ? c.text('ok') : c.text('unhealthy', 503)));
  app.get('/metrics', async (c) =>
    c.body(await metrics.registry.metrics(), 200, { 'content-type': metrics.registry.contentType }),
  );
  const server = serve({ fetch: app.fetch, port, hostname: host });
  return { close: () => server.close() };
}

/** Resolves on the first SIGTERM or SIGINT (a second one exits at once). */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    let seen = false;
    const on = (sig: NodeJS.Signals) => {
      if (seen) process.exit(130);
      seen = true;
      resolve(sig);
    };
    process.on('SIGTERM', on);
    process.on('SIGINT', on);
  });
}
