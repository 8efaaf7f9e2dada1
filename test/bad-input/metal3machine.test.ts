/**
 * Bad Metal3Machines. The CRD rejects what its schema can express (422 with the field path); what
 * passes the CRD but cannot be provisioned is a terminal error recorded by selectHost on the object
 * (failureReason/failureMessage, the AssociateBMH condition, a Warning Event), the message is
 * acknowledged, and nothing is written to any host or Secret. A second pass writes nothing at all.
 */
import { describe, expect, it } from 'vitest';
import { createSampleHosts } from '../../infra/local/sim/bmo.ts';
import { envelopeOf, R } from '../../shared/api/resources.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { createCluster, createMachinePair } from '../helpers/hosts.ts';
import {
  describeWrites,
  expectNoPreciousWrites,
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
    await createCluster(client);
    // Hosts a wrongly accepted machine could take: any write to them is a failure of the test.
    await createSampleHosts(client, NS, 3, { labels: () => ({ rack: '1', size: '8' }) });
    await client.create(R.Secret, {
      metadata: { name: 'foreign-user-data', namespace: 'other' },
      data: { value: Buffer.from('#cloud-config\n').toString('base64') },
    });
  },
});

const image = {
  url: 'http://172.22.0.1/images/node.img',
  checksum: 'http://172.22.0.1/images/node.img.sha256sum',
  checksumType: 'sha256',
  format: 'raw',
};

interface SemanticCase {
  name: string;
  spec: Record<string, unknown>;
  reason: string;
  /** What failureMessage must say (the field at fault). */
  message: RegExp;
}

const SEMANTIC: SemanticCase[] = [
  {
    name: 'gt-not-integer',
    spec: { image, hostSelector: { matchExpressions: [{ key: 'size', operator: 'gt', values: ['8GB'] }] } },
    reason: 'InvalidConfiguration',
    message: /hostSelector\.matchExpressions\[0\]\.values.*integer/i,
  },
  {
    name: 'lt-two-values',
    spec: {
      image,
      hostSelector: { matchExpressions: [{ key: 'size', operator: 'Lt', values: ['1', '2'] }] },
    },
    reason: 'InvalidConfiguration',
    message: /hostSelector\.matchExpressions\[0\]\.values/,
  },
  {
    name: 'in-without-values',
    spec: { image, hostSelector: { matchExpressions: [{ key: 'rack', operator: 'in', values: [] }] } },
    reason: 'InvalidConfiguration',
    message: /hostSelector\.matchExpressions\[0\]\.values.*at least one/,
  },
  {
    name: 'exists-with-values',
    spec: { image, hostSelector: { matchExpressions: [{ key: 'rack', operator: 'exists', values: ['1'] }] } },
    reason: 'InvalidConfiguration',
    message: /hostSelector\.matchExpressions\[0\]\.values/,
  },
  {
    name: 'image-without-checksum',
    spec: { image: { url: 'http://172.22.0.1/images/node.img', format: 'raw' } },
    reason: 'InvalidConfiguration',
    message: /image\.checksum/,
  },
  {
    name: 'no-image',
    spec: {},
    reason: 'InvalidConfiguration',
    message: /image\.url/,
  },
  {
    name: 'cross-namespace-userdata',
    spec: { image, userData: { name: 'foreign-user-data', namespace: 'other' } },
    reason: 'InvalidConfiguration',
    message: /spec\.userData.*namespace/,
  },
  {
    name: 'cross-namespace-metadata',
    spec: { image, metaData: { name: 'foreign-user-data', namespace: 'other' } },
    reason: 'InvalidConfiguration',
    message: /spec\.metaData.*namespace/,
  },
  {
    name: 'cross-namespace-template',
    spec: { image, dataTemplate: { name: 'nodepool', namespace: 'other' } },
    reason: 'InvalidConfiguration',
    message: /spec\.dataTemplate.*namespace/,
  },
];

