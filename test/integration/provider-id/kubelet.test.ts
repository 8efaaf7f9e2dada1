/**
 * The kubelet simulator against two embedded API servers, and resolveProviderID end to end on the
 * Nodes it registers (label, no-label, cloud-provider and legacy modes; deletion on deprovision).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcile } from '../../../functions/resolve-provider-id/core.ts';
import {
  type KubeletMode,
  type KubeletSimulator,
  startKubeletSimulator,
} from '../../../infra/local/sim/kubelet.ts';
import { R } from '../../../shared/api/resources.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { createWorkloadClientCache } from '../../../shared/kube/workload.ts';
import {
  createCluster,
  createMachine,
  type Env,
  getMachine,
  msg,
  NS,
  nodeProviderID,
  startEnv,
} from './harness.ts';

let env: Env;
let sim: KubeletSimulator;
const modes = new Map<string, KubeletMode>();

beforeAll(async () => {
  env = await startEnv();
  await createCluster(env.mgmt.client);
  const cache = createWorkloadClientCache(env.mgmt.client);
  sim = startKubeletSimulator({
    management: env.mgmt.client,
    workloadClient: (ns, c) => cache.get(ns, c),
    mode: (h) => modes.get(h.metadata.name!) ?? 'label',
  });
  await sim.ready;
});
afterAll(async () => {
  sim?.stop();
  await env?.stop();
});

/** Resolves with the Node once `pred` holds, driven by the workload cluster's watch (no polling). */
async function nodeWhen(
  w: KubeClient,
  name: string,
  pred: (n: KubeObject | undefined) => boolean,
): Promise<KubeObject | undefined> {
  const list = await w.list(R.Node);
  const current = list.items.find((n) => n.metadata.name === name);
  if (pred(current)) return current;
  return new Promise((resolve, reject) => {
    let ctrl: AbortController | undefined;
    const timer = setTimeout(() => {
      ctrl?.abort();
      reject(new Error(`Node ${name}: condition not reached`));
    }, 15_000);
    void w
      .watch(
        R.Node,
        undefined,
        { resourceVersion: list.resourceVersion, fieldSelector: `metadata.name=${name}` },
        (ev) => {
          if (ev.type === 'BOOKMARK') return;
          const obj = ev.type === 'DELETED' ? undefined : ev.object;
          if (pred(obj)) {
            clearTimeout(timer);
            ctrl?.abort();
            resolve(obj);
          }
        },
        () => {},
      )
      .then((c) => {
        ctrl = c;
      });
  });
}

async function setState(host: string, state: string) {
  const h = await env.mgmt.client.get(R.BareMetalHost, NS, host);
  await env.mgmt.client.replaceStatus(R.BareMetalHost, {
    ...h!,
    status: { ...(h!.status as object), provisioning: { state } },
  });
}

