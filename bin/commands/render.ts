/**
 * `metal3fn render -f MANIFESTS [--machine NAME] [--index N] [-o json|yaml]`: offline preview of
 * the metaData and networkData a Metal3Data would get, with no server. MANIFESTS (a YAML file or a
 * directory of them) holds the Metal3DataTemplate, the Metal3Machine (annotated with its host),
 * its Machine, the BareMetalHost, the IPPools and any existing Metal3Data / IPAddresses. The index
 * and the addresses are allocated as the live system would (lowest free index, unless --index;
 * lowest free address over the existing IPAddresses), and the same code renders.
 */

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { planAddress } from '../../functions/allocate-index/plan-address.ts';
import { lowestFreeIndex } from '../../shared/allocation/index-allocation.ts';
import { dataName, ipClaimName, ownerOfKind } from '../../shared/allocation/objects.ts';
import { belongsToTemplate } from '../../shared/allocation/template-match.ts';
import {
  type BareMetalHost,
  type IPAddress,
  type IPClaim,
  type IPPool,
  type Machine,
  type Metal3Data,
  type Metal3Machine,
  parseIPPool,
  parseMetal3DataTemplate,
} from '../../shared/api/index.ts';
import { HOST_ANNOTATION } from '../../shared/api/wellknown.ts';
import type { AllocatedAddress } from '../../shared/ipam/allocate.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { isMetal3Pool, referencedPools, renderData } from '../../shared/render/index.ts';
import { toSecretYaml } from '../../shared/render/serialize.ts';
import { claimKeys, previewNodeClaim } from './render-claim.ts';

const USAGE = `usage: metal3fn render -f MANIFESTS [--machine NAME] [--index N] [-o json|yaml]
       metal3fn render -f MANIFESTS --machine NS/NAME [--host NAME] [-o json|yaml]

Preview the metaData and networkData of a Metal3DataTemplate for one machine, offline; or, when
--machine names a vMetal NodeClaim of the manifests (NS/NAME), its merged properties, user data
and network data (the host: --host, else the first eligible by name; the address: the lowest free
one; the join token printed as <redacted>).
  -f, --filename   a YAML file or a directory of YAML files (Metal3DataTemplate, Metal3Machine
                   annotated with metal3.io/BareMetalHost, its Machine, the BareMetalHost, IPPools,
                   and any existing Metal3Data and IPAddresses)
  --machine NAME   the Metal3Machine (needed when the manifests hold several)
  --index N        the Metal3Data index (default: the lowest free one among existing Metal3Data)
  --host NAME      for a NodeClaim: the BareMetalHost to preview on (it must be eligible)
  -o, --output     json (default) or yaml`;

/** Bad input: printed as one clear line, exit code 1. */
export class RenderCommandError extends Error {
  override readonly name = 'RenderCommandError';
}

function yamlFiles(path: string): string[] {
  const st = statSync(path);
  if (!st.isDirectory()) return [path];
  return readdirSync(path)
    .filter((f) => /\.ya?ml$/i.test(f))
    .sort()
    .map((f) => join(path, f));
}

/** Every object of the manifests (multi-document YAML; `kind: List` expanded). */
export function loadManifests(path: string): KubeObject[] {
  const out: KubeObject[] = [];
  for (const file of yamlFiles(path)) {
    for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
      if (doc.errors.length > 0) throw new RenderCommandError(`${file}: ${doc.errors[0]!.message}`);
      const value = doc.toJS() as KubeObject | null;
      if (!value || typeof value !== 'object') continue;
      const items =
        value.kind === 'List' && Array.isArray(value.items) ? (value.items as KubeObject[]) : [value];
      for (const item of items) {
        item.metadata ??= {};
        item.metadata.namespace ??= 'default';
        out.push(item);
      }
    }
  }
  return out;
}

const ofKind = (objs: KubeObject[], kind: string) => objs.filter((o) => o.kind === kind);

