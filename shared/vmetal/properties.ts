/**
 * Property merge (issue 19, Behaviour 1): NodeProvider → NodeType → NodeEnvironment → NodeClaim,
 * the most specific level wins; the built-ins rank below all of them, except the node type's name,
 * which is always the real type. The merged built-ins (and the NodeType's `metadata.labels`)
 * are the Node's labels, checked here so a label the kubelet would refuse fails before any host
 * is claimed.
 */
import type { KubeObject } from '../kube/types.ts';
import { labelKeyProblem, labelValueProblem } from '../selectors/labels.ts';
import { propertyField, VMetalInputError } from './errors.ts';
import { PROP } from './names.ts';

export type StringMap = Record<string, string>;

/** The levels that set properties, most general first. */
export interface PropertyLevels {
  provider: { name: string; properties?: StringMap | undefined };
  type: { name: string; properties?: StringMap | undefined; labels?: StringMap | undefined };
  /** The selected NodeEnvironment (see environmentName), when the claim has one. */
  environment?:
    | {
        namespace?: string | undefined;
        name: string;
        providerRef?: string | undefined;
        properties?: StringMap | undefined;
      }
    | undefined;
  claim: { namespace: string; name: string; properties?: StringMap | undefined };
  /** The claim's host once there is one: its zone label is the zone built-in. */
  host?: KubeObject | undefined;
}

export interface MergedProperties {
  /** Every property, keys sorted. */
  properties: StringMap;
  /** Where each property's value came from: `built-in`, `NodeProvider p`, `NodeType t`, ... */
  origins: StringMap;
  /** The Node's labels, keys sorted. */
  nodeLabels: StringMap;
}

/** The built-in keys that are always the type's name, whatever a level sets. */
const TYPE_NAME_KEYS: readonly string[] = [PROP.nodeType, PROP.instanceType];
/** The built-in keys, which (with the NodeType's metadata.labels) are the Node's labels. */
export const BUILT_IN_KEYS: readonly string[] = [
  PROP.nodeType,
  PROP.instanceType,
  PROP.os,
  PROP.zone,
  PROP.capacityType,
];

