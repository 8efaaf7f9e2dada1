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
  const inline = process.env.METAL3FN_KUBECONFIG;
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
  const config = { ...DEFAULT_CONFIG, ...productConfigFromEnv(), ...opts.config };
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
 * LEGACY_PROVIDER_IDS=accept|refuse, CAPM3_FAST_TRACK=true|false, SAFETY_REQUEUE_SECONDS=N,
 * VMETAL_JOIN_TOKEN_TTL_SECONDS=N, SHARED_READ_MAX_AGE_MS=N.
 */
export function productConfigFromEnv(env: NodeJS.ProcessEnv = process.env): Partial<ProductConfig> {
  const out: Partial<ProductConfig> = {};
  const legacy = env.LEGACY_PROVIDER_IDS ?? env.METAL3FN_LEGACY_PROVIDER_IDS;
  if (legacy === 'accept' || legacy === 'refuse') out.legacyProviderIds = legacy;
  if (env.CAPM3_FAST_TRACK !== undefined) out.fastTrack = env.CAPM3_FAST_TRACK === 'true';
  const safety = Number(env.SAFETY_REQUEUE_SECONDS);
  if (Number.isFinite(safety) && safety > 0) out.safetyRequeueSeconds = safety;
  const shared = env.SHARED_READ_MAX_AGE_MS;
  if (shared !== undefined && /^\d+$/.test(shared)) out.sharedReadMaxAgeMs = Number(shared);
  const ttl = Number(env.VMETAL_JOIN_TOKEN_TTL_SECONDS);
  // Under an hour a token could expire between rendering and the node's first boot.
  if (Number.isInteger(ttl) && ttl >= 3600) out.joinTokenTtlSeconds = ttl;
  return out;
}

/** Parses `--legacy-provider-ids=accept|refuse` values; throws on anything else. */
export function parseLegacyProviderIds(v: string): 'accept' | 'refuse' {
  if (v === 'accept' || v === 'refuse') return v;
  throw new Error(`--legacy-provider-ids must be accept or refuse, not '${v}'`);
}
