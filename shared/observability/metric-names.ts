/**
 * The names and labels of the metrics every runtime exports, and the bounding of their label
 * values: Prometheus (prom-client) on the long-running processes and CloudWatch EMF dimensions on
 * Lambda use the same names, so one dashboard or alarm definition reads both. Every label value is
 * one of a fixed set (a function, an outcome, a verb, a resource, a status code); nothing that names
 * an object ever becomes one, or the number of series would grow with the objects.
 */
import { K } from '../api/kinds.ts';
import { type RequestObservation, VERBS } from '../kube/stats.ts';

/** client-go's names (k8s.io/client-go/tools/metrics), labelled by our verb and resource. */
export const REST_CLIENT_REQUESTS = 'rest_client_requests_total';
export const REST_CLIENT_DURATION = 'rest_client_request_duration_seconds';
/** client-go's latency buckets for rest_client_request_duration_seconds. */
export const REST_CLIENT_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

/** Messages a function handled, by outcome. */
export const MESSAGES = 'metal3fn_messages_total';
/** Time a function took for one message. */
export const RECONCILE_DURATION = 'metal3fn_reconcile_duration_seconds';

/** CloudWatch namespace of the Lambda functions' metrics (POWERTOOLS_METRICS_NAMESPACE overrides). */
export const METRICS_NAMESPACE = 'Metal3Functions';

/** What became of a delivery on Lambda: acknowledged, acknowledged for a later record of its key (coalesced), sent round again, left to the queue's retry, or dead-lettered. */
export const DELIVERY_OUTCOMES = [
  'done',
  'coalesced',
  'requeue',
  'retry',
  'terminal',
  'dead-letter',
] as const;
export type DeliveryOutcome = (typeof DELIVERY_OUTCOMES)[number];

/** A label value outside its fixed set. */
export const OTHER = 'other';
/** client-go's code label for a request that got no response. */
export const NO_RESPONSE = '<error>';

const VERB_SET: ReadonlySet<string> = new Set(VERBS);
const RESOURCES: ReadonlySet<string> = new Set(Object.values(K).map((t) => t.plural));

const oneOf = (set: ReadonlySet<string>, v: string): string => (set.has(v) ? v : OTHER);

/** An HTTP status as a label: `200`, `404`, ...; `<error>` for no response; `other` for anything else. */
export function codeLabel(code: number): string {
  if (code === 0) return NO_RESPONSE;
  return Number.isInteger(code) && code >= 100 && code <= 599 ? String(code) : OTHER;
}

/** The labels of rest_client_requests_total; rest_client_request_duration_seconds takes verb and resource. */
export function restClientLabels(o: RequestObservation): { verb: string; resource: string; code: string } {
  return { verb: oneOf(VERB_SET, o.verb), resource: oneOf(RESOURCES, o.resource), code: codeLabel(o.code) };
}
