/**
 * Shared setup for the data-path integration tests: a reconcile context on the embedded API
 * server, builders for the objects a Metal3Data renders from, and a small driver that plays the
 * relay's part (runs each core on the objects its events would name until nothing changes).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { reconcile as allocateIndex, reconcileRelease } from '../../functions/allocate-index/core.ts';
import { reconcile as renderData } from '../../functions/render-data/core.ts';
import type { Nic } from '../../shared/api/baremetalhost.ts';
import { apiVersionOf, envelopeOf, R, type Resource } from '../../shared/api/resources.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import type { ReconcileContext } from '../../shared/reconcile/context.ts';
import type { ReconcileResult } from '../../shared/reconcile/result.ts';
import { clusterContext } from './context.ts';
import { messageFor } from './messages.ts';

export const NS = 'metal3';
export const CLUSTER = 'cluster';
export const ROOT = join(import.meta.dirname, '..', '..');

export const makeCtx = (client: KubeClient): ReconcileContext => clusterContext(client);
export const msg = messageFor;

export const allocate = (
  ctx: ReconcileContext,
  t: Resource,
  name: string,
  ns = NS,
): Promise<ReconcileResult> => allocateIndex(ctx, msg('allocateIndex', t, name, ns));
export const render = (ctx: ReconcileContext, name: string, ns = NS): Promise<ReconcileResult> =>
  renderData(ctx, msg('renderData', R.Metal3Data, name, ns));
export const release = (
  ctx: ReconcileContext,
  t: Resource,
  name: string,
  ns = NS,
): Promise<ReconcileResult> => reconcileRelease(ctx, msg('deprovision', t, name, ns));

/** The seed-001 template of test/fixtures/render (a deep copy, optionally renamed/changed). */
export function seedTemplate(name = 'nodepool-1', mutate?: (spec: any) => void): KubeObject {
  const t = parse(
    readFileSync(join(ROOT, 'test/fixtures/render/seed001/10-template.yaml'), 'utf8'),
  ) as KubeObject;
  t.metadata = { name, namespace: NS };
  mutate?.(t.spec);
  return t;
}

export function pool(name: string, spec: Record<string, unknown>): KubeObject {
  return { metadata: { name, namespace: NS }, spec: { namePrefix: name, ...spec } };
}

export const POOL_1 = pool('pool-1', {
  pools: [{ start: '192.168.0.10', end: '192.168.0.250' }],
  prefix: 24,
  gateway: '192.168.0.1',
  dnsServers: ['8.8.8.8'],
});
export const POOL6_1 = pool('pool6-1', {
  pools: [{ start: '2001:db8::10', end: '2001:db8::ffff' }],
  prefix: 64,
  gateway: '2001:db8::1',
});

export interface MachineSet {
  machine: KubeObject;
  m3m: KubeObject;
  bmh: KubeObject;
  claim: KubeObject;
}

/**
 * A Machine, its Metal3Machine (owned by it, annotated with the host), a BareMetalHost with NICs
 * eth0/eth1, and the Metal3DataClaim `<name>` owned by the Metal3Machine, for `template`.
 */
export async function createMachine(
  client: KubeClient,
  name: string,
  template: string,
  opts: {
    hostAnnotations?: Record<string, string>;
    machineAnnotations?: Record<string, string>;
    nics?: Nic[];
  } = {},
): Promise<MachineSet> {
  const labels = { 'cluster.x-k8s.io/cluster-name': CLUSTER };
  const machine: KubeObject = await client.create(envelopeOf(R.Machine), {
    metadata: {
      name: `${name}-machine`,
      namespace: NS,
      labels: { ...labels, mylabelkey: `label-${name}` },
      annotations: {
        myannotationkey: `annotation-${name}`,
        'primary-mac': '52:54:00:aa:bb:01',
        ...opts.machineAnnotations,
      },
    },
    spec: {
      clusterName: CLUSTER,
      bootstrap: { dataSecretName: `${name}-bootstrap` },
      infrastructureRef: {
        apiVersion: apiVersionOf(R.Metal3Machine),
        kind: 'Metal3Machine',
        name,
        namespace: NS,
      },
    },
  });
  let bmh = await client.create(R.BareMetalHost, {
    metadata: { name: `${name}-host`, namespace: NS, annotations: opts.hostAnnotations ?? {} },
    spec: { online: true, bootMACAddress: '52:54:00:aa:bb:00' },
  });
  bmh = await client.replaceStatus(R.BareMetalHost, {
    ...bmh,
    status: {
      provisioning: { state: 'provisioned' },
      hardware: {
        nics: opts.nics ?? [
          { name: 'eth0', mac: '52:54:00:aa:bb:00', ip: '172.22.0.10' },
          { name: 'eth1', mac: '52:54:00:aa:bb:02' },
        ],
      },
    },
  });
  const m3m = await client.create(R.Metal3Machine, {
    metadata: {
      name,
      namespace: NS,
      labels,
      annotations: { 'metal3.io/BareMetalHost': `${NS}/${name}-host` },
      ownerReferences: [
        {
          apiVersion: apiVersionOf(R.Machine),
          kind: 'Machine',
          name: machine.metadata.name!,
          uid: machine.metadata.uid!,
          controller: true,
        },
      ],
    },
    spec: {
      image: {
        url: 'http://172.22.0.1/img.raw',
        checksum: 'http://172.22.0.1/img.raw.sha256sum',
        checksumType: 'sha256',
        format: 'raw',
      },
      dataTemplate: { name: template },
    },
  });
  const claim = await createClaim(client, name, template, m3m);
  return { machine, m3m, bmh, claim };
}

