/**
 * Bad IP pools. The ipam.metal3.io CRDs (as upstream ships them) check little, so an IPPool with
 * an address that is not one, start > end, a bad subnet or gateway is accepted by
 * the API; allocateIndex then records the error on the IPClaim (`status.errorMessage` naming the
 * pool field, a Warning Event) and creates no IPAddress. An exhausted pool is the same kind of
 * error for the one claim that does not fit; the claims that fit keep their addresses. Through
 * renderData, an address error becomes the Metal3Data's error and no Secret is written.
 */
import { describe, expect, it } from 'vitest';
import { envelopeOf, R } from '../../shared/api/resources.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { createMachine } from '../helpers/data.ts';
import { describeWrites, NS, run, statusOf, useBadInputCluster, warningEvents, writes } from './harness.ts';

const tc = useBadInputCluster();

const ipPool = (name: string, spec: Record<string, unknown>): KubeObject => ({
  metadata: { name, namespace: NS },
  spec: { namePrefix: name, ...spec },
});

const ipClaim = (name: string, pool: string): KubeObject => ({
  metadata: { name, namespace: NS },
  spec: { pool: { name: pool, namespace: NS } },
});

interface PoolCase {
  name: string;
  spec: Record<string, unknown>;
  message: RegExp;
}

const BAD_POOLS: PoolCase[] = [
  {
    name: 'not-an-address',
    spec: { pools: [{ start: '10.0.0.300', end: '10.0.0.5' }], prefix: 24 },
    message: /spec\.pools\[0\]\.start/,
  },
  {
    name: 'start-after-end',
    spec: { pools: [{ start: '10.0.0.9', end: '10.0.0.5' }], prefix: 24 },
    message: /spec\.pools\[0\]/,
  },
  {
    name: 'bad-subnet',
    spec: { pools: [{ subnet: '10.0.0.0/33' }], prefix: 24 },
    message: /spec\.pools\[0\]\.subnet/,
  },
  {
    name: 'bad-gateway',
    spec: { pools: [{ start: '10.0.0.1', end: '10.0.0.5' }], prefix: 24, gateway: 'x.y' },
    message: /spec\.gateway/,
  },
];

describe('IPPool: accepted by the API, refused by allocateIndex', () => {
  it.each(BAD_POOLS)('$name: errorMessage on the IPClaim, no IPAddress', async (c) => {
    await tc.client.create(envelopeOf(R.IPPool), ipPool(`pool-${c.name}`, c.spec));
    await tc.client.create(envelopeOf(R.IPClaim), ipClaim(`claim-${c.name}`, `pool-${c.name}`));
    tc.server.log.reset();

    const outcome = await run(tc.ctx, 'allocateIndex', R.IPClaim, `claim-${c.name}`);
    expect(outcome.kind).toBe('terminal');
    const claim = await tc.client.get(envelopeOf(R.IPClaim), NS, `claim-${c.name}`);
    expect(String(statusOf(claim).errorMessage)).toMatch(c.message);
    expect(String(statusOf(claim).errorMessage)).toContain(`IPPool ${NS}/pool-${c.name}`);
    const events = await warningEvents(tc.client, { ...claim!, kind: 'IPClaim' });
    expect(events.map((e) => (e as { reason?: string }).reason)).toContain('IPAllocationFailed');
    expect(describeWrites(writes(tc.server.log, ['ipaddresses', 'ippools', 'secrets']))).toEqual([]);

    // Sticky (ip-address-manager): a redelivery does nothing until the claim is fixed or recreated.
    tc.server.log.reset();
    expect((await run(tc.ctx, 'allocateIndex', R.IPClaim, `claim-${c.name}`)).kind).toBe('done');
    expect(describeWrites(writes(tc.server.log))).toEqual([]);
  });
});

describe('IPPool: a prefix that does not fit its family', () => {
  it('is handed out as ip-address-manager would, and the render records the error on the Metal3Data', async () => {
    await tc.client.create(
      R.IPPool,
      ipPool('wide', { pools: [{ start: '10.3.0.10', end: '10.3.0.20' }], prefix: 99 }),
    );
    await tc.client.create(envelopeOf(R.Metal3DataTemplate), {
      metadata: { name: 'wide-t', namespace: NS },
      spec: {
        clusterName: 'cluster',
        networkData: {
          links: {
            ethernets: [
              { type: 'phy', id: 'enp1s0', mtu: 1500, macAddress: { string: '52:54:00:aa:bb:00' } },
            ],
          },
          networks: { ipv4: [{ id: 'prov', link: 'enp1s0', ipAddressFromIPPool: 'wide' }] },
        },
      },
    });
    await createMachine(tc.client, 'wide-0', 'wide-t');
    expect((await run(tc.ctx, 'allocateIndex', R.Metal3DataClaim, 'wide-0')).kind).toBe('done');
    await run(tc.ctx, 'renderData', R.Metal3Data, 'wide-t-0');
    await run(tc.ctx, 'allocateIndex', R.IPClaim, 'wide-t-0-wide');
    tc.server.log.reset();
    expect((await run(tc.ctx, 'renderData', R.Metal3Data, 'wide-t-0')).kind).toBe('terminal');
    const data = await tc.client.get(envelopeOf(R.Metal3Data), NS, 'wide-t-0');
    expect(String(statusOf(data).errorMessage)).toMatch(
      /spec\.networkData\.networks\.ipv4\[0\]\.ipAddressFromIPPool.*99/,
    );
    expect(describeWrites(writes(tc.server.log, ['secrets']))).toEqual([]);
  });
});

