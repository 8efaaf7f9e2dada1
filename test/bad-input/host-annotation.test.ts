/**
 * A Metal3Machine whose `metal3.io/BareMetalHost` annotation is malformed, points at a host that
 * does not exist, at a host in another namespace, or at a host it does not hold (free, or consumed
 * by another machine). selectHost must never adopt, modify or release a host it was not given by
 * its own claim: the machine gets a terminal error (failureReason/failureMessage, a Warning Event)
 * and the request log shows no write to any BareMetalHost.
 */
import { describe, expect, it } from 'vitest';
import { createSampleHosts } from '../../infra/local/sim/bmo.ts';
import { envelopeOf, R } from '../../shared/api/resources.ts';
import { createCluster, createMachinePair } from '../helpers/hosts.ts';
import { describeWrites, NS, run, statusOf, useBadInputCluster, warningEvents, writes } from './harness.ts';

const tc = useBadInputCluster({
  cluster: { namespaces: ['other'] },
  seed: async ({ client, ctx }) => {
    await createCluster(client);
    await createSampleHosts(client, NS, 2, { prefix: 'host' });
    await createSampleHosts(client, 'other', 1, { prefix: 'foreign' });
    // host-0001 belongs to another machine.
    const { m3m } = await createMachinePair(client, 'owner');
    expect((await run(ctx, 'selectHost', R.Metal3Machine, 'owner')).kind).not.toBe('retry');
    const owned = (await client.get(envelopeOf(R.Metal3Machine), NS, 'owner'))?.metadata.annotations?.[
      'metal3.io/BareMetalHost'
    ];
    expect(owned, `machine ${m3m.metadata.name} should hold a host`).toBeDefined();
  },
});

async function ownedHost(): Promise<string> {
  return (await tc.client.get(envelopeOf(R.Metal3Machine), NS, 'owner'))!.metadata.annotations![
    'metal3.io/BareMetalHost'
  ]!;
}

interface AnnotationCase {
  name: string;
  value: () => Promise<string> | string;
  reason: string;
  message: RegExp;
  /** Refused from the annotation alone: not even a read of a host. */
  noHostRead?: boolean;
}

const MALFORMED = /annotation metal3\.io\/BareMetalHost=".*" is malformed \(want "<namespace>\/<name>"\)/;
const CASES: AnnotationCase[] = [
  {
    name: 'empty-name',
    value: () => `${NS}/`,
    reason: 'InvalidConfiguration',
    message: MALFORMED,
    noHostRead: true,
  },
  {
    name: 'leading-slash',
    value: () => '/host-0000',
    reason: 'InvalidConfiguration',
    message: MALFORMED,
    noHostRead: true,
  },
  {
    name: 'three-parts',
    value: () => `${NS}/host-0000/extra`,
    reason: 'InvalidConfiguration',
    message: MALFORMED,
    noHostRead: true,
  },
  {
    name: 'not-a-name',
    value: () => `${NS}/Host_0000!`,
    reason: 'InvalidConfiguration',
    message: MALFORMED,
    noHostRead: true,
  },
  {
    name: 'other-namespace',
    value: () => 'other/foreign-0000',
    reason: 'InvalidConfiguration',
    message: /names a host in namespace other, but the Metal3Machine is in metal3/,
    noHostRead: true,
  },
  {
    name: 'missing-host',
    value: () => `${NS}/no-such-host`,
    reason: 'UpdateError',
    message: /no-such-host .* was deleted/,
  },
  {
    name: 'free-host-not-claimed',
    value: async () => ((await ownedHost()) === `${NS}/host-0000` ? `${NS}/host-0001` : `${NS}/host-0000`),
    reason: 'UpdateError',
    message: /was released or taken by another consumer/,
  },
  {
    name: 'host-of-another-machine',
    value: ownedHost,
    reason: 'UpdateError',
    message: /was released or taken by another consumer/,
  },
];

describe('Metal3Machine with a bad metal3.io/BareMetalHost annotation', () => {
  it.each(CASES)('$name: terminal error on the machine, no host written', async (c) => {
    const name = `ann-${c.name}`;
    const { m3m } = await createMachinePair(tc.client, name);
    const value = await c.value();
    await tc.client.patch(envelopeOf(R.Metal3Machine), NS, name, {
      metadata: { annotations: { 'metal3.io/BareMetalHost': value } },
    });
    const hostsBefore = (await tc.client.list(R.BareMetalHost)).items.map((h) => [
      h.metadata.name,
      h.metadata.resourceVersion,
    ]);
    tc.server.log.reset();

    const outcome = await run(tc.ctx, 'selectHost', R.Metal3Machine, name);
    expect(outcome.kind, JSON.stringify(outcome)).toBe('terminal');
    expect(describeWrites(writes(tc.server.log, ['baremetalhosts', 'secrets']))).toEqual([]);
    const after = await tc.client.get(envelopeOf(R.Metal3Machine), NS, name);
    expect(statusOf(after).failureReason).toBe(c.reason);
    expect(String(statusOf(after).failureMessage)).toMatch(c.message);
    if (c.noHostRead)
      expect(tc.server.log.entries.filter((e) => e.resource === 'baremetalhosts')).toEqual([]);
    const events = await warningEvents(tc.client, after!);
    expect(events.length).toBeGreaterThan(0);
    const hostsAfter = (await tc.client.list(R.BareMetalHost)).items.map((h) => [
      h.metadata.name,
      h.metadata.resourceVersion,
    ]);
    expect(hostsAfter).toEqual(hostsBefore);
    expect(m3m.metadata.uid).toBe(after?.metadata.uid);
  });

  it("the other machine's host is still its own", async () => {
    const [ns, hostName] = (await ownedHost()).split('/');
    const host = await tc.client.get(R.BareMetalHost, ns, hostName!);
    expect((host?.spec as { consumerRef?: { name?: string } } | undefined)?.consumerRef?.name).toBe('owner');
  });
});