describe('kubelet simulator', () => {
  it('label mode: Node named from the metaData Secret, labelled with the host uid; deleted on deprovision', async () => {
    const { hostUid } = await createMachine(env.mgmt.client, {
      name: 'k-a',
      host: 'h-k-a',
      state: 'provisioning',
    });
    await env.mgmt.client.create(R.Secret, {
      metadata: { name: 'k-a-metadata', namespace: NS },
      type: 'infrastructure.cluster.x-k8s.io/secret',
      data: {
        metaData: Buffer.from('name: "node-from-metadata"\nproviderid: "metal3/h-k-a/k-a"\n').toString(
          'base64',
        ),
      },
    });
    await env.mgmt.client.patch(R.BareMetalHost, NS, 'h-k-a', {
      spec: { metaData: { name: 'k-a-metadata', namespace: NS } },
    });
    await setState('h-k-a', 'provisioned');
    const node = await nodeWhen(env.workload.client, 'node-from-metadata', (n) => Boolean(n));
    expect(node?.metadata.labels).toMatchObject({
      'metal3.io/uuid': hostUid,
      'kubernetes.io/hostname': 'node-from-metadata',
    });
    expect((node?.spec as { providerID?: string } | undefined)?.providerID).toBeUndefined();
    const fresh = await env.workload.client.get(R.Node, undefined, 'node-from-metadata');
    expect((fresh?.status as { conditions?: unknown[] } | undefined)?.conditions).toContainEqual(
      expect.objectContaining({ type: 'Ready', status: 'True' }),
    );

    // resolveProviderID on the registered Node (Step 3)
    expect((await reconcile(env.ctx(), msg('k-a'))).kind).toBe('done');
    expect(await nodeProviderID(env.workload.client, 'node-from-metadata')).toBe('metal3://metal3/h-k-a/k-a');

    await setState('h-k-a', 'deprovisioning');
    expect(await nodeWhen(env.workload.client, 'node-from-metadata', (n) => !n)).toBeUndefined();
  });

  it('prefers the meta_data the BMO simulator computed (annotation sim.metal3.io/meta-data)', async () => {
    const { hostUid } = await createMachine(env.mgmt.client, {
      name: 'k-ann',
      host: 'h-k-ann',
      state: 'provisioning',
    });
    await env.mgmt.client.patch(R.BareMetalHost, NS, 'h-k-ann', {
      metadata: {
        annotations: { 'sim.metal3.io/meta-data': JSON.stringify({ name: 'from-bmo-sim', uuid: hostUid }) },
      },
    });
    await setState('h-k-ann', 'provisioned');
    const node = await nodeWhen(env.workload.client, 'from-bmo-sim', (n) => Boolean(n));
    expect(node?.metadata.labels).toMatchObject({
      'metal3.io/uuid': hostUid,
      'kubernetes.io/hostname': 'from-bmo-sim',
    });
  });

  it('no-label mode: resolved by the hostname fallback (Step 4)', async () => {
    modes.set('h-k-b', 'no-label');
    await createMachine(env.mgmt.client, {
      name: 'k-b',
      host: 'h-k-b',
      bootstrapConfigRef: false,
      state: 'provisioning',
    });
    await setState('h-k-b', 'provisioned');
    const node = await nodeWhen(env.workload.client, 'h-k-b', (n) => Boolean(n));
    expect(node?.metadata.labels?.['metal3.io/uuid']).toBeUndefined();
    expect((await reconcile(env.ctx(), msg('k-b'))).kind).toBe('done');
    expect(await nodeProviderID(env.workload.client, 'h-k-b')).toBe('metal3://metal3/h-k-b/k-b');
  });

  it('cloud-provider mode pre-sets the new-format ID; legacy mode the metal3://<uid> one', async () => {
    modes.set('h-k-c', 'cloud-provider');
    modes.set('h-k-d', 'legacy');
    await createMachine(env.mgmt.client, { name: 'k-c', host: 'h-k-c', state: 'provisioning' });
    const { hostUid } = await createMachine(env.mgmt.client, {
      name: 'k-d',
      host: 'h-k-d',
      state: 'provisioning',
    });
    await setState('h-k-c', 'provisioned');
    await setState('h-k-d', 'provisioned');
    const c = await nodeWhen(env.workload.client, 'h-k-c', (n) => Boolean(n));
    const d = await nodeWhen(env.workload.client, 'h-k-d', (n) => Boolean(n));
    expect((c?.spec as { providerID?: string } | undefined)?.providerID).toBe('metal3://metal3/h-k-c/k-c');
    expect((d?.spec as { providerID?: string } | undefined)?.providerID).toBe(`metal3://${hostUid}`);
    expect((await reconcile(env.ctx(), msg('k-c'))).kind).toBe('done');
    expect((await getMachine(env.mgmt.client, 'k-c')).spec.providerID).toBe('metal3://metal3/h-k-c/k-c');
    expect((await reconcile(env.ctx(), msg('k-d'))).kind).toBe('done');
    expect((await getMachine(env.mgmt.client, 'k-d')).spec.providerID).toBe(`metal3://${hostUid}`);
    expect(await reconcile(env.ctx({ legacyProviderIds: 'refuse' }), msg('k-d'))).toMatchObject({
      kind: 'terminal',
      reason: 'LegacyProviderIDRefused',
    });
  });
});
