/**
 * A get → mutate → replace round trip through the typed client writes exactly what it read plus
 * the mutation: a BareMetalHost (its CRD keeps unknown fields) carrying fields our schema does not
 * model at several levels goes through optimisticUpdate with a typed mutation; the body sent is the
 * object as the API server returned it plus that change (without its managedFields, which an update
 * that carries none keeps), and so is what the server then holds.
 */
import { describe, expect, it } from 'vitest';
import { envelopeOf, R, type Resource } from '../../../shared/api/resources.ts';
import { KubeClient } from '../../../shared/kube/client.ts';
import { optimisticUpdate } from '../../../shared/kube/optimistic.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { NS } from '../../helpers/data.ts';
import { useDataCluster } from '../data/use-data-cluster.ts';

const tc = useDataCluster();

/** A client that keeps the bodies of its PUTs. */
class RecordingClient extends KubeClient {
  readonly puts: unknown[] = [];
  override async replace<T extends KubeObject>(t: Resource<T>, obj: T): Promise<T> {
    this.puts.push(structuredClone(obj));
    return super.replace(t, obj);
  }
}

const HOST = {
  metadata: { name: 'rt-host', namespace: NS, labels: { keep: 'me' } },
  spec: {
    online: false,
    bootMACAddress: '52:54:00:00:00:01',
    bmc: { address: 'ipmi://192.0.2.1', credentialsName: 'rt-bmc', futureBmc: ['a', { b: true }] },
    rootDeviceHints: { deviceName: '/dev/sda', futureHint: null },
    futureSpec: { nested: { deeper: [1, 2, 3] } },
  },
  status: { hardware: { nics: [{ name: 'eth0', futureNic: { speedGbps: 25 } }], futureHw: 'x' } },
};

describe('typed read-modify-write', () => {
  it('sends what it read plus the mutation, and the server holds exactly that', async () => {
    const created = await tc.client.create(envelopeOf(R.BareMetalHost), HOST);
    await tc.client.replaceStatus(envelopeOf(R.BareMetalHost), { ...created, status: HOST.status });
    const read = (await tc.client.get(envelopeOf(R.BareMetalHost), NS, 'rt-host'))!;
    // The fixture really carries what the schema does not model, as the server stored it.
    expect(read).toMatchObject({ spec: HOST.spec, status: HOST.status });

    const client = new RecordingClient(KubeClient.fromString(tc.kubeconfig).kc);
    const r = await optimisticUpdate(client, R.BareMetalHost, NS, 'rt-host', (h) => {
      h.metadata.labels = { ...h.metadata.labels, added: 'yes' };
      h.spec = { ...h.spec, online: true };
    });
    expect(r.outcome).toBe('updated');

    const want = structuredClone(read);
    want.metadata.labels = { ...want.metadata.labels, added: 'yes' };
    want.spec = { ...(want.spec as object), online: true };
    expect(client.puts).toHaveLength(1);
    const { managedFields: _kept, ...sentMeta } = want.metadata;
    expect(client.puts[0]).toStrictEqual({ ...want, metadata: sentMeta });

    const after = (await tc.client.get(envelopeOf(R.BareMetalHost), NS, 'rt-host'))!;
    // The server's own bookkeeping moves (resourceVersion, generation on a spec change, and the
    // field ownership it records for the update in managedFields).
    const server = { resourceVersion: 'x', generation: 0, managedFields: [] };
    expect({ ...after, metadata: { ...after.metadata, ...server } }).toStrictEqual({
      ...want,
      metadata: { ...want.metadata, ...server },
    });
  });
});
