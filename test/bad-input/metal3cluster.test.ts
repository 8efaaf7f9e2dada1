/**
 * Bad Metal3Clusters. A missing or unusable controlPlaneEndpoint passes the CRD (the field is
 * optional upstream) and is refused by reconcileCluster: failureReason/failureMessage, Ready and
 * BaremetalInfrastructureReady False with the message, a Warning Event, `status.ready` false; a
 * port beyond 65535 is refused by the CRD with the field path. A redelivery writes nothing.
 */
import { describe, expect, it } from 'vitest';
import { envelopeOf, R } from '../../shared/api/resources.ts';
import {
  describeWrites,
  expectRejected,
  NS,
  run,
  statusOf,
  useBadInputCluster,
  warningEvents,
  writes,
} from './harness.ts';

const tc = useBadInputCluster();

const CASES: { name: string; spec: Record<string, unknown>; message: RegExp }[] = [
  { name: 'no-endpoint', spec: {}, message: /spec\.controlPlaneEndpoint is required/ },
  {
    name: 'empty-host',
    spec: { controlPlaneEndpoint: { host: '', port: 6443 } },
    message: /spec\.controlPlaneEndpoint\.host must not be empty/,
  },
  {
    name: 'port-zero',
    spec: { controlPlaneEndpoint: { host: '192.168.111.249', port: 0 } },
    message: /spec\.controlPlaneEndpoint\.port must be an integer in 1\.\.65535, got 0/,
  },
];

describe('Metal3Cluster: accepted by the CRD, refused by reconcileCluster', () => {
  it.each(CASES)('$name: InvalidConfiguration on the object and a Warning Event', async (c) => {
    const name = `m3c-${c.name}`;
    await tc.client.create(envelopeOf(R.Metal3Cluster), { metadata: { name, namespace: NS }, spec: c.spec });
    tc.server.log.reset();
    const outcome = await run(tc.ctx, 'reconcileCluster', R.Metal3Cluster, name);
    expect(outcome).toMatchObject({ kind: 'terminal', reason: 'InvalidConfiguration' });
    const obj = await tc.client.get(envelopeOf(R.Metal3Cluster), NS, name);
    const st = statusOf(obj);
    expect(st.ready).toBe(false);
    expect(st.failureReason).toBe('InvalidConfiguration');
    expect(String(st.failureMessage)).toMatch(c.message);
    const conds = st.conditions as { type: string; status: string; message?: string }[];
    for (const type of ['Ready', 'BaremetalInfrastructureReady']) {
      const cond = conds.find((x) => x.type === type);
      expect(cond?.status).toBe('False');
      expect(cond?.message).toMatch(c.message);
    }
    expect((await warningEvents(tc.client, obj!)).map((e) => (e as { reason?: string }).reason)).toContain(
      'InvalidConfiguration',
    );
    expect(describeWrites(writes(tc.server.log, ['secrets', 'baremetalhosts', 'clusters']))).toEqual([]);

    tc.server.log.reset();
    expect((await run(tc.ctx, 'reconcileCluster', R.Metal3Cluster, name)).kind).toBe('terminal');
    expect(describeWrites(writes(tc.server.log))).toEqual([]);
  });

  it('rejected by the CRD: a port beyond 65535, with the field path', async () => {
    await expectRejected(
      tc.client,
      R.Metal3Cluster,
      {
        metadata: { name: 'm3c-port-high', namespace: NS },
        spec: { controlPlaneEndpoint: { host: 'h', port: 70000 } },
      },
      'spec.controlPlaneEndpoint.port',
    );
  });
});
