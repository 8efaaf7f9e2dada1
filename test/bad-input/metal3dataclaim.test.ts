/**
 * Bad Metal3DataClaims (normally written by selectHost, but any user can write one): a template in
 * another namespace is refused on the claim (errorMessage, Warning Event) and no index is handed
 * out; a template that does not exist (yet) is a wait, not an error, and writes nothing (the
 * template's creation event wakes the claim; the Metal3Machine that made the claim reports a
 * missing template itself, see metal3machine.test.ts); a claim without a template is refused by
 * the CRD with the field path.
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

const tc = useBadInputCluster({
  cluster: { namespaces: ['other'] },
  seed: async ({ client }) => {
    for (const ns of [NS, 'other']) {
      await client.create(envelopeOf(R.Metal3DataTemplate), {
        metadata: { name: 'nodepool', namespace: ns },
        spec: { clusterName: 'cluster', metaData: { strings: [{ key: 'a', value: 'b' }] } },
      });
    }
  },
});

describe('Metal3DataClaim', () => {
  it('a template in another namespace: errorMessage and a Warning Event, no Metal3Data', async () => {
    await tc.client.create(envelopeOf(R.Metal3DataClaim), {
      metadata: { name: 'cross', namespace: NS },
      spec: { template: { name: 'nodepool', namespace: 'other' } },
    });
    tc.server.log.reset();
    const outcome = await run(tc.ctx, 'allocateIndex', R.Metal3DataClaim, 'cross');
    expect(outcome).toMatchObject({ kind: 'terminal', reason: 'InvalidConfiguration' });
    const claim = await tc.client.get(envelopeOf(R.Metal3DataClaim), NS, 'cross');
    expect(String(statusOf(claim).errorMessage)).toMatch(
      /Metal3DataClaim metal3\/cross is invalid: spec\.template/,
    );
    expect((await warningEvents(tc.client, claim!)).length).toBeGreaterThan(0);
    expect(describeWrites(writes(tc.server.log, ['metal3datas', 'secrets', 'ipclaims']))).toEqual([]);
    expect((await tc.client.list(envelopeOf(R.Metal3Data))).items).toEqual([]);
  });

  it('a template that does not exist: a wait that writes nothing', async () => {
    await tc.client.create(envelopeOf(R.Metal3DataClaim), {
      metadata: { name: 'orphan', namespace: NS },
      spec: { template: { name: 'no-such-template' } },
    });
    tc.server.log.reset();
    const outcome = await run(tc.ctx, 'allocateIndex', R.Metal3DataClaim, 'orphan');
    expect(outcome).toMatchObject({
      kind: 'requeue',
      reason: 'Metal3DataTemplate no-such-template not found',
    });
    expect(describeWrites(writes(tc.server.log))).toEqual([]);
  });

  it('no template at all: refused by the CRD with the field path', async () => {
    await expectRejected(
      tc.client,
      R.Metal3DataClaim,
      { metadata: { name: 'no-template', namespace: NS }, spec: {} },
      'spec.template',
    );
  });
});
