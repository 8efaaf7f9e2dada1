/** Message envelopes for tests: a default one to vary, and one naming an object of a resource. */
import type { MessageEnvelope } from '../../events/envelope.ts';
import { apiVersionOf, type ResourceType } from '../../shared/api/resources.ts';

/** A selectHost message for Metal3Machine metal3/m-0, with `over` applied. */
export function envelope(over: Partial<MessageEnvelope> = {}): MessageEnvelope {
  return {
    v: 1,
    function: 'selectHost',
    cluster: 'management',
    apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
    kind: 'Metal3Machine',
    namespace: 'metal3',
    name: 'm-0',
    uid: 'uid-m-0',
    resourceVersion: '1',
    reason: 'modified',
    ...over,
  };
}

/** The message the relay would send `fn` about `<ns>/<name>` of resource `t`. */
export function messageFor(
  fn: MessageEnvelope['function'],
  t: ResourceType,
  name: string,
  ns: string | undefined = 'metal3',
): MessageEnvelope {
  return {
    v: 1,
    function: fn,
    cluster: 'management',
    apiVersion: apiVersionOf(t),
    kind: t.kind,
    ...(ns ? { namespace: ns } : {}),
    name,
    reason: 'modified',
  };
}
