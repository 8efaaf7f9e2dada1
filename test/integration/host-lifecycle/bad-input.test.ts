/**
 * Bad input is a terminal error recorded clearly on the Metal3Machine (failureReason,
 * failureMessage, AssociateBMH condition, a Warning Event) and nothing is written to any host
 * (asserted through the API server's request log).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSampleHosts } from '../../../infra/local/sim/bmo-hosts.ts';
import { envelopeOf, R } from '../../../shared/api/resources.ts';
import { startTestCluster, type TestCluster } from '../../helpers/cluster.ts';
import { createCluster, createMachinePair, makeCtx, NS, selectHost } from '../../helpers/hosts.ts';

let tc: TestCluster;
beforeAll(async () => {
  tc = await startTestCluster();
  await createCluster(tc.client);
  await createSampleHosts(tc.client, NS, 3, { bmcSecrets: false });
});
afterAll(async () => {
  await tc?.stop();
});

const hostWrites = () =>
  tc.server.log.entries.filter(
    (e) => e.resource.startsWith('baremetalhosts') && !['get', 'list', 'watch'].includes(e.verb),
  ).length;

const cases: [string, Record<string, unknown>, RegExp][] = [
  [
    'invalid selector (in without values)',
    { hostSelector: { matchExpressions: [{ key: 'rack', operator: 'in', values: [] }] } },
    /hostSelector\.matchExpressions\[0\]\.values: operator "in" needs at least one value/,
  ],
  [
    'invalid selector (gt with a non-integer)',
    { hostSelector: { matchExpressions: [{ key: 'cpus', operator: 'gt', values: ['many'] }] } },
    /matchExpressions\[0\]\.values(\[0\])?: operator "gt" needs an integer/,
  ],
  [
    'image without checksum',
    { image: { url: 'http://172.22.0.1/images/node.img', format: 'raw' } },
    /spec\.image\.checksum: image\.checksum is required unless format is live-iso/,
  ],
  [
    'missing image',
    { image: undefined },
    /spec\.image: image\.url is required unless customDeploy\.method is set/,
  ],
  [
    'cross-namespace metaData secret',
    { metaData: { name: 'md', namespace: 'other' } },
    /spec\.metaData\.namespace.*"other"/,
  ],
  [
    'cross-namespace userData secret',
    { userData: { name: 'ud', namespace: 'kube-system' } },
    /spec\.userData\.namespace.*"kube-system"/,
  ],
];

describe('bad input is terminal, recorded, and touches no host', () => {
  it.each(cases.map((c, i) => [i, ...c] as const))('%i: %s', async (i, _name, spec, message) => {
    const name = `bad-${i}`;
    await createMachinePair(tc.client, name, { m3mSpec: spec });
    const ctx = makeCtx(tc.client);
    const before = hostWrites();
    const r = await selectHost(ctx, name);
    expect(r.kind).toBe('terminal');
    expect((r as { reason: string }).reason).toBe('InvalidConfiguration');
    expect((r as { message: string }).message).toMatch(message);

    // Through its envelope: the machine fails its own schema.
    const m = await tc.client.get(envelopeOf(R.Metal3Machine), NS, name);
    const st = m!.status as any;
    expect(st.failureReason).toBe('InvalidConfiguration');
    expect(st.failureMessage).toMatch(message);
    const assoc = st.conditions.find((c: any) => c.type === 'AssociateBMH');
    expect(assoc).toMatchObject({ status: 'False', severity: 'Error', reason: 'InvalidConfiguration' });
    expect(assoc.message).toMatch(message);
    expect(st.conditions.find((c: any) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'InvalidConfiguration',
    });
    const events = (await tc.client.list(R.Event, NS)).items as any[];
    const ev = events.find((e) => e.involvedObject?.name === name && e.type === 'Warning');
    expect(ev?.reason).toBe('InvalidConfiguration');
    expect(ev?.message).toMatch(message);
    expect(m!.metadata.annotations?.['metal3.io/BareMetalHost']).toBeUndefined();

    // A repeat pass leaves the failed machine alone: still terminal, nothing written, not even an Event.
    const writes = tc.client.stats.writes;
    const again = await selectHost(ctx, name);
    expect(again.kind).toBe(spec.dataTemplate ? 'done' : 'terminal');
    expect(tc.client.stats.writes).toBe(writes);
    expect(hostWrites()).toBe(before);
    const hosts = (await tc.client.list(R.BareMetalHost, NS)).items;
    expect(hosts.every((h) => !(h.spec as any).consumerRef)).toBe(true);
  });
});