export function createClaim(
  client: KubeClient,
  name: string,
  template: string,
  m3m?: KubeObject,
): Promise<KubeObject> {
  return client.create(R.Metal3DataClaim, {
    metadata: {
      name,
      namespace: NS,
      labels: { 'cluster.x-k8s.io/cluster-name': CLUSTER },
      ...(m3m
        ? {
            ownerReferences: [
              {
                apiVersion: apiVersionOf(R.Metal3Machine),
                kind: 'Metal3Machine',
                name: m3m.metadata.name!,
                uid: m3m.metadata.uid!,
                controller: true,
              },
            ],
          }
        : {}),
    },
    spec: { template: { name: template } },
  });
}

/**
 * Plays the relay: runs allocateIndex on every claim and IPClaim, renderData on every Metal3Data
 * and the release on deleting objects, until a round writes nothing (bounded).
 */
export async function converge(ctx: ReconcileContext, rounds = 12): Promise<number> {
  const { client } = ctx;
  for (let round = 1; round <= rounds; round++) {
    const before = client.stats.writes;
    for (const c of (await client.list(R.Metal3DataClaim, NS)).items)
      await allocate(ctx, R.Metal3DataClaim, c.metadata.name!);
    for (const c of (await client.list(R.IPClaim, NS)).items)
      await allocate(ctx, R.IPClaim, c.metadata.name!);
    for (const d of (await client.list(R.Metal3Data, NS)).items) await render(ctx, d.metadata.name!);
    for (const t of (await client.list(R.Metal3DataTemplate, NS)).items)
      await allocate(ctx, R.Metal3DataTemplate, t.metadata.name!);
    if (client.stats.writes === before) return round;
  }
  throw new Error(`no convergence in ${rounds} rounds`);
}

/**
 * The index allocated to claim `name`, read back from the cluster: the Metal3Data its
 * status.renderedData names, and that object's spec.index (undefined when there is none).
 */
export async function indexOf(client: KubeClient, claim: string, ns = NS): Promise<number | undefined> {
  const c = await client.get(R.Metal3DataClaim, ns, claim);
  const data = (c?.status as { renderedData?: { name?: string } } | undefined)?.renderedData?.name;
  const d = data ? await client.get(R.Metal3Data, ns, data) : undefined;
  return (d?.spec as { index?: number } | undefined)?.index;
}

/** The address allocated to IPClaim `name`: the IPAddress its status.address names, its spec.address. */
export async function addressOf(client: KubeClient, claim: string, ns = NS): Promise<string | undefined> {
  const c = await client.get(R.IPClaim, ns, claim);
  const a = (c?.status as { address?: { name?: string } } | undefined)?.address?.name;
  const obj = a ? await client.get(R.IPAddress, ns, a) : undefined;
  return (obj?.spec as { address?: string } | undefined)?.address;
}

export const names = (items: KubeObject[]): string[] => items.map((o) => o.metadata.name!).sort();

export const secretText = (s: KubeObject | undefined, key: string): string =>
  Buffer.from(String((s?.data as Record<string, string> | undefined)?.[key] ?? ''), 'base64').toString(
    'utf8',
  );

/** A Metal3DataTemplate's status maps, copied (empty when absent). */
export interface TemplateMaps {
  indexes: Record<string, string>;
  dataNames: Record<string, string>;
}
export async function templateMaps(client: KubeClient, name = 'nodepool-1', ns = NS): Promise<TemplateMaps> {
  const t = await client.get(R.Metal3DataTemplate, ns, name);
  const s = t?.status as Partial<TemplateMaps> | undefined;
  return { indexes: { ...s?.indexes }, dataNames: { ...s?.dataNames } };
}