function pickOne(objs: KubeObject[], kind: string, name: string | undefined, flag: string): KubeObject {
  const all = ofKind(objs, kind);
  if (name !== undefined) {
    const found = all.find((o) => o.metadata.name === name);
    if (!found) throw new RenderCommandError(`${kind} ${JSON.stringify(name)} not found in the manifests`);
    return found;
  }
  if (all.length === 1) return all[0]!;
  if (all.length === 0) throw new RenderCommandError(`no ${kind} in the manifests`);
  throw new RenderCommandError(`${all.length} ${kind} objects in the manifests: choose one with ${flag}`);
}

export interface RenderPreview {
  metaData: Record<string, string>;
  networkData: unknown;
}

export interface PreviewOptions {
  machine?: string | undefined;
  index?: number | undefined;
}

/** The preview itself (pure over the loaded objects). */
export function preview(
  objs: KubeObject[],
  opts: PreviewOptions = {},
): RenderPreview & { index: number; data: string } {
  const m3mRaw = pickOne(objs, 'Metal3Machine', opts.machine, '--machine');
  const m3m = m3mRaw as unknown as Metal3Machine;
  const ns = m3mRaw.metadata.namespace!;
  const inNs = objs.filter((o) => o.metadata.namespace === ns);
  const wanted = (m3m.spec as { dataTemplate?: { name?: string } } | undefined)?.dataTemplate?.name;
  const templateRaw = pickOne(inNs, 'Metal3DataTemplate', wanted, 'spec.dataTemplate of the Metal3Machine');
  const template = parseMetal3DataTemplate(templateRaw);

  const machineName =
    ownerOfKind(m3mRaw, 'Machine')?.name ??
    ofKind(inNs, 'Machine').find(
      (m) =>
        (m.spec as { infrastructureRef?: { name?: string } } | undefined)?.infrastructureRef?.name ===
        m3mRaw.metadata.name,
    )?.metadata.name;
  if (!machineName) {
    throw new RenderCommandError(
      `no Machine owns Metal3Machine ${m3mRaw.metadata.name} (ownerReferences or spec.infrastructureRef)`,
    );
  }
  const machine = pickOne(inNs, 'Machine', machineName, '--machine');
  const hostValue = m3mRaw.metadata.annotations?.[HOST_ANNOTATION];
  if (!hostValue) {
    throw new RenderCommandError(
      `Metal3Machine ${m3mRaw.metadata.name} has no ${HOST_ANNOTATION} annotation (<namespace>/<host>)`,
    );
  }
  const [hostNs, hostName] = hostValue.includes('/') ? hostValue.split('/') : [ns, hostValue];
  const bmh = objs.find(
    (o) => o.kind === 'BareMetalHost' && o.metadata.namespace === hostNs && o.metadata.name === hostName,
  );
  if (!bmh)
    throw new RenderCommandError(
      `BareMetalHost ${hostNs}/${hostName} (from ${HOST_ANNOTATION}) not found in the manifests`,
    );

  const linked = ofKind(inNs, 'Metal3Data')
    .map((d) => d as unknown as Metal3Data)
    .filter((d) => Number.isInteger(d.spec?.index) && belongsToTemplate(template, d));
  // As live: the machine's claim (named after the Metal3Machine) keeps the index it already has.
  const own = linked.find((d) => d.spec.claim?.name === m3mRaw.metadata.name);
  const index = opts.index ?? own?.spec.index ?? lowestFreeIndex(linked.map((d) => d.spec.index));
  const data = dataName(template.metadata.name!, index);

  const objects = {
    machine: machine as unknown as Machine,
    metal3Machine: m3m,
    bmh: bmh as unknown as BareMetalHost,
  };
  const addresses: Record<string, AllocatedAddress> = {};
  const existing = ofKind(inNs, 'IPAddress') as unknown as IPAddress[];
  for (const ref of referencedPools(template.spec, objects)) {
    if (!isMetal3Pool(ref)) {
      throw new RenderCommandError(
        `pool ${ref.name} is a ${ref.kind}.${ref.apiGroup}: only ipam.metal3.io IPPools are supported`,
      );
    }
    const poolRaw = ofKind(inNs, 'IPPool').find((p) => p.metadata.name === ref.name);
    if (!poolRaw)
      throw new RenderCommandError(
        `IPPool ${ns}/${ref.name} referenced by the template not found in the manifests`,
      );
    const pool: IPPool = parseIPPool(poolRaw);
    const claim = {
      metadata: { name: ipClaimName(data, ref.name), namespace: ns },
      spec: { pool: { name: ref.name } },
    } as IPClaim;
    const plan = planAddress({ pool, claim, addresses: existing, claims: [] });
    if (plan.kind === 'reuse') {
      const s = plan.address.spec;
      addresses[ref.name] = {
        address: s.address,
        prefix: s.prefix,
        dnsServers: s.dnsServers ?? [],
        ...(s.gateway ? { gateway: s.gateway } : {}),
      };
    } else {
      addresses[ref.name] = plan.allocated;
    }
  }
  const rendered = renderData(template.spec, { index, namespace: ns, ...objects, addresses });
  return { metaData: rendered.metaData, networkData: rendered.networkData ?? null, index, data };
}

