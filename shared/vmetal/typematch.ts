/**
 * Which NodeType a claim without `typeRef` gets (issue 19): among the types whose offer satisfies
 * the claim's `requirements` (Karpenter-style NodeSelectorRequirements) and `desiredCapacity`, and
 * that have a free host, the lowest `cost`, then the name.
 *
 * A type offers, per key, a set of values: the built-ins (its name as node-type and instance-type,
 * `kubernetes.io/os=linux`, `karpenter.sh/capacity-type=on-demand`, its provider as
 * `vcluster.com/node-provider`), then its provider's and its own properties (a value `a,b` offers
 * both, as vCluster's NodeType does), then its `metadata.labels`. Host labels are not part of it.
 */
import { VMetalInputError, VMetalWait } from './errors.ts';
import { PROP } from './names.ts';
import { compareQuantity, parseQuantity } from './quantity.ts';

type StringMap = Record<string, string>;

export interface NodeSelectorRequirement {
  key: string;
  operator: string;
  values?: string[] | undefined;
  /** Karpenter's minimum number of distinct values; accepted, not used (one claim is one node). */
  minValues?: number | undefined;
}

export interface TypeCandidate {
  provider: { name: string; properties?: StringMap | undefined };
  type: {
    name: string;
    properties?: StringMap | undefined;
    labels?: StringMap | undefined;
    resources?: StringMap | undefined;
    /** Go's int64 zero value when unset. */
    cost?: number | undefined;
  };
  /** Hosts eligible for the type now; 0 = no free capacity. */
  free: number;
}

export interface ClaimRequest {
  providerRef?: string | undefined;
  requirements?: NodeSelectorRequirement[] | undefined;
  desiredCapacity?: StringMap | undefined;
}

type Operator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt';
const OPERATORS: readonly Operator[] = ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'];
const INTEGER = /^[+-]?\d+$/;

export interface Requirement {
  key: string;
  operator: Operator;
  values: string[];
}

/** Validates a claim's requirements (operator names and value counts as the API server checks them). */
export function parseRequirements(reqs: readonly NodeSelectorRequirement[] | undefined): Requirement[] {
  return (reqs ?? []).map((r, i) => {
    const field = `spec.requirements[${i}]`;
    if (typeof r.key !== 'string' || r.key === '')
      throw new VMetalInputError(`${field}.key`, 'must not be empty');
    const operator = OPERATORS.find((o) => o === r.operator);
    if (operator === undefined) {
      throw new VMetalInputError(
        `${field}.operator`,
        `unknown operator ${JSON.stringify(r.operator)} (use In, NotIn, Exists, DoesNotExist, Gt or Lt)`,
      );
    }
    const values = r.values ?? [];
    const bad = (rule: string) => new VMetalInputError(`${field}.values`, `operator ${operator} ${rule}`);
    if ((operator === 'In' || operator === 'NotIn') && values.length === 0)
      throw bad('needs at least one value');
    if ((operator === 'Exists' || operator === 'DoesNotExist') && values.length > 0)
      throw bad('takes no values');
    if ((operator === 'Gt' || operator === 'Lt') && (values.length !== 1 || !INTEGER.test(values[0]!))) {
      throw bad('needs exactly one integer value');
    }
    return { key: r.key, operator, values: [...values] };
  });
}

/** What a type offers, key -> values. */
export function typeOffer(c: Pick<TypeCandidate, 'provider' | 'type'>): Map<string, Set<string>> {
  const offer = new Map<string, Set<string>>();
  const put = (k: string, values: string[]) => offer.set(k, new Set(values));
  put(PROP.nodeType, [c.type.name]);
  put(PROP.instanceType, [c.type.name]);
  put(PROP.os, ['linux']);
  put(PROP.capacityType, ['on-demand']);
  put(PROP.nodeProvider, [c.provider.name]);
  for (const props of [c.provider.properties, c.type.properties]) {
    for (const [k, v] of Object.entries(props ?? {})) {
      if (k === PROP.nodeType || k === PROP.instanceType || k === PROP.nodeProvider) continue;
      put(k, v.split(','));
    }
  }
  for (const [k, v] of Object.entries(c.type.labels ?? {})) {
    if (!offer.has(k)) put(k, [v]);
    else offer.get(k)!.add(v);
  }
  return offer;
}

