/**
 * Bad input on the live path: the error lands on the Metal3Data (errorMessage naming the template
 * field or the pool, error: true, a Warning Event), no Secret is ever written (asserted on the API
 * server's request log), and the message is acknowledged (terminal). A pool created later is no
 * error but a wait, resumed by the pool. What the CRD schema already rejects never reaches the functions:
 * the API server answers 422 naming the field.
 */
import { describe, expect, it } from 'vitest';
import { R } from '../../../shared/api/resources.ts';
import { InvalidError } from '../../../shared/kube/errors.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import type { ReconcileResult } from '../../../shared/reconcile/result.ts';
import {
  allocate,
  converge,
  createMachine,
  indexOf,
  NS,
  pool,
  render,
  seedTemplate,
} from '../../helpers/data.ts';
import { useDataCluster } from './use-data-cluster.ts';

const tc = useDataCluster({ pools: true });

/**
 * The seed template under another name, without its templateReference: seed 001's templates all
 * say `old-template`, which would link them (way 2) into one index space.
 */
function standalone(name: string, mutate: (spec: any) => void = () => {}): KubeObject {
  return seedTemplate(name, (s) => {
    delete s.templateReference;
    mutate(s);
  });
}

/** A template variant and one machine on it; runs the data path to a standstill. */
async function attempt(
  name: string,
  mutate: (spec: any) => void,
  machine: Parameters<typeof createMachine>[3] = {},
): Promise<{ data: KubeObject; last: ReconcileResult }> {
  await tc.client.create(R.Metal3DataTemplate, standalone(name, mutate));
  await createMachine(tc.client, `${name}-m`, name, machine);
  tc.server.log.reset();
  await converge(tc.ctx);
  const data = (await tc.client.get(R.Metal3Data, NS, `${name}-0`))!;
  const last = await render(tc.ctx, `${name}-0`);
  expect(tc.server.log.count('create', 'secrets')).toBe(0);
  expect(await tc.client.get(R.Secret, NS, `${name}-m-metadata-0`)).toBeUndefined();
  expect(await tc.client.get(R.Secret, NS, `${name}-m-networkdata-0`)).toBeUndefined();
  expect(data.status).toMatchObject({ ready: false, error: true });
  return { data, last };
}

async function warnings(obj: KubeObject): Promise<string[]> {
  return (await tc.client.list(R.Event, NS)).items
    .filter((e) => (e.involvedObject as any)?.uid === obj.metadata.uid && e.type === 'Warning')
    .map((e) => String(e.message));
}