describe('IPPool exhausted', () => {
  it('the claims that fit get addresses, the one that does not gets an error and no address', async () => {
    await tc.client.create(
      R.IPPool,
      ipPool('small', { pools: [{ start: '10.1.0.10', end: '10.1.0.11' }], prefix: 24 }),
    );
    for (const n of ['a', 'b', 'c'])
      await tc.client.create(envelopeOf(R.IPClaim), ipClaim(`small-${n}`, 'small'));
    expect((await run(tc.ctx, 'allocateIndex', R.IPClaim, 'small-a')).kind).toBe('done');
    expect((await run(tc.ctx, 'allocateIndex', R.IPClaim, 'small-b')).kind).toBe('done');
    tc.server.log.reset();
    const outcome = await run(tc.ctx, 'allocateIndex', R.IPClaim, 'small-c');
    expect(outcome).toMatchObject({ kind: 'terminal' });
    const claim = await tc.client.get(envelopeOf(R.IPClaim), NS, 'small-c');
    expect(String(statusOf(claim).errorMessage)).toMatch(/exhausted|no (free|available) address/i);
    expect(describeWrites(writes(tc.server.log, ['ipaddresses']))).toEqual([]);
    const addrs = (await tc.client.list(R.IPAddress, NS)).items.filter((a) =>
      a.metadata.name?.startsWith('small-'),
    );
    expect(addrs.map((a) => (a.spec as { claim: { name: string } }).claim.name).sort()).toEqual([
      'small-a',
      'small-b',
    ]);
  });

  it('through renderData: the Metal3Data records the allocation error and no Secret is written', async () => {
    await tc.client.create(
      R.IPPool,
      ipPool('tiny', { pools: [{ start: '10.2.0.10', end: '10.2.0.10' }], prefix: 24 }),
    );
    await tc.client.create(envelopeOf(R.Metal3DataTemplate), {
      metadata: { name: 'tiny-t', namespace: NS },
      spec: {
        clusterName: 'cluster',
        metaData: { ipAddressesFromIPPool: [{ key: 'ip', name: 'tiny' }] },
      },
    });
    for (const m of ['tiny-0', 'tiny-1']) await createMachine(tc.client, m, 'tiny-t');
    for (const m of ['tiny-0', 'tiny-1'])
      expect((await run(tc.ctx, 'allocateIndex', R.Metal3DataClaim, m)).kind).toBe('done');
    // Pass 1 creates the IPClaims; allocation; pass 2 renders (or records the error).
    for (const d of ['tiny-t-0', 'tiny-t-1']) await run(tc.ctx, 'renderData', R.Metal3Data, d);
    for (const c of (await tc.client.list(envelopeOf(R.IPClaim), NS)).items.filter((c) =>
      c.metadata.name?.startsWith('tiny-t-'),
    ))
      await run(tc.ctx, 'allocateIndex', R.IPClaim, c.metadata.name!);
    tc.server.log.reset();
    const outcomes = [];
    for (const d of ['tiny-t-0', 'tiny-t-1'])
      outcomes.push((await run(tc.ctx, 'renderData', R.Metal3Data, d)).kind);
    expect(outcomes.sort()).toEqual(['done', 'terminal']);
    const datas = await Promise.all(
      ['tiny-t-0', 'tiny-t-1'].map((d) => tc.client.get(envelopeOf(R.Metal3Data), NS, d)),
    );
    const failed = datas.find((d) => statusOf(d).error === true)!;
    expect(String(statusOf(failed).errorMessage)).toMatch(/IP Allocation for tiny failed/);
    const ok = datas.find((d) => statusOf(d).ready === true)!;
    const secrets = writes(tc.server.log, ['secrets']);
    // Only the machine that got an address had its Secret written.
    const owner = (failed.spec as { claim: { name: string } }).claim.name;
    expect(secrets.length).toBeGreaterThan(0);
    expect(secrets.every((s) => s.verb === 'create')).toBe(true);
    const names = (await tc.client.list(R.Secret, NS)).items.map((s) => s.metadata.name!);
    expect(names.filter((n) => n.startsWith(`${owner}-`))).toEqual([]);
    expect(ok).toBeDefined();
    const events = await warningEvents(tc.client, { ...failed, kind: 'Metal3Data' });
    expect(events.map((e) => (e as { reason?: string }).reason)).toContain('IPAllocationFailed');
  });
});
