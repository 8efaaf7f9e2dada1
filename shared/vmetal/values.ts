/**
 * The `.Values` of user-data and network-data templates (issue 19, Behaviour 4), as plain data.
 * vCluster Platform hands templates Go structs, so the NodeClaim and the Project use Go field names
 * (`.Values.NodeClaim.Name`, `.Values.NodeClaim.Spec.TypeRef`), and every field is present with
 * Go's zero value when unset (`""`, `false`, `{}`, `[]`): a template that reads an unset field gets
 * what Go gives, not a missing-key error. `BareMetalHost` is the object as the API returns it
 * (lower-case JSON keys: `index .Values.BareMetalHost "spec" "bootMACAddress"`).
 */

import { recordOf } from '../api/json.ts';
import type { KubeObject } from '../kube/types.ts';

export const DEFAULT_PROJECT_PREFIX = 'p-';

/** The project a namespace belongs to: the namespace without the prefix (as is when it has none). */
export function projectName(namespace: string, prefix = DEFAULT_PROJECT_PREFIX): string {
  return prefix !== '' && namespace.startsWith(prefix) && namespace.length > prefix.length
    ? namespace.slice(prefix.length)
    : namespace;
}

export interface GoTaint {
  Key: string;
  Value: string;
  Effect: string;
}

export interface GoNodeClaim {
  Kind: string;
  APIVersion: string;
  Name: string;
  GenerateName: string;
  Namespace: string;
  UID: string;
  ResourceVersion: string;
  Generation: number;
  Labels: Record<string, string>;
  Annotations: Record<string, string>;
  Finalizers: string[];
  Spec: {
    ProviderRef: string;
    TypeRef: string;
    EnvironmentRef: string;
    VClusterRef: string;
    ControlPlane: boolean;
    Properties: Record<string, string>;
    Taints: GoTaint[];
    StartupTaints: GoTaint[];
    KubeletArgs: Record<string, string>;
    /** Quantities as their text (`"4"`, `"16Gi"`). */
    DesiredCapacity: Record<string, string>;
    Requirements: { Key: string; Operator: string; Values: string[] }[];
    Power: string;
  };
  Status: { Phase: string; Reason: string; Message: string };
}

export interface TemplateValues {
  NodeClaim: GoNodeClaim;
  Project: { Name: string };
  /** The merged properties. */
  Properties: Record<string, string>;
  /** The public keys of `vcluster.com/ssh-keys`. */
  SSHKeys: string[];
  BareMetalHost?: Record<string, unknown>;
  /** The claim's address; `""`, 0, `""` when its properties set no network. */
  AllocatedIP: string;
  PrefixLength: number;
  Gateway: string;
}

export interface ValuesInput {
  /** The NodeClaim as the API returns it. */
  claim: KubeObject;
  properties: Readonly<Record<string, string>>;
  sshKeys: readonly string[];
  host?: KubeObject | undefined;
  address?: { address: string; prefix: number; gateway?: string | undefined } | undefined;
  /** The project namespace prefix; default `p-`. */
  projectPrefix?: string | undefined;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const strMap = (v: unknown): Record<string, string> =>
  v !== null && typeof v === 'object' && !Array.isArray(v)
    ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, typeof x === 'string' ? x : String(x)]))
    : {};
const list = (v: unknown): Record<string, unknown>[] =>
  Array.isArray(v) ? v.filter((x): x is Record<string, unknown> => x !== null && typeof x === 'object') : [];
const taints = (v: unknown): GoTaint[] =>
  list(v).map((t) => ({ Key: str(t.key), Value: str(t.value), Effect: str(t.effect) }));

function goNodeClaim(claim: KubeObject): GoNodeClaim {
  const m = claim.metadata;
  const spec = recordOf(claim.spec);
  const status = recordOf(claim.status);
  return {
    Kind: str(claim.kind),
    APIVersion: str(claim.apiVersion),
    Name: str(m.name),
    GenerateName: str(m.generateName),
    Namespace: str(m.namespace),
    UID: str(m.uid),
    ResourceVersion: str(m.resourceVersion),
    Generation: typeof m.generation === 'number' ? m.generation : 0,
    Labels: strMap(m.labels),
    Annotations: strMap(m.annotations),
    Finalizers: Array.isArray(m.finalizers) ? [...m.finalizers] : [],
    Spec: {
      ProviderRef: str(spec.providerRef),
      TypeRef: str(spec.typeRef),
      EnvironmentRef: str(spec.environmentRef),
      VClusterRef: str(spec.vClusterRef),
      ControlPlane: spec.controlPlane === true,
      Properties: strMap(spec.properties),
      Taints: taints(spec.taints),
      StartupTaints: taints(spec.startupTaints),
      KubeletArgs: strMap(spec.kubeletArgs),
      DesiredCapacity: strMap(spec.desiredCapacity),
      Requirements: list(spec.requirements).map((r) => ({
        Key: str(r.key),
        Operator: str(r.operator),
        Values: Array.isArray(r.values) ? r.values.map(String) : [],
      })),
      Power: str(spec.power),
    },
    Status: { Phase: str(status.phase), Reason: str(status.reason), Message: str(status.message) },
  };
}

/** The template's `.Values`. Copies everything: a template can never change the inputs. */
export function templateValues(input: ValuesInput): TemplateValues {
  const values: TemplateValues = {
    NodeClaim: goNodeClaim(input.claim),
    Project: {
      Name: projectName(str(input.claim.metadata.namespace), input.projectPrefix ?? DEFAULT_PROJECT_PREFIX),
    },
    Properties: { ...input.properties },
    SSHKeys: [...input.sshKeys],
    AllocatedIP: input.address?.address ?? '',
    PrefixLength: input.address?.prefix ?? 0,
    Gateway: input.address?.gateway ?? '',
  };
  if (input.host) values.BareMetalHost = structuredClone(input.host) as Record<string, unknown>;
  return values;
}