/** Whether the offer can satisfy one requirement (some offered value does). */
export function offerSatisfies(offer: Map<string, Set<string>>, r: Requirement): boolean {
  const offered = offer.get(r.key);
  const values = offered ? [...offered] : [];
  switch (r.operator) {
    case 'Exists':
      return offered !== undefined;
    case 'DoesNotExist':
      return offered === undefined;
    case 'In':
      return values.some((v) => r.values.includes(v));
    case 'NotIn':
      return offered === undefined || values.some((v) => !r.values.includes(v));
    case 'Gt':
    case 'Lt': {
      const bound = BigInt(r.values[0]!);
      return values.some(
        (v) => INTEGER.test(v) && (r.operator === 'Gt' ? BigInt(v) > bound : BigInt(v) < bound),
      );
    }
  }
}

/** Whether the type's `resources` cover every resource the claim asks for (a resource it does not list does not). */
function coversCapacity(c: TypeCandidate, desired: StringMap | undefined): boolean {
  for (const [resource, want] of Object.entries(desired ?? {})) {
    const have = c.type.resources?.[resource];
    const haveQ = have === undefined ? undefined : parseQuantity(have);
    if (have !== undefined && haveQ === undefined) {
      throw new VMetalInputError(
        `NodeType ${c.type.name} spec.resources[${JSON.stringify(resource)}]`,
        `${JSON.stringify(have)} is not a quantity`,
      );
    }
    if (haveQ === undefined || compareQuantity(haveQ, parseQuantity(want)!) < 0) return false;
  }
  return true;
}

export type TypeMatch = { kind: 'matched'; type: string } | { kind: 'wait'; wait: VMetalWait };

/** Chooses a NodeType for a claim without `typeRef`; throws VMetalInputError on bad requirements. */
export function matchNodeType(claim: ClaimRequest, candidates: readonly TypeCandidate[]): TypeMatch {
  const requirements = parseRequirements(claim.requirements);
  for (const [resource, want] of Object.entries(claim.desiredCapacity ?? {})) {
    if (parseQuantity(want) === undefined) {
      throw new VMetalInputError(
        `spec.desiredCapacity[${JSON.stringify(resource)}]`,
        `${JSON.stringify(want)} is not a quantity`,
      );
    }
  }
  const ofProvider = candidates.filter((c) => !claim.providerRef || c.provider.name === claim.providerRef);
  const compatible = ofProvider.filter(
    (c) =>
      requirements.every((r) => offerSatisfies(typeOffer(c), r)) && coversCapacity(c, claim.desiredCapacity),
  );
  const free = compatible
    .filter((c) => c.free > 0)
    .sort((a, b) => (a.type.cost ?? 0) - (b.type.cost ?? 0) || (a.type.name < b.type.name ? -1 : 1));
  if (free[0]) return { kind: 'matched', type: free[0].type.name };
  const scope = claim.providerRef ? `of NodeProvider ${claim.providerRef} ` : '';
  if (compatible.length === 0) {
    return {
      kind: 'wait',
      wait: new VMetalWait(
        'NoNodeTypeAvailable',
        `no NodeType ${scope}satisfies spec.requirements and spec.desiredCapacity (${ofProvider.length} considered)`,
      ),
    };
  }
  const names = compatible.map((c) => c.type.name).sort();
  return {
    kind: 'wait',
    wait: new VMetalWait('NoNodeTypeAvailable', `no free host in the matching NodeTypes ${names.join(', ')}`),
  };
}