const sorted = (m: StringMap): StringMap =>
  Object.fromEntries(Object.entries(m).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

function builtIns(typeName: string, host: KubeObject | undefined): StringMap {
  const out: StringMap = {
    [PROP.nodeType]: typeName,
    [PROP.instanceType]: typeName,
    [PROP.os]: 'linux',
    [PROP.capacityType]: 'on-demand',
  };
  const zone = host?.metadata.labels?.[PROP.zone];
  if (zone !== undefined) out[PROP.zone] = zone;
  return out;
}

/**
 * The NodeEnvironment a claim uses: property `vcluster.com/network-environment` (merged from
 * provider, type and claim) beats `spec.environmentRef`. It lives in the claim's namespace.
 */
export function environmentName(
  levels: Pick<PropertyLevels, 'provider' | 'type' | 'claim'>,
  environmentRef: string | undefined,
): { name: string; from: 'property' | 'environmentRef' } | undefined {
  const byProperty =
    levels.claim.properties?.[PROP.networkEnvironment] ??
    levels.type.properties?.[PROP.networkEnvironment] ??
    levels.provider.properties?.[PROP.networkEnvironment];
  if (byProperty) return { name: byProperty, from: 'property' };
  if (environmentRef) return { name: environmentRef, from: 'environmentRef' };
  return undefined;
}

/** Merges the levels; throws VMetalInputError when a Node label would be invalid. */
export function mergeProperties(levels: PropertyLevels): MergedProperties {
  const { provider, type, environment, claim } = levels;
  if (environment?.providerRef && environment.providerRef !== provider.name) {
    throw new VMetalInputError(
      `NodeEnvironment ${environment.namespace ?? claim.namespace}/${environment.name} spec.providerRef`,
      `names NodeProvider ${JSON.stringify(environment.providerRef)}, but the claim's provider is ${JSON.stringify(provider.name)}`,
    );
  }
  const properties: StringMap = {};
  const origins: StringMap = {};
  const set = (values: StringMap | undefined, origin: string) => {
    for (const [k, v] of Object.entries(values ?? {})) {
      if (typeof v !== 'string') continue;
      properties[k] = v;
      origins[k] = origin;
    }
  };
  set(builtIns(type.name, levels.host), 'built-in');
  set(provider.properties, `NodeProvider ${provider.name}`);
  set(type.properties, `NodeType ${type.name}`);
  if (environment) {
    set(
      environment.properties,
      `NodeEnvironment ${environment.namespace ?? claim.namespace}/${environment.name}`,
    );
  }
  set(claim.properties, `NodeClaim ${claim.namespace}/${claim.name}`);
  for (const k of TYPE_NAME_KEYS) {
    properties[k] = type.name;
    origins[k] = 'built-in';
  }
  return {
    properties: sorted(properties),
    origins: sorted(origins),
    nodeLabels: nodeLabels(type, properties, origins),
  };
}

/**
 * The Node's labels: the NodeType's metadata.labels, then the built-in keys with their merged
 * values (a level that sets a built-in key explicitly beats a type label of that key; the type
 * labels beat the built-in defaults).
 */
function nodeLabels(type: PropertyLevels['type'], properties: StringMap, origins: StringMap): StringMap {
  const labels: StringMap = {};
  const where: StringMap = {};
  for (const k of BUILT_IN_KEYS) {
    if (properties[k] === undefined || origins[k] !== 'built-in') continue;
    labels[k] = properties[k];
    where[k] = propertyField(k);
  }
  for (const [k, v] of Object.entries(type.labels ?? {})) {
    if (TYPE_NAME_KEYS.includes(k)) continue;
    labels[k] = v;
    where[k] = `NodeType ${type.name} metadata.labels[${JSON.stringify(k)}]`;
  }
  for (const k of BUILT_IN_KEYS) {
    if (properties[k] === undefined || origins[k] === 'built-in') continue;
    labels[k] = properties[k];
    where[k] = `${propertyField(k)} (set on ${origins[k]})`;
  }
  for (const [k, v] of Object.entries(labels)) {
    const problem = labelKeyProblem(k) ?? labelValueProblem(v) ?? kubeletLabelProblem(k);
    if (problem) throw new VMetalInputError(where[k]!, `not a valid Node label: ${problem}`);
  }
  return sorted(labels);
}

/** Labels in these namespaces the kubelet may set on its own Node (k8s.io/kubelet/pkg/apis). */
const KUBELET_LABELS: ReadonlySet<string> = new Set([
  'kubernetes.io/hostname',
  'kubernetes.io/os',
  'kubernetes.io/arch',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/arch',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'failure-domain.beta.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
]);
const KUBELET_NAMESPACES = ['kubelet.kubernetes.io', 'node.kubernetes.io'];
const inNamespace = (ns: string, base: string) => ns === base || ns.endsWith(`.${base}`);

/**
 * Why the kubelet refuses a label in `--node-labels` (a `kubernetes.io` / `k8s.io` label outside the
 * set a kubelet may self-set, e.g. `node-role.kubernetes.io/worker`), or undefined.
 */
export function kubeletLabelProblem(key: string): string | undefined {
  const slash = key.indexOf('/');
  if (slash < 0) return undefined;
  const ns = key.slice(0, slash);
  if (!inNamespace(ns, 'kubernetes.io') && !inNamespace(ns, 'k8s.io')) return undefined;
  if (KUBELET_LABELS.has(key) || KUBELET_NAMESPACES.some((base) => inNamespace(ns, base))) return undefined;
  return `label key "${key}": the kubelet may not set labels in the kubernetes.io / k8s.io namespaces except kubelet.kubernetes.io/*, node.kubernetes.io/* and the well-known topology, os, arch and instance-type labels`;
}
