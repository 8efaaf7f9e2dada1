/**
 * Prometheus metrics of the pipeline (prom-client), one registry per process: the HTTP runtime
 * serves it on /metrics, the relay and worker commands on their --metrics-port. The names shared
 * with Lambda's EMF metrics come from shared/observability/metric-names.ts.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { RequestStats } from '../kube/stats.ts';
import {
  MESSAGES,
  RECONCILE_DURATION,
  REST_CLIENT_BUCKETS,
  REST_CLIENT_DURATION,
  REST_CLIENT_REQUESTS,
  restClientLabels,
} from '../observability/metric-names.ts';
import type { AllocationEvent, ReconcileMetrics } from '../reconcile/context.ts';

export class PipelineMetrics implements ReconcileMetrics {
  readonly registry: Registry;
  /** Dispatch outcomes: done, requeue, terminal, retry, malformed. */
  readonly messages: Counter<'function' | 'outcome'>;
  readonly duration: Histogram<'function'>;
  readonly relayEvents: Counter<'kind' | 'type'>;
  readonly relayRelists: Counter<'kind' | 'cause'>;
  readonly relayWatchRestarts: Counter<'kind' | 'cause'>;
  readonly sent: Counter<'function'>;
  readonly sendFailures: Counter<'function'>;
  readonly coalesced: Counter<'function'>;
  readonly batches: Counter;
  readonly buffered: Gauge;
  readonly inFlightBatches: Gauge;
  readonly inFlightMessages: Gauge;
  /** What allocateIndex decided per allocation: created, alreadyExists, duplicateCreate, reused. */
  readonly allocations: Counter<'resource' | 'event'>;
  /** Our kube client's requests, by verb, resource and HTTP status (client-go's metric). */
  readonly restRequests: Counter<'verb' | 'resource' | 'code'>;
  readonly restDuration: Histogram<'verb' | 'resource'>;

  constructor(registry: Registry = new Registry()) {
    this.registry = registry;
    const registers = [registry];
    this.messages = new Counter({
      name: MESSAGES,
      help: 'Messages dispatched to a function, by outcome',
      labelNames: ['function', 'outcome'],
      registers,
    });
    this.duration = new Histogram({
      name: RECONCILE_DURATION,
      help: 'Time a function took for one message',
      labelNames: ['function'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.relayEvents = new Counter({
      name: 'metal3fn_relay_events_total',
      help: 'Watch events seen by the relay (synthesized ones included)',
      labelNames: ['kind', 'type'],
      registers,
    });
    this.relayRelists = new Counter({
      name: 'metal3fn_relay_relists_total',
      help: 'Re-lists by cause: start, gone (410), error (a resync lists nothing, ADR 023)',
      labelNames: ['kind', 'cause'],
      registers,
    });
    this.relayWatchRestarts = new Counter({
      name: 'metal3fn_relay_watch_restarts_total',
      help: 'Watch reconnects by cause: closed, silence, error',
      labelNames: ['kind', 'cause'],
      registers,
    });
    this.sent = new Counter({
      name: 'metal3fn_relay_messages_sent_total',
      help: 'Messages accepted by SQS',
      labelNames: ['function'],
      registers,
    });
    this.sendFailures = new Counter({
      name: 'metal3fn_relay_send_failures_total',
      help: 'Messages SQS refused (re-buffered and retried)',
      labelNames: ['function'],
      registers,
    });
    this.coalesced = new Counter({
      name: 'metal3fn_relay_messages_coalesced_total',
      help: 'Messages replaced in the buffer by a newer one for the same key',
      labelNames: ['function'],
      registers,
    });
    this.batches = new Counter({
      name: 'metal3fn_relay_batches_total',
      help: 'SendMessageBatch calls',
      registers,
    });
    this.buffered = new Gauge({
      name: 'metal3fn_relay_buffered',
      help: 'Messages waiting to be sent',
      registers,
    });
    this.inFlightBatches = new Gauge({
      name: 'metal3fn_relay_in_flight_batches',
      help: 'SendMessageBatch calls under way',
      registers,
    });
    this.inFlightMessages = new Gauge({
      name: 'metal3fn_worker_in_flight',
      help: 'Messages a worker is running now',
      registers,
    });
    this.allocations = new Counter({
      name: 'metal3fn_allocations_total',
      help: 'Index and address allocation steps by what happened (created, alreadyExists, duplicateCreate, reused)',
      labelNames: ['resource', 'event'],
      registers,
    });
    this.restRequests = new Counter({
      name: REST_CLIENT_REQUESTS,
      help: 'Kubernetes API requests of the kube client, by verb, resource and HTTP status (<error>: no response)',
      labelNames: ['verb', 'resource', 'code'],
      registers,
    });
    this.restDuration = new Histogram({
      name: REST_CLIENT_DURATION,
      help: 'Kubernetes API request latency of the kube client, by verb and resource (watches not timed)',
      labelNames: ['verb', 'resource'],
      buckets: REST_CLIENT_BUCKETS,
      registers,
    });
  }

  allocation(resource: 'Metal3Data' | 'IPAddress', event: AllocationEvent): void {
    this.allocations.inc({ resource, event });
  }

  /** Exports every request `stats` records from now on (the process's kube clients share one). */
  observeKubeRequests(stats: RequestStats): () => void {
    return stats.observe((o) => {
      const labels = restClientLabels(o);
      this.restRequests.inc(labels);
      if (o.seconds !== undefined)
        this.restDuration.observe({ verb: labels.verb, resource: labels.resource }, o.seconds);
    });
  }
}
