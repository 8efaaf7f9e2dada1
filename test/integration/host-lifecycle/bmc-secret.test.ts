/**
 * The cluster label on a host's BMC credentials Secret (spec §5, §9 step 3), against the embedded
 * API server: added on association (also when a pass stopped between claim and annotation), never
 * re-written on a replay, a missing Secret tolerated, removed on deprovision only when it names
 * the machine's cluster, another cluster's value left alone, a claim given back unlabels it.
 */

import { describe, expect, it } from 'vitest';
import { createSampleHosts } from '../../../infra/local/sim/bmo-hosts.ts';
import { apiVersionOf, R } from '../../../shared/api/resources.ts';
import { CONSUMER_LABEL } from '../../../shared/api/wellknown.ts';
import { metal3MachineConsumer } from '../../../shared/hosts/consumer.ts';
import { releaseHost } from '../../../shared/hosts/release.ts';
import { optimisticUpdate } from '../../../shared/kube/optimistic.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { CLUSTER, createMachinePair, deprovision, NS, selectHost } from '../../helpers/hosts.ts';
import { bmcName, useHostCluster } from './use-host-cluster.ts';

const LABEL = 'cluster.x-k8s.io/cluster-name';

const tc = useHostCluster();

const freshCtx = () => tc.freshCtx();
const secretWrites = (c: ReturnType<typeof freshCtx>) =>
  ['create', 'update', 'patch', 'delete'].reduce(
    (n, verb) => n + (c.client.stats.byResource.get(`${verb} secrets`) ?? 0),
    0,
  );
const getSecret = (name: string) => tc.getSecret(name);
const getHost = (name: string) => tc.getHost(name);
const setState = (name: string, state: string) =>
  optimisticUpdate(
    tc.client,
    R.BareMetalHost,
    NS,
    name,
    (h) => {
      (h.status as { provisioning: { state: string } }).provisioning.state = state;
    },
    { status: true },
  );
const setSecretLabels = (name: string, labels: Record<string, string>) =>
  optimisticUpdate(tc.client, R.Secret, NS, name, (s) => {
    s.metadata.labels = labels;
  });

/** One host in its own pool (with its BMC Secret unless told otherwise) and a machine selecting it. */
async function hostAndMachine(
  name: string,
  opts: { bmcSecrets?: boolean } = {},
): Promise<{ host: KubeObject; secret: string }> {
  const [host] = await createSampleHosts(tc.client, NS, 1, {
    prefix: name,
    bmcSecrets: opts.bmcSecrets ?? true,
    labels: () => ({ pool: name }),
  });
  await createMachinePair(tc.client, name, { m3mSpec: { hostSelector: { matchLabels: { pool: name } } } });
  return { host: host!, secret: bmcName(host!) };
}

const annotation = async (m3m: string) =>
  (await tc.client.get(R.Metal3Machine, NS, m3m))?.metadata.annotations?.['metal3.io/BareMetalHost'];

describe('selectHost: the BMC Secret gets the cluster label', () => {
  it('labels it on association (other labels and the data kept); a replay writes nothing', async () => {
    const { host, secret } = await hostAndMachine('lab');
    await setSecretLabels(secret, { team: 'infra' });
    const before = await getSecret(secret);

    const c = freshCtx();
    expect((await selectHost(c, 'lab')).kind).toBe('done');
    expect(await annotation('lab')).toBe(`${NS}/${host.metadata.name}`);
    const after = await getSecret(secret);
    expect(after!.metadata.labels).toEqual({ team: 'infra', [LABEL]: CLUSTER });
    expect(after!.data).toEqual(before!.data);
    expect(c.client.stats.byResource.get('update secrets')).toBe(1);

    // A replay (duplicate message): no write at all, the Secret untouched.
    const replay = freshCtx();
    expect((await selectHost(replay, 'lab')).kind).toBe('done');
    expect(replay.client.stats.writes).toBe(0);
    expect((await getSecret(secret))!.metadata.resourceVersion).toBe(after!.metadata.resourceVersion);
  });

  it('a pass that stopped between the claim and the annotation labels it on the next pass, once', async () => {
    const { host, secret } = await hostAndMachine('crash');
    // The stopped pass: the claim is written (consumerRef, cluster and consumer labels), nothing else.
    await optimisticUpdate(tc.client, R.BareMetalHost, NS, host.metadata.name!, (h) => {
      (h.spec as Record<string, unknown>).consumerRef = {
        apiVersion: apiVersionOf(R.Metal3Machine),
        kind: 'Metal3Machine',
        name: 'crash',
        namespace: NS,
      };
      h.metadata.labels = { ...(h.metadata.labels ?? {}), [LABEL]: CLUSTER, [CONSUMER_LABEL]: 'crash' };
    });
    expect((await getSecret(secret))!.metadata.labels?.[LABEL]).toBeUndefined();

    const c = freshCtx();
    expect((await selectHost(c, 'crash')).kind).toBe('done');
    expect(await annotation('crash')).toBe(`${NS}/${host.metadata.name}`);
    const labelled = await getSecret(secret);
    expect(labelled!.metadata.labels?.[LABEL]).toBe(CLUSTER);
    expect(secretWrites(c)).toBe(1);

    // Stopped again after the label (annotation removed): the label is already right, not re-written.
    await optimisticUpdate(tc.client, R.Metal3Machine, NS, 'crash', (o) => {
      delete o.metadata.annotations!['metal3.io/BareMetalHost'];
    });
    const again = freshCtx();
    expect((await selectHost(again, 'crash')).kind).toBe('done');
    expect(await annotation('crash')).toBe(`${NS}/${host.metadata.name}`);
    expect(secretWrites(again)).toBe(0);
    expect((await getSecret(secret))!.metadata.resourceVersion).toBe(labelled!.metadata.resourceVersion);
  });

  it("replaces another cluster's stale value on association (as CAPM3 does)", async () => {
    const { secret } = await hostAndMachine('stale');
    await setSecretLabels(secret, { [LABEL]: 'old-cluster' });
    expect((await selectHost(freshCtx(), 'stale')).kind).toBe('done');
    expect((await getSecret(secret))!.metadata.labels?.[LABEL]).toBe(CLUSTER);
  });

  it('a missing BMC Secret (or none named) does not block association; nothing is created', async () => {
    const { host, secret } = await hostAndMachine('nosecret', { bmcSecrets: false });
    const c = freshCtx();
    expect((await selectHost(c, 'nosecret')).kind).toBe('done');
    expect(await annotation('nosecret')).toBe(`${NS}/${host.metadata.name}`);
    expect(await getSecret(secret)).toBeUndefined();
    expect(secretWrites(c)).toBe(0);
    expect(((await getHost(host.metadata.name!))!.spec as { image?: unknown }).image).toBeDefined();

    const { host: bare } = await hostAndMachine('nobmc', { bmcSecrets: false });
    await optimisticUpdate(tc.client, R.BareMetalHost, NS, bare.metadata.name!, (h) => {
      delete (h.spec as Record<string, unknown>).bmc;
    });
    const c2 = freshCtx();
    expect((await selectHost(c2, 'nobmc')).kind).toBe('done');
    expect(await annotation('nobmc')).toBe(`${NS}/${bare.metadata.name}`);
    expect(c2.client.stats.byResource.get('get secrets') ?? 0).toBe(0);
  });

  it('a claim given back (a concurrent pass associated another host) loses the label too', async () => {
    const { host, secret } = await hostAndMachine('giveback');
    expect((await selectHost(freshCtx(), 'giveback')).kind).toBe('done');
    // Undo the host spec so the host looks freshly claimed, as in the losing pass.
    await optimisticUpdate(tc.client, R.BareMetalHost, NS, host.metadata.name!, (h) => {
      for (const k of ['image', 'userData', 'metaData', 'networkData']) delete (h.spec as any)[k];
    });
    expect((await getSecret(secret))!.metadata.labels?.[LABEL]).toBe(CLUSTER);
    expect(
      await releaseHost(
        freshCtx(),
        (await getHost(host.metadata.name!))!,
        metal3MachineConsumer({ name: 'giveback', namespace: NS }, CLUSTER),
        { onlyUnprovisioned: true },
      ),
    ).toBe(true);
    const h = await getHost(host.metadata.name!);
    expect((h!.spec as { consumerRef?: unknown }).consumerRef).toBeUndefined();
    expect(h!.metadata.labels?.[LABEL]).toBeUndefined();
    expect((await getSecret(secret))!.metadata.labels?.[LABEL]).toBeUndefined();
  });
});

