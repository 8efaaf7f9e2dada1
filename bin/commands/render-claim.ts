/**
 * `metal3fn render -f MANIFESTS --machine NS/NAME [--host NAME]` for a vMetal NodeClaim: offline,
 * the same decisions renderData and selectHost make, over the manifests instead of a cluster (an
 * ObjectReader serving them through the same schemas). The host is the one `--host` names (as if
 * pinned), else the first eligible by name; the address is the lowest free one of the claim's
 * network given the IPAddresses in the manifests; the join's token is `<redacted>`, and without
 * the tenant's kubeconfig Secret in the manifests its endpoint and CA hash are placeholders.
 */

import { planAddress } from '../../functions/allocate-index/plan-address.ts';
import { renderClaimData } from '../../functions/render-data/nodeclaim.ts';
import { desiredNodeType } from '../../functions/select-host/nodeprovider.ts';
import type { BareMetalHost } from '../../shared/api/baremetalhost.ts';
import type { IPAddress, IPPool } from '../../shared/api/index.ts';
import { parseObject } from '../../shared/api/parse.ts';
import { R, type Resource } from '../../shared/api/resources.ts';
import { resourceTexts } from '../../shared/api/vmetal/common.ts';
import { type NodeClaim, parseNodeClaim } from '../../shared/api/vmetal/nodeclaim.ts';
import type { NodeProvider } from '../../shared/api/vmetal/nodeprovider.ts';
import type { ObjectReader } from '../../shared/kube/client.ts';
import type { KubeList, KubeObject } from '../../shared/kube/types.ts';
import { chooseClaimHost, compileTypeSelection } from '../../shared/vmetal/eligibility.ts';
import { outcomeOf } from '../../shared/vmetal/errors.ts';
import { loadClaimInputs } from '../../shared/vmetal/inputs.ts';
import { tenantTarget } from '../../shared/vmetal/jointoken.ts';
import { PROP } from '../../shared/vmetal/names.ts';
import {
  type AddressAssignment,
  ipClaimName,
  poolNameFor,
  poolSpecFor,
  serverList,
} from '../../shared/vmetal/network.ts';
import { parseNetworkDataText } from '../../shared/vmetal/networkdata.ts';
import { mergeProperties } from '../../shared/vmetal/properties.ts';
import { loadClaimSetting, propertyLevels } from '../../shared/vmetal/setting.ts';
import { checkClaimTemplates } from '../../shared/vmetal/templates.ts';

/** Bad input or a wait (a missing SSHKey, no eligible host): one clear line, exit code 1. */
export class ClaimPreviewError extends Error {
  override readonly name = 'ClaimPreviewError';
}

/** Placeholders for a tenant whose kubeconfig Secret is not in the manifests. */
const PLACEHOLDER_CA_HASH = `sha256:${'0'.repeat(64)}`;
/** A token of the right form that buildJoin prints as `<redacted>`. */
const REDACTED_TOKEN = 'abcdef.0123456789abcdef';

export interface ClaimPreview {
  properties: Record<string, string>;
  userData: string;
  networkData: unknown;
  host: string;
  /** The tenant endpoint and CA hash are placeholders (no kubeconfig Secret in the manifests). */
  placeholderTenant: boolean;
}

/** Reads over the manifests (cluster-scoped kinds ignore the namespace the loader defaulted). */
export function manifestReader(objs: readonly KubeObject[]): ObjectReader {
  const matches = (t: Resource, o: KubeObject, namespace: string | undefined) =>
    o.kind === t.kind && (!t.namespaced || namespace === undefined || o.metadata.namespace === namespace);
  const parse = <T extends KubeObject>(t: Resource<T>, o: KubeObject): T =>
    parseObject(
      t.schema,
      t.kind,
      t.namespaced ? o : { ...o, metadata: { ...o.metadata, namespace: undefined } },
    );
  return {
    get: async <T extends KubeObject>(t: Resource<T>, namespace: string | undefined, name: string) => {
      const o = objs.find((x) => matches(t, x, namespace) && x.metadata.name === name);
      return o ? parse(t, o) : undefined;
    },
    list: async <T extends KubeObject>(t: Resource<T>, namespace?: string): Promise<KubeList<T>> => ({
      items: objs.filter((x) => matches(t, x, namespace)).map((x) => parse(t, x)),
      resourceVersion: '',
    }),
  };
}

/** The NodeTypes the providers' entries make (as selectHost would), where the manifests lack them. */
function withNodeTypes(objs: readonly KubeObject[]): KubeObject[] {
  const out = [...objs];
  for (const raw of objs.filter((o) => o.kind === 'NodeProvider')) {
    const provider = parseObject(R.NodeProvider.schema, 'NodeProvider', raw) as NodeProvider;
    for (const entry of provider.spec.metal3?.nodeTypes ?? []) {
      if (!out.some((o) => o.kind === 'NodeType' && o.metadata.name === entry.name))
        out.push(desiredNodeType(provider, entry));
    }
  }
  return out;
}

