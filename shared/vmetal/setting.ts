/**
 * A NodeClaim's setting, read from the cluster (every vMetal function needs it): its NodeProvider,
 * its NodeType (typeRef, the one chosen before, or the match of its requirements), its
 * NodeEnvironment, the namespace of its hosts and the claim as a host consumer. Missing objects
 * are waits, contradictions bad input (shared/vmetal/errors.ts).
 */
import type { BareMetalHost } from '../api/baremetalhost.ts';
import { apiVersionOf, R } from '../api/resources.ts';
import type { NodeEnvironment } from '../api/vmetal/catalogue.ts';
import { resourceTexts } from '../api/vmetal/common.ts';
import type { NodeClaim } from '../api/vmetal/nodeclaim.ts';
import type { Metal3NodeTypeSpec, NodeProvider } from '../api/vmetal/nodeprovider.ts';
import type { NodeType } from '../api/vmetal/nodetype.ts';
import { NODE_CLAIM_LABEL, NODE_TYPE_LABEL } from '../api/wellknown.ts';
import { CandidateSampler, freeHostSelector } from '../hosts/candidates.ts';
import { consumerLabelValue, type HostConsumer } from '../hosts/consumer.ts';
import type { ObjectReader } from '../kube/client.ts';
import { compileTypeSelection, hostVerdict, type TypeSelection } from './eligibility.ts';
import { missingObject, VMetalInputError } from './errors.ts';
import { environmentName, type PropertyLevels } from './properties.ts';
import { matchNodeType, type TypeCandidate } from './typematch.ts';

export interface ClaimSetting {
  provider: NodeProvider;
  type: NodeType;
  /** The provider's `nodeTypes[]` entry of the type (its labels are Node labels), when present. */
  entry: Metal3NodeTypeSpec | undefined;
  environment: NodeEnvironment | undefined;
  /** The provider's clusterRef.namespace: where the hosts, pools, IPClaims and Secrets live. */
  hostNamespace: string;
  consumer: HostConsumer;
}

/**
 * The claim as a host consumer (VMETAL.md): consumerRef names the claim in its own namespace. With
 * its NodeType (a claim taking a host) the host is labelled with the type too; without (a release)
 * the type label goes whatever its value.
 */
export function claimConsumer(claim: NodeClaim, hostNamespace: string, typeName?: string): HostConsumer {
  return {
    apiVersion: apiVersionOf(R.NodeClaim),
    kind: 'NodeClaim',
    namespace: claim.metadata.namespace!,
    name: claim.metadata.name!,
    uid: claim.metadata.uid,
    hostNamespace,
    labels: {
      [NODE_CLAIM_LABEL]: claim.metadata.uid,
      [NODE_TYPE_LABEL]: typeName === undefined ? undefined : consumerLabelValue(typeName),
    },
  };
}

/** The namespace of a provider's hosts; bad input when unset. */
export function providerHostNamespace(provider: NodeProvider): string {
  const ns = provider.spec.metal3?.clusterRef?.namespace;
  if (!ns)
    throw new VMetalInputError(
      `NodeProvider ${provider.metadata.name} spec.metal3.clusterRef.namespace`,
      'must name the namespace of the BareMetalHosts',
    );
  return ns;
}

export const typeEntryOf = (provider: NodeProvider, typeName: string): Metal3NodeTypeSpec | undefined =>
  provider.spec.metal3?.nodeTypes?.find((t) => t.name === typeName);

/** The property levels of the merge (the host's zone joins once there is a host). */
export function propertyLevels(
  s: Pick<ClaimSetting, 'provider' | 'type' | 'entry' | 'environment'>,
  claim: NodeClaim,
  host?: BareMetalHost,
): PropertyLevels {
  return {
    provider: { name: s.provider.metadata.name!, properties: s.provider.spec.properties },
    type: {
      name: s.type.metadata.name!,
      properties: s.type.spec.properties,
      labels: s.entry?.metadata?.labels,
    },
    environment: s.environment
      ? {
          namespace: s.environment.metadata.namespace,
          name: s.environment.metadata.name!,
          providerRef: s.environment.spec.providerRef,
          properties: s.environment.spec.properties,
        }
      : undefined,
    claim: {
      namespace: claim.metadata.namespace!,
      name: claim.metadata.name!,
      properties: claim.spec.properties,
    },
    host,
  };
}

