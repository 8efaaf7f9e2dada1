/**
 * Builds the ReconcileContext every runtime hands to the cores: the management KubeClient (from a
 * kubeconfig file, KUBECONFIG / ~/.kube/config, or the in-cluster service account), the workload
 * client cache, the Event recorder, the logger and the product configuration.
 */
import { KubeClient } from '../kube/client.ts';
import { decodeKubeconfig } from '../kube/kubeconfig-text.ts';
import { SharedReadScopes } from '../kube/shared-reads.ts';
import { createWorkloadClientCache, type WorkloadClientCache } from '../kube/workload.ts';
import { createEventRecorder, type EventRecorder, noEvents } from '../observability/events.ts';
import { createLogger, type Logger } from '../observability/logger.ts';
import {
  DEFAULT_CONFIG,
  type ProductConfig,
  type ReconcileContext,
  type ReconcileMetrics,
} from '../reconcile/context.ts';
import { envValue, readEnv } from './env.ts';

export interface RuntimeContextOptions {
  /** An existing client (tests, dev); otherwise one is built from `kubeconfig` or the defaults. */
  client?: KubeClient | undefined;
  /** Path of a kubeconfig file; absent: METAL3FN_KUBECONFIG (contents), KUBECONFIG, ~/.kube/config, or in-cluster. */
  kubeconfig?: string | undefined;
  log?: Logger | undefined;
  /** false: record no Kubernetes Events (replays that must not write). */
  events?: EventRecorder | false | undefined;
  config?: Partial<ProductConfig> | undefined;
  /** Component name on Events and logs. */
  component?: string | undefined;
  now?: (() => Date) | undefined;
  /** Where the cores report their counters (the command's PipelineMetrics). */
  metrics?: ReconcileMetrics | undefined;
}

export interface RuntimeContext extends ReconcileContext {
  workloads: WorkloadClientCache;
}

export function buildContext(opts: RuntimeContextOptions = {}): RuntimeContext {
  const component = opts.component ?? 'metal3-functions';
  // First: a bad setting is refused before anything is built from the environment.
  const config = { ...DEFAULT_CONFIG, ...productConfigFromEnv(), ...opts.config };
  const inline = envValue('METAL3FN_KUBECONFIG');
  const client =
    opts.client ??
    (inline && !opts.kubeconfig
      ? // The whole kubeconfig in an env var (plain or base64), where there is no file.
        KubeClient.fromString(decodeKubeconfig(inline), { fieldManager: component })
      : undefined) ??
    (opts.kubeconfig
      ? KubeClient.fromFile(opts.kubeconfig, { fieldManager: component })
      : KubeClient.fromDefault({ fieldManager: component }));
  const log = opts.log ?? createLogger({ base: { component } });
  const workloads = createWorkloadClientCache(client);
  const events =
    opts.events === false ? noEvents : (opts.events ?? createEventRecorder(client, component, log));
  return {
    client,
    workloads,
    workloadClient: (namespace, clusterName) => workloads.get(namespace, clusterName),
    events,
    log,
    config,
    now: opts.now ?? (() => new Date()),
    sharedReads: new SharedReadScopes(client, { maxAgeMs: config.sharedReadMaxAgeMs }),
    ...(opts.metrics ? { metrics: opts.metrics } : {}),
  };
}

/**
 * The product settings of the environment (the table in ./env.ts): LEGACY_PROVIDER_IDS,
 * CAPM3_FAST_TRACK, SAFETY_REQUEUE_SECONDS, VMETAL_JOIN_TOKEN_TTL_SECONDS, SHARED_READ_MAX_AGE_MS.
 * Unset ones are absent (the defaults apply); any variable of the table set to a value it does not
 * accept throws EnvConfigError, so a runtime never runs on a default it was told not to use.
 */
export function productConfigFromEnv(env: NodeJS.ProcessEnv = process.env): Partial<ProductConfig> {
  const e = readEnv(env);
  const out: Partial<ProductConfig> = {};
  if (e.LEGACY_PROVIDER_IDS) out.legacyProviderIds = e.LEGACY_PROVIDER_IDS;
  if (e.CAPM3_FAST_TRACK) out.fastTrack = e.CAPM3_FAST_TRACK === 'true';
  if (e.SAFETY_REQUEUE_SECONDS !== undefined) out.safetyRequeueSeconds = e.SAFETY_REQUEUE_SECONDS;
  if (e.SHARED_READ_MAX_AGE_MS !== undefined) out.sharedReadMaxAgeMs = e.SHARED_READ_MAX_AGE_MS;
  if (e.VMETAL_JOIN_TOKEN_TTL_SECONDS !== undefined)
    out.joinTokenTtlSeconds = e.VMETAL_JOIN_TOKEN_TTL_SECONDS;
  return out;
}

/** Parses `--legacy-provider-ids=accept|refuse` values; throws on anything else. */
export function parseLegacyProviderIds(v: string): 'accept' | 'refuse' {
  if (v === 'accept' || v === 'refuse') return v;
  throw new Error(`--legacy-provider-ids must be accept or refuse, not '${v}'`);
}