/** `NS/NAME` of the NodeClaims in the manifests. */
export const claimKeys = (objs: readonly KubeObject[]): string[] =>
  objs.filter((o) => o.kind === 'NodeClaim').map((o) => `${o.metadata.namespace}/${o.metadata.name}`);

export async function previewNodeClaim(
  manifests: readonly KubeObject[],
  key: string,
  hostName: string | undefined,
): Promise<ClaimPreview> {
  const objs = withNodeTypes(manifests);
  const reader = manifestReader(objs);
  const [namespace, name] = key.split('/');
  const raw = objs.find(
    (o) => o.kind === 'NodeClaim' && o.metadata.namespace === namespace && o.metadata.name === name,
  );
  if (!raw) throw new ClaimPreviewError(`NodeClaim ${key} not found in the manifests`);
  const claim: NodeClaim = parseNodeClaim({
    ...raw,
    metadata: { uid: 'preview', ...raw.metadata },
  });
  try {
    const setting = await loadClaimSetting(reader, claim);
    const before = mergeProperties(propertyLevels(setting, claim));
    const inputs = await loadClaimInputs(reader, claim, before.properties);
    await checkClaimTemplates(inputs);

    const hosts = [...(await reader.list(R.BareMetalHost, setting.hostNamespace)).items].sort((a, b) =>
      (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''),
    );
    const choice = chooseClaimHost(
      hosts,
      {
        type: compileTypeSelection({
          name: setting.type.metadata.name!,
          selector: setting.type.spec.bareMetalHosts?.selector,
          resources: resourceTexts(setting.type.spec.resources),
        }),
        namespace: setting.hostNamespace,
        consumer: setting.consumer,
        serverName: hostName ?? (before.properties[PROP.serverName] || undefined),
      },
      // The first eligible host by name (the live choice is random among them).
      () => 0,
    );
    if (choice.kind === 'wait') throw choice.wait;
    const host: BareMetalHost = choice.host;
    const merged = mergeProperties(propertyLevels(setting, claim, host));
    const assignment = inputs.network
      ? await previewAddress(reader, setting, claim, inputs.network, merged.properties)
      : undefined;

    let placeholderTenant = false;
    const parts = { claim, host, merged, inputs, assignment };
    const rendered = await renderClaimData({
      ...parts,
      redactToken: true,
      join: async () => {
        const secretName = `${claim.spec.vClusterRef}-kubeconfig`;
        if (!(await reader.get(R.Secret, claim.metadata.namespace, secretName))) {
          placeholderTenant = true;
          return {
            endpoint: `${claim.spec.vClusterRef}.tenant.invalid:443`,
            caCertHash: PLACEHOLDER_CA_HASH,
            token: REDACTED_TOKEN,
          };
        }
        const noTenant = async (): Promise<ObjectReader> => {
          throw new ClaimPreviewError(
            `Secret ${claim.metadata.namespace}/${secretName}: the kubeconfig has no certificate-authority-data (a preview cannot read the tenant's kube-root-ca.crt)`,
          );
        };
        const target = await tenantTarget(
          reader,
          noTenant,
          claim.metadata.namespace!,
          claim.spec.vClusterRef,
        );
        return { ...target, token: REDACTED_TOKEN };
      },
    });
    return {
      properties: merged.properties,
      userData: rendered.userData,
      networkData:
        rendered.networkData === undefined ? null : parseNetworkDataText(rendered.networkData, 'networkData'),
      host: host.metadata.name!,
      placeholderTenant,
    };
  } catch (e) {
    const outcome = outcomeOf(e);
    if (outcome) throw new ClaimPreviewError(`NodeClaim ${key}: ${outcome.message}`);
    throw e;
  }
}

/** The lowest free address of the claim's network, given the IPAddresses in the manifests. */
async function previewAddress(
  reader: ObjectReader,
  setting: Awaited<ReturnType<typeof loadClaimSetting>>,
  claim: NodeClaim,
  network: NonNullable<Awaited<ReturnType<typeof loadClaimInputs>>['network']>,
  props: Readonly<Record<string, string>>,
): Promise<AddressAssignment> {
  const ns = setting.hostNamespace;
  const poolName = poolNameFor(setting.provider.metadata.name!, network);
  const pool: IPPool = (await reader.get(R.IPPool, ns, poolName)) ?? {
    metadata: { name: poolName, namespace: ns },
    spec: poolSpecFor(network, poolName),
  };
  const ipClaim = {
    metadata: {
      name: ipClaimName({ namespace: claim.metadata.namespace!, name: claim.metadata.name! }),
      namespace: ns,
    },
    spec: { pool: { name: poolName } },
  };
  const addresses: IPAddress[] = (await reader.list(R.IPAddress, ns)).items;
  const plan = planAddress({ pool, claim: ipClaim, addresses, claims: [] });
  const a = plan.kind === 'reuse' ? plan.address.spec : plan.allocated;
  return {
    address: a.address,
    prefix: a.prefix,
    gateway: a.gateway ?? undefined,
    dnsServers: serverList(props, PROP.dnsServers),
    ntpServers: serverList(props, PROP.ntpServers),
  };
}