/** Which NodeType the claim uses: typeRef, else the one recorded in its status, else the match. */
async function claimType(client: ObjectReader, claim: NodeClaim): Promise<NodeType> {
  const named = claim.spec.typeRef || claim.status?.nodeType;
  if (named) {
    const type = await client.get(R.NodeType, undefined, named);
    if (!type)
      throw missingObject('NoNodeTypeAvailable', { kind: 'NodeType', name: named }, ' (spec.typeRef)');
    return type;
  }
  const types = (await client.list(R.NodeType)).items.filter((t) => !t.metadata.deletionTimestamp);
  const providers = new Map<string, NodeProvider | undefined>();
  const candidates: TypeCandidate[] = [];
  for (const t of types) {
    const providerName = t.spec.providerRef ?? '';
    if (claim.spec.providerRef && providerName !== claim.spec.providerRef) continue;
    if (!providers.has(providerName))
      providers.set(providerName, await client.get(R.NodeProvider, undefined, providerName));
    const provider = providers.get(providerName);
    const ns = provider?.spec.metal3?.clusterRef?.namespace;
    if (!provider || !ns) continue;
    let selection: TypeSelection;
    try {
      selection = compileTypeSelection({
        name: t.metadata.name!,
        selector: t.spec.bareMetalHosts?.selector,
        resources: resourceTexts(t.spec.resources),
      });
    } catch {
      continue; // a type with a bad selector offers nothing (its own status says why)
    }
    // "Free capacity" is one eligible host (ADR 018): the candidate pages until one, not every host.
    const probe = new CandidateSampler(
      client,
      ns,
      freeHostSelector(selection.selector),
      (h) => hostVerdict(h, selection).eligible,
    );
    await probe.fill();
    const free = probe.eligible.length;
    candidates.push({
      provider: { name: providerName, properties: provider.spec.properties },
      type: {
        name: t.metadata.name!,
        properties: t.spec.properties,
        labels: typeEntryOf(provider, t.metadata.name!)?.metadata?.labels,
        resources: resourceTexts(t.spec.resources),
        cost: t.spec.cost,
      },
      free,
    });
  }
  const match = matchNodeType(
    {
      providerRef: claim.spec.providerRef,
      requirements: claim.spec.requirements,
      desiredCapacity: resourceTexts(claim.spec.desiredCapacity),
    },
    candidates,
  );
  if (match.kind === 'wait') throw match.wait;
  const type = types.find((t) => t.metadata.name === match.type)!;
  return type;
}

/** Reads the claim's setting; throws VMetalWait or VMetalInputError. */
export async function loadClaimSetting(client: ObjectReader, claim: NodeClaim): Promise<ClaimSetting> {
  const type = await claimType(client, claim);
  const providerName = claim.spec.providerRef || type.spec.providerRef;
  if (!providerName)
    throw new VMetalInputError(
      'spec.providerRef',
      `is unset and NodeType ${type.metadata.name} names no provider`,
    );
  if (claim.spec.providerRef && type.spec.providerRef && type.spec.providerRef !== claim.spec.providerRef)
    throw new VMetalInputError(
      'spec.typeRef',
      `NodeType ${type.metadata.name} belongs to NodeProvider ${type.spec.providerRef}, not ${claim.spec.providerRef}`,
    );
  const provider = await client.get(R.NodeProvider, undefined, providerName);
  if (!provider) throw missingObject('NoNodeTypeAvailable', { kind: 'NodeProvider', name: providerName });
  const hostNamespace = providerHostNamespace(provider);
  const entry = typeEntryOf(provider, type.metadata.name!);
  const partial = { provider, type, entry, environment: undefined };
  const env = environmentName(propertyLevels(partial, claim), claim.spec.environmentRef);
  let environment: NodeEnvironment | undefined;
  if (env) {
    environment = await client.get(R.NodeEnvironment, claim.metadata.namespace, env.name);
    if (!environment)
      throw missingObject('NodeEnvironmentNotFound', {
        kind: 'NodeEnvironment',
        namespace: claim.metadata.namespace,
        name: env.name,
      });
  }
  return {
    provider,
    type,
    entry,
    environment,
    hostNamespace,
    consumer: claimConsumer(claim, hostNamespace, type.metadata.name!),
  };
}