describe('deprovision: the BMC Secret loses the cluster label', () => {
  /** Associated and provisioned, then the machine deleted and the host cleared. */
  async function deleting(name: string): Promise<{ host: string; secret: string }> {
    const { host, secret } = await hostAndMachine(name);
    expect((await selectHost(freshCtx(), name)).kind).toBe('done');
    await setState(host.metadata.name!, 'provisioned');
    await tc.client.delete(R.Metal3Machine, NS, name);
    expect((await deprovision(freshCtx(), name)).kind).toBe('requeue');
    return { host: host.metadata.name!, secret };
  }

  it('removes it when it names the machine cluster (other labels kept), once, at release', async () => {
    const { host, secret } = await deleting('rel');
    await optimisticUpdate(tc.client, R.Secret, NS, secret, (s) => {
      s.metadata.labels = { ...s.metadata.labels, team: 'infra' };
    });
    // Still deprovisioning: the label stays while the host is ours.
    expect((await deprovision(freshCtx(), 'rel')).kind).toBe('requeue');
    expect((await getSecret(secret))!.metadata.labels?.[LABEL]).toBe(CLUSTER);

    await setState(host, 'available');
    const c = freshCtx();
    expect((await deprovision(c, 'rel')).kind).toBe('done');
    expect((await getSecret(secret))!.metadata.labels).toEqual({ team: 'infra' });
    expect(secretWrites(c)).toBe(1);
    expect(((await getHost(host))!.spec as { consumerRef?: unknown }).consumerRef).toBeUndefined();
    expect(await tc.client.get(R.Metal3Machine, NS, 'rel')).toBeUndefined();
  });

  it("leaves another cluster's value alone (no write)", async () => {
    const { host, secret } = await deleting('foreign-bmc');
    await setSecretLabels(secret, { [LABEL]: 'other-cluster' });
    const before = await getSecret(secret);
    await setState(host, 'available');
    const c = freshCtx();
    expect((await deprovision(c, 'foreign-bmc')).kind).toBe('done');
    const after = await getSecret(secret);
    expect(after!.metadata.labels?.[LABEL]).toBe('other-cluster');
    expect(after!.metadata.resourceVersion).toBe(before!.metadata.resourceVersion);
    expect(secretWrites(c)).toBe(0);
    expect(((await getHost(host))!.spec as { consumerRef?: unknown }).consumerRef).toBeUndefined();
  });

  it('a BMC Secret deleted meanwhile does not block the release', async () => {
    const { host, secret } = await deleting('gone-bmc');
    await tc.client.delete(R.Secret, NS, secret);
    await setState(host, 'available');
    expect((await deprovision(freshCtx(), 'gone-bmc')).kind).toBe('done');
    expect(((await getHost(host))!.spec as { consumerRef?: unknown }).consumerRef).toBeUndefined();
    expect(await tc.client.get(R.Metal3Machine, NS, 'gone-bmc')).toBeUndefined();
  });
});