export async function run(argv: string[]): Promise<number> {
  let values: {
    filename?: string;
    machine?: string;
    index?: string;
    host?: string;
    output?: string;
    help?: boolean;
  };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        filename: { type: 'string', short: 'f' },
        machine: { type: 'string' },
        index: { type: 'string' },
        host: { type: 'string' },
        output: { type: 'string', short: 'o', default: 'json' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (e) {
    process.stderr.write(`metal3fn render: ${(e as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (!values.filename) {
    process.stderr.write(`metal3fn render: -f MANIFESTS is required\n\n${USAGE}\n`);
    return 2;
  }
  if (values.output !== 'json' && values.output !== 'yaml') {
    process.stderr.write(`metal3fn render: -o must be json or yaml, got ${JSON.stringify(values.output)}\n`);
    return 2;
  }
  let index: number | undefined;
  if (values.index !== undefined) {
    if (!/^\d+$/.test(values.index)) {
      process.stderr.write(
        `metal3fn render: --index must be a non-negative integer, got ${JSON.stringify(values.index)}\n`,
      );
      return 2;
    }
    index = Number(values.index);
  }
  try {
    const objs = loadManifests(values.filename);
    if (values.machine !== undefined && claimKeys(objs).includes(values.machine)) {
      const claim = await previewNodeClaim(objs, values.machine, values.host);
      const out = { properties: claim.properties, userData: claim.userData, networkData: claim.networkData };
      process.stdout.write(
        values.output === 'yaml' ? toSecretYaml(out) : `${JSON.stringify(out, null, 2)}\n`,
      );
      process.stderr.write(`rendered NodeClaim ${values.machine} on BareMetalHost ${claim.host}\n`);
      if (claim.placeholderTenant)
        process.stderr.write(
          'no tenant kubeconfig Secret in the manifests: the join endpoint and CA hash are placeholders\n',
        );
      return 0;
    }
    if (values.host !== undefined)
      throw new RenderCommandError('--host applies to a NodeClaim (--machine NS/NAME)');
    const result = preview(objs, { machine: values.machine, index });
    const out = { metaData: result.metaData, networkData: result.networkData };
    process.stdout.write(values.output === 'yaml' ? toSecretYaml(out) : `${JSON.stringify(out, null, 2)}\n`);
    process.stderr.write(`rendered ${result.data} (index ${result.index})\n`);
    return 0;
  } catch (e) {
    const err = e as Error;
    // Bad input of every kind (schema, template field, allocation, missing object): one clear line.
    process.stderr.write(`metal3fn render: ${err.message}\n`);
    return 1;
  }
}