describe('Metal3Machine: accepted by the CRD, refused by selectHost', () => {
  it.each(SEMANTIC)('$name: $reason recorded on the object, no host or Secret written', async (c) => {
    const { m3m } = await createMachinePair(tc.client, `bad-${c.name}`, {
      m3mSpec: { image: undefined, ...c.spec },
    });
    // createMachinePair merges the spec; make sure the case's own spec is what the server holds.
    expect(m3m.spec).toMatchObject(c.spec);
    tc.server.log.reset();

    const outcome = await run(tc.ctx, 'selectHost', R.Metal3Machine, m3m.metadata.name!);
    expect(outcome).toMatchObject({ kind: 'terminal', reason: c.reason });
    expect((outcome as { message: string }).message).toMatch(c.message);

    const after = await tc.client.get(envelopeOf(R.Metal3Machine), NS, m3m.metadata.name!);
    const st = statusOf(after);
    expect(st.failureReason).toBe(c.reason);
    expect(String(st.failureMessage)).toMatch(c.message);
    expect(st.ready).toBe(false);
    const cond = (
      st.conditions as { type: string; status: string; severity?: string; message?: string }[]
    ).find((x) => x.type === 'AssociateBMH');
    expect(cond).toMatchObject({ status: 'False', reason: c.reason, severity: 'Error' });
    expect(cond?.message).toMatch(c.message);
    expect(after?.metadata.annotations?.['metal3.io/BareMetalHost']).toBeUndefined();
    const events = await warningEvents(tc.client, after!);
    expect(events.map((e) => (e as { reason?: string }).reason)).toContain(c.reason);

    // Nothing partial: the only writes are to the machine itself (status, finalizer) and the Event.
    expectNoPreciousWrites(tc.server.log);
    const others = writes(tc.server.log).filter(
      (w) =>
        !(w.resource.startsWith('metal3machines') && w.name === m3m.metadata.name) && w.resource !== 'events',
    );
    expect(describeWrites(others)).toEqual([]);
    expect(await tc.client.list(envelopeOf(R.Metal3DataClaim), NS)).toMatchObject({ items: [] });

    // Acknowledged, not retried: a redelivery writes nothing, not even an Event (terminal again:
    // the same refusal, its failure recorded already).
    tc.server.log.reset();
    const again = await run(tc.ctx, 'selectHost', R.Metal3Machine, m3m.metadata.name!);
    expect(again.kind).toBe('terminal');
    expect(describeWrites(writes(tc.server.log))).toEqual([]);
  });

  it('no host was touched by any of the refused machines', async () => {
    const hosts = (await tc.client.list(R.BareMetalHost, NS)).items;
    for (const h of hosts) {
      expect((h.spec as { consumerRef?: unknown }).consumerRef).toBeUndefined();
      expect((h.spec as { image?: unknown }).image).toBeUndefined();
    }
  });
});

interface CrdCase {
  name: string;
  spec: Record<string, unknown>;
  field: string;
}

const REJECTED_BY_CRD: CrdCase[] = [
  {
    name: 'bad-operator',
    spec: { image, hostSelector: { matchExpressions: [{ key: 'rack', operator: 'like', values: ['1'] }] } },
    field: 'spec.hostSelector.matchExpressions[0].operator',
  },
  {
    name: 'bad-cleaning-mode',
    spec: { image, automatedCleaningMode: 'sometimes' },
    field: 'spec.automatedCleaningMode',
  },
  {
    name: 'bad-checksum-type',
    spec: { image: { ...image, checksumType: 'crc32' } },
    field: 'spec.image.checksumType',
  },
];

describe('Metal3Machine: rejected by the CRD with the field path', () => {
  it.each(REJECTED_BY_CRD)('$name: 422 naming $field', async (c) => {
    const obj: KubeObject = { metadata: { name: `crd-${c.name}`, namespace: NS }, spec: c.spec };
    tc.server.log.reset();
    await expectRejected(tc.client, R.Metal3Machine, obj, c.field);
    expectNoPreciousWrites(tc.server.log);
  });
});
