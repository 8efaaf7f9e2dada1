/**
 * Who holds a BareMetalHost. The host lock (claim.ts, release.ts) is written for any consumer: a
 * Metal3Machine, a vMetal NodeClaim, or any other kind, named by its API group, kind, namespace
 * and name. The consumerRef on the host is authoritative; the labels a claim writes with it (the
 * consumer label and the consumer's own, e.g. the cluster name) only make it findable.
 */
import { createHash } from 'node:crypto';
import type { BareMetalHost } from '../api/baremetalhost.ts';
import { apiVersionOf, R } from '../api/resources.ts';
import { CLUSTER_NAME_LABEL } from '../api/wellknown.ts';
import { labelValueProblem } from '../selectors/labels.ts';

export interface HostConsumer {
  /** `<group>/<version>` of the consumer's kind (the version is ignored when comparing). */
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  uid?: string | undefined;
  /**
   * Where the hosts it may take live, when not in its own namespace (a vMetal NodeClaim lives in
   * its project's namespace, its hosts in the NodeProvider's): the consumerRef then names the
   * consumer's namespace explicitly.
   */
  hostNamespace?: string | undefined;
  /**
   * Labels the claim writes on the host beside the consumer label, and the release removes again
   * while they still carry these values (a value someone else wrote since is left alone). A label
   * whose value is unknown (undefined) is removed whatever its value.
   */
  labels?: Readonly<Record<string, string | undefined>>;
}

export type ConsumerRef = {
  apiVersion?: string | undefined;
  kind?: string | undefined;
  name?: string | undefined;
  namespace?: string | undefined;
  uid?: string | undefined;
};

const groupOf = (apiVersion: string | undefined): string =>
  apiVersion?.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';

/** The host's consumerRef, or undefined when it has none. */
export const hostConsumerRef = (h: BareMetalHost): ConsumerRef | undefined =>
  h.spec?.consumerRef ?? undefined;

/** The consumerRef a claim writes. */
export const consumerRefOf = (c: HostConsumer): ConsumerRef => ({
  apiVersion: c.apiVersion,
  kind: c.kind,
  name: c.name,
  namespace: c.namespace,
  ...(c.uid ? { uid: c.uid } : {}),
});

/**
 * consumerRef names this consumer: name, namespace (the host's when the ref has none), kind and API
 * group; the version is ignored (a v1beta2 ref names the same object). When both the ref and the
 * consumer carry a uid they must match: a later object of the same name does not hold its
 * predecessor's host (CAPM3's refs carry none, so for Metal3Machines the name decides).
 */
export function isHeldBy(
  ref: ConsumerRef | undefined,
  c: Pick<HostConsumer, 'apiVersion' | 'kind' | 'namespace' | 'name' | 'uid'>,
  hostNamespace?: string,
): boolean {
  if (!ref) return false;
  return (
    ref.kind === c.kind &&
    ref.name === c.name &&
    (ref.namespace || hostNamespace) === c.namespace &&
    groupOf(ref.apiVersion) === groupOf(c.apiVersion) &&
    (!ref.uid || !c.uid || ref.uid === c.uid)
  );
}

/** The namespace whose hosts a consumer takes. */
export const hostNamespaceOf = (c: Pick<HostConsumer, 'namespace' | 'hostNamespace'>): string =>
  c.hostNamespace ?? c.namespace;

/** The host's consumerRef names `c`. */
export const hostHeldBy = (
  h: BareMetalHost,
  c: Pick<HostConsumer, 'apiVersion' | 'kind' | 'namespace' | 'name' | 'uid'>,
) => isHeldBy(hostConsumerRef(h), c, h.metadata.namespace);

/**
 * The consumer label's value: the consumer's name, or (a name over 63 characters is not a valid
 * label value) `sha256-` and 56 hex digits of the name's digest.
 */
export function consumerLabelValue(name: string): string {
  if (!labelValueProblem(name)) return name;
  return `sha256-${createHash('sha256').update(name).digest('hex').slice(0, 56)}`;
}

/**
 * A Metal3Machine as a host consumer: its claim also writes the cluster-name label, and its
 * consumerRef carries no uid (as CAPM3 writes it).
 */
export const metal3MachineConsumer = (
  m: { name: string; namespace: string },
  clusterName?: string | undefined,
): HostConsumer => ({
  apiVersion: apiVersionOf(R.Metal3Machine),
  kind: 'Metal3Machine',
  namespace: m.namespace,
  name: m.name,
  labels: { [CLUSTER_NAME_LABEL]: clusterName },
});
