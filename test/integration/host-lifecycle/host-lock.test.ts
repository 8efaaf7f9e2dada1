/**
 * The host lock (shared/hosts/) is not Metal3Machine's: any consumer, named by group, kind,
 * namespace and name with the labels its claim writes, claims and releases through the same code.
 * Here a consumer of another kind (`example.com/v1 Widget`) claims beside Metal3Machines, under
 * concurrency, and gives its hosts back with the one rule set.
 */
import { describe, expect, it } from 'vitest';
import { createSampleHosts } from '../../../infra/local/sim/bmo.ts';
import { R } from '../../../shared/api/resources.ts';
import { CONSUMER_LABEL } from '../../../shared/api/wellknown.ts';
import { findOrClaimHost, hostsHeldBy } from '../../../shared/hosts/claim.ts';
import {
  consumerLabelValue,
  type HostConsumer,
  hostConsumerRef,
  hostHeldBy,
  metal3MachineConsumer,
} from '../../../shared/hosts/consumer.ts';
import { releaseHost } from '../../../shared/hosts/release.ts';
import { compileHostSelector } from '../../../shared/selectors/labels.ts';
import { NS } from '../../helpers/hosts.ts';
import { useHostCluster } from './use-host-cluster.ts';

const tc = useHostCluster();

const widget = (name: string): HostConsumer => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  namespace: NS,
  name,
  uid: `uid-${name}`,
  labels: { 'example.com/widget': name },
});

const claim = (consumer: HostConsumer, pool: string) =>
  findOrClaimHost({
    client: tc.freshCtx().client,
    consumer,
    selector: compileHostSelector({ matchLabels: { pool } }),
    reuseValues: [],
  });

describe('the host lock for a consumer that is not a Metal3Machine', () => {
  it('claims with its consumerRef and labels, finds it again as its own, and releases with the one rule set', async () => {
    await createSampleHosts(tc.client, NS, 1, { prefix: 'wdg', labels: () => ({ pool: 'wdg' }) });
    const me = widget('w1');

    const first = await claim(me, 'wdg');
    expect(first.kind).toBe('claimed');
    const host = first.kind === 'claimed' ? first.host : undefined;
    expect(hostConsumerRef(host!)).toEqual({
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      name: 'w1',
      namespace: NS,
      uid: 'uid-w1',
    });
    expect(host!.metadata.labels).toMatchObject({
      'example.com/widget': 'w1',
      [CONSUMER_LABEL]: consumerLabelValue('w1'),
    });

    // A second pass finds the same host as its own (the consumer label list), claims nothing.
    const again = await claim(me, 'wdg');
    expect(again.kind).toBe('own');
    expect(again.kind === 'own' && again.host.metadata.uid).toBe(host!.metadata.uid);

    // A Metal3Machine of the same name is another consumer: the host is not its own, none is free.
    const m3m = metal3MachineConsumer({ name: 'w1', namespace: NS }, 'cluster');
    expect(await hostsHeldBy(tc.client, m3m)).toEqual([]);
    expect((await claim(m3m, 'wdg')).kind).toBe('none');

    // Released: consumerRef, the consumer label and its own label go; other labels stay.
    const fresh = await tc.getHost(host!.metadata.name!);
    expect(await releaseHost(tc.freshCtx(), fresh, me)).toBe(true);
    const after = await tc.getHost(host!.metadata.name!);
    expect(hostConsumerRef(after)).toBeUndefined();
    expect(after.metadata.labels).toEqual({ pool: 'wdg' });
    // Released once: a repeat is a no-op (not held any more).
    expect(await releaseHost(tc.freshCtx(), after, me)).toBe(false);
  });

  it('a consumer in another namespace than its hosts (a project namespace) claims, finds and releases them', async () => {
    await createSampleHosts(tc.client, NS, 1, { prefix: 'wdgx', labels: () => ({ pool: 'wdgx' }) });
    const me: HostConsumer = { ...widget('w3'), namespace: 'project-a', hostNamespace: NS };
    const got = await claim(me, 'wdgx');
    expect(got.kind).toBe('claimed');
    const name = got.kind === 'claimed' ? got.host.metadata.name! : '';
    expect(hostConsumerRef(await tc.getHost(name))).toMatchObject({ namespace: 'project-a', name: 'w3' });
    expect((await hostsHeldBy(tc.client, me)).map((h) => h.metadata.name)).toEqual([name]);
    // The same name in the hosts' own namespace is another consumer.
    expect(await hostsHeldBy(tc.client, { ...widget('w3') })).toEqual([]);
    expect(await releaseHost(tc.freshCtx(), await tc.getHost(name), me)).toBe(true);
    expect(hostConsumerRef(await tc.getHost(name))).toBeUndefined();
  });

  it('a label value someone else wrote since the claim is left alone on release', async () => {
    await createSampleHosts(tc.client, NS, 1, { prefix: 'wdgl', labels: () => ({ pool: 'wdgl' }) });
    const me = widget('w2');
    const got = await claim(me, 'wdgl');
    expect(got.kind).toBe('claimed');
    const name = got.kind === 'claimed' ? got.host.metadata.name! : '';
    const h = await tc.getHost(name);
    h.metadata.labels = { ...h.metadata.labels, 'example.com/widget': 'relabelled' };
    const relabelled = await tc.client.replace(R.BareMetalHost, h);
    expect(await releaseHost(tc.freshCtx(), relabelled, me)).toBe(true);
    expect((await tc.getHost(name)).metadata.labels).toEqual({
      pool: 'wdgl',
      'example.com/widget': 'relabelled',
    });
  });

  it('Widgets and Metal3Machines racing for fewer hosts: each host has at most one holder', async () => {
    const hosts = 6;
    await createSampleHosts(tc.client, NS, hosts, { prefix: 'mix', labels: () => ({ pool: 'mix' }) });
    const consumers: HostConsumer[] = [];
    for (let i = 0; i < 8; i++) {
      consumers.push(widget(`mw${i}`), metal3MachineConsumer({ name: `mm${i}`, namespace: NS }, 'cluster'));
    }
    const outcomes = await Promise.all(consumers.map((c) => claim(c, 'mix')));
    const won = outcomes.filter((o) => o.kind === 'claimed');
    expect(won).toHaveLength(hosts);

    const { items } = await tc.client.list(R.BareMetalHost, NS, { labelSelector: 'pool=mix' });
    const holders = items.map((h) => consumers.filter((c) => hostHeldBy(h, c)));
    expect(holders.every((hs) => hs.length === 1)).toBe(true);
    // Every winner holds exactly the host its claim returned; nobody holds two.
    for (const c of consumers) expect((await hostsHeldBy(tc.client, c)).length).toBeLessThanOrEqual(1);
    const kinds = new Set(holders.map((hs) => hs[0]!.kind));
    expect([...kinds].every((k) => k === 'Widget' || k === 'Metal3Machine')).toBe(true);
  });
});