describe('bad input on the live path', () => {
  it('bad MAC (from an annotation): the field is named, terminal, Warning Event', async () => {
    const { data, last } = await attempt('badmac', () => {}, {
      machineAnnotations: { 'primary-mac': 'zz:zz' },
    });
    const msg = (data.status as any).errorMessage as string;
    expect(msg).toBe(
      'spec.networkData.links.ethernets[0].macAddress.fromAnnotation: bad MAC address "zz:zz" (expected six hex pairs separated by ":" or "-")',
    );
    expect(last).toEqual({ kind: 'terminal', reason: 'RenderFailed', message: msg });
    expect(await warnings(data)).toEqual([msg]);
  });

  it('missing NIC on the host', async () => {
    const { data } = await attempt('nonic', (s) => {
      s.metaData.fromHostInterfaces[0].interface = 'eth7';
    });
    expect((data.status as any).errorMessage).toBe(
      'spec.metaData.fromHostInterfaces[0].interface: NIC "eth7" not found on BareMetalHost nonic-m-host (NICs: eth0, eth1)',
    );
  });

  it('illegal bond parameter', async () => {
    const { data } = await attempt('badbond', (s) => {
      s.networkData.links.bonds[0].parameters = { links: ['x'] };
    });
    expect((data.status as any).errorMessage).toMatch(
      /^spec\.networkData\.links\.bonds\[0\]\.parameters\.links: illegal bond parameter/,
    );
  });

  it('exhausted pool: the IPClaim carries "Exhausted IP Pools", the Metal3Data names the pool', async () => {
    await tc.client.create(
      R.IPPool,
      pool('one', { pools: [{ start: '10.9.0.1', end: '10.9.0.1' }], prefix: 24 }),
    );
    const onePool = (s: any) => {
      s.networkData.networks.ipv4[0].ipAddressFromIPPool = 'one';
      s.networkData.networks.ipv4[0].routes[0].gateway = { string: '10.9.0.254' };
      s.networkData.networks.ipv4[0].routes[0].services = {};
      s.metaData = { strings: [{ key: 'a', value: 'b' }] };
    };
    await tc.client.create(R.Metal3DataTemplate, standalone('first', onePool));
    await createMachine(tc.client, 'first-m', 'first');
    await converge(tc.ctx);
    expect((await tc.client.get(R.Metal3Data, NS, 'first-0'))?.status).toMatchObject({ ready: true });
    const { data, last } = await attempt('exhaust', onePool);
    expect((data.status as any).errorMessage).toBe('IP Allocation for one failed : Exhausted IP Pools');
    expect(last.kind).toBe('terminal');
    const claim = (await tc.client.get(R.IPClaim, NS, 'exhaust-0-one'))!;
    expect((claim.status as any).errorMessage).toBe('Exhausted IP Pools');
    expect(await warnings(claim)).toEqual(['Exhausted IP Pools']);
  });

  it('a pool created after the template: a wait (its IPClaim made, as CAPM3), no error, resumed by the pool', async () => {
    await tc.client.create(
      R.Metal3DataTemplate,
      standalone('nopool', (s) => {
        s.networkData.networks.ipv6[0].ipAddressFromIPPool = 'later';
        s.networkData.networks.ipv6[0].routes[0].services.dnsFromIPPool = 'later';
      }),
    );
    await createMachine(tc.client, 'nopool-m', 'nopool');
    await converge(tc.ctx);
    const waiting = (await tc.client.get(R.Metal3Data, NS, 'nopool-0'))!;
    expect((waiting.status as any)?.errorMessage).toBeUndefined();
    expect((waiting.status as any)?.ready).not.toBe(true);
    expect(await warnings(waiting)).toEqual([]);
    expect(await render(tc.ctx, 'nopool-0')).toMatchObject({
      kind: 'requeue',
      reason: 'waiting for addresses from later (IPPool metal3/later does not exist yet)',
    });
    // The IPClaim is there, waiting for its pool: the pool's creation wakes it (routing table).
    const claim = (await tc.client.get(R.IPClaim, NS, 'nopool-0-later'))!;
    expect((claim.status as any)?.address).toBeUndefined();
    expect((claim.status as any)?.errorMessage).toBeUndefined();
    expect(await tc.client.get(R.Secret, NS, 'nopool-m-networkdata-0')).toBeUndefined();

    await tc.client.create(
      R.IPPool,
      pool('later', { pools: [{ start: '2001:db8:1::1', end: '2001:db8:1::9' }], prefix: 64 }),
    );
    expect((await allocate(tc.ctx, R.IPClaim, 'nopool-0-later')).kind).toBe('done');
    expect((await render(tc.ctx, 'nopool-0')).kind).toBe('done');
    const healed = (await tc.client.get(R.Metal3Data, NS, 'nopool-0'))!;
    expect(healed.status).toEqual({ ready: true, error: false });
    expect(await tc.client.get(R.Secret, NS, 'nopool-m-networkdata-0')).toBeDefined();
  });

  it('a claim without a Metal3Machine owner: the Metal3Data says so', async () => {
    await tc.client.create(R.Metal3DataTemplate, standalone('orphan'));
    await tc.client.create(R.Metal3DataClaim, {
      metadata: { name: 'lonely', namespace: NS },
      spec: { template: { name: 'orphan' } },
    });
    expect(await allocate(tc.ctx, R.Metal3DataClaim, 'lonely')).toMatchObject({ kind: 'done' });
    expect(await indexOf(tc.client, 'lonely')).toBe(0);
    const r = await render(tc.ctx, 'orphan-0');
    expect(r).toMatchObject({
      kind: 'terminal',
      message: 'Metal3DataClaim metal3/lonely has no Metal3Machine owner reference',
    });
  });

  describe('rejected by the CRD schema before any function sees it (422 naming the field)', () => {
    const rejected: [string, (s: any) => void, RegExp][] = [
      [
        'unknown object kind in objectNames',
        (s) => (s.metaData.objectNames[0].object = 'node'),
        /spec\.metaData\.objectNames\[0\]\.object/,
      ],
      ['vlan without id', (s) => delete s.networkData.links.vlans[0].vlanID, /vlanID/],
      [
        'literal bad MAC',
        (s) => (s.networkData.links.bonds[0].macAddress.string = 'XX:XX:XX:XX:XX:XX'),
        /spec\.networkData\.links\.bonds\[0\]\.macAddress\.string/,
      ],
    ];
    for (const [what, mutate, field] of rejected) {
      it(what, async () => {
        const err = await tc.client
          .create(R.Metal3DataTemplate, standalone(`rej-${what.length}`, mutate))
          .catch((e) => e);
        expect(err).toBeInstanceOf(InvalidError);
        expect((err as Error).message).toMatch(field);
      });
    }
  });
});
