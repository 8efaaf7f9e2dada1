/**
 * What every reconcile core receives. Cores are pure of transport: the Lambda, HTTP, local-worker
 * and replay runtimes all build one of these and call the same core.
 */
import type { MessageEnvelope } from '../../events/envelope.ts';
import type { KubeClient } from '../kube/client.ts';
import type { DeliveryReads, SharedReadScopes } from '../kube/shared-reads.ts';
import type { EventRecorder } from '../observability/events.ts';
import type { Logger } from '../observability/logger.ts';
import type { ReconcileResult } from './result.ts';

export interface ProductConfig {
  /** `accept` (seed 000's v1.13 window, default) or `refuse` (v1.14 behaviour). */
  legacyProviderIds: 'accept' | 'refuse';
  /** CAPM3_FAST_TRACK: keep hosts powered on after deprovisioning when cleaning is enabled. */
  fastTrack: boolean;
  /** Safety-net requeue for waits that events normally wake (seconds). */
  safetyRequeueSeconds: number;
  /**
   * allocateIndex spreads concurrent claims of one template by rank (ADR 012). Off, every claim
   * goes for the plain lowest free index: only the allocation benchmark turns it off, to show what
   * the spreading saves.
   */
  indexSpreadByRank: boolean;
  /** The TTL of the bootstrap tokens vMetal creates per tenant cluster (seconds; kubeadm's 24 h). */
  joinTokenTtlSeconds: number;
  /**
   * How long a function reuses an answer about a Cluster or Metal3Cluster it only reads
   * (shared/kube/shared-reads.ts, ADR 024); 0 joins only reads in flight.
   */
  sharedReadMaxAgeMs: number;
}

export const DEFAULT_CONFIG: ProductConfig = {
  legacyProviderIds: 'accept',
  fastTrack: false,
  safetyRequeueSeconds: 60,
  indexSpreadByRank: true,
  joinTokenTtlSeconds: 24 * 3600,
  sharedReadMaxAgeMs: 1000,
};

/** An object by kind, namespace and name. */
export interface ObjectKey {
  kind: string;
  namespace?: string | undefined;
  name: string;
}

/** What allocateIndex counts per allocation it decides (benchmarks and /metrics read them). */
export type AllocationEvent = 'created' | 'alreadyExists' | 'duplicateCreate' | 'reused';

/** Counters the cores report to, when the runtime collects them (prom-client in the commands). */
export interface ReconcileMetrics {
  allocation(resource: 'Metal3Data' | 'IPAddress', event: AllocationEvent): void;
}

export interface ReconcileContext {
  /** The management cluster. */
  client: KubeClient;
  /** A client for a workload cluster, from Secret `<cluster>-kubeconfig` key `value` (cached). */
  workloadClient(namespace: string, clusterName: string): Promise<KubeClient>;
  events: EventRecorder;
  log: Logger;
  config: ProductConfig;
  now(): Date;
  /**
   * The object this delivery is serialized by, when the transport runs one message of its group
   * at a time (SQS FIFO, the local worker, the direct runtime: the object whose FIFO group the
   * message came in); absent where nothing serializes (HTTP/Knative, replay). allocateIndex uses
   * it: serialized by its template or pool, no other allocation of that template or pool runs
   * meanwhile (ADR 012).
   */
  serializedBy?: ObjectKey | undefined;
  metrics?: ReconcileMetrics | undefined;
  /**
   * Reads of the Cluster and Metal3Cluster shared with this function's other deliveries in the
   * process (absent: every read is a GET).
   */
  reads?: DeliveryReads | undefined;
  /** The process's shared reads, one scope per function: dispatch hands each delivery its function's as `reads`. */
  sharedReads?: SharedReadScopes | undefined;
}

/** Is this delivery serialized by that object? */
export const isSerializedBy = (
  ctx: Pick<ReconcileContext, 'serializedBy'>,
  kind: string,
  namespace: string | undefined,
  name: string,
): boolean => {
  const s = ctx.serializedBy;
  return s !== undefined && s.kind === kind && (s.namespace ?? '') === (namespace ?? '') && s.name === name;
};

export type ReconcileFn = (ctx: ReconcileContext, msg: MessageEnvelope) => Promise<ReconcileResult>;
