/**
 * What every reconcile core receives. Cores are pure of transport: the Lambda, HTTP, local-worker
 * and replay runtimes all build one of these and call the same core.
 */
import type { MessageEnvelope } from '../../events/envelope.ts';
import type { KubeClient } from '../kube/client.ts';
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
}

export const DEFAULT_CONFIG: ProductConfig = {
  legacyProviderIds: 'accept',
  fastTrack: false,
  safetyRequeueSeconds: 60,
};

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
   * The FIFO message group this message was delivered in, when the transport runs one message
   * of a group at a time (SQS FIFO, the local worker, the direct runtime); absent where nothing
   * serializes (HTTP/Knative, replay). allocateIndex uses it: in its template's or pool's group,
   * no other allocation of that template or pool runs meanwhile (ADR 012).
   */
  deliveryGroup?: string | undefined;
}

export type ReconcileFn = (ctx: ReconcileContext, msg: MessageEnvelope) => Promise<ReconcileResult>;
