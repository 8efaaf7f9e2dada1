/**
 * deprovision for a deleting NodeClaim against the embedded API server: the host is powered off and
 * cleared with its original network annotations restored exactly (absent stays absent) in one
 * write; the release waits while the host deprovisions; once it is available the consumerRef and
 * the node-claim label go, the IPClaim is deleted, and the finalizer goes last.
 */
import { describe, expect, it } from 'vitest';
import { reconcile as deprovision } from '../../../functions/deprovision/core.ts';
import { R } from '../../../shared/api/resources.ts';
import {
  NODE_CLAIM_LABEL,
  NODE_TYPE_LABEL,
  VMETAL_HOST_ANNOTATION,
  VMETAL_ORIGINAL_ANNOTATIONS,
} from '../../../shared/api/wellknown.ts';
import { ipClaimName } from '../../../shared/vmetal/network.ts';
import { messageFor } from '../../helpers/messages.ts';
import {
  createHosts,
  HOST_NS,
  nodeClaim,
  PROJECT_NS,
  provider,
  runSelectHost,
  useVmetalCluster,
} from './setup.ts';

const tc = useVmetalCluster();
const runDeprovision = (name: string) =>
  deprovision(tc.ctx, messageFor('deprovision', R.NodeClaim, name, PROJECT_NS));

describe('deprovision for a NodeClaim', () => {
  it('clears the host and restores its annotations exactly, waits for deprovisioning, then releases host, IPClaim and finalizer', async () => {
    await createHosts(tc.client, 'rel', 1, () => ({ pool: 'rel' }));
    const fresh = (await tc.client.get(R.BareMetalHost, HOST_NS, 'rel-0000'))!;
    await tc.client.replace(R.BareMetalHost, {
      ...fresh,
      metadata: {
        ...fresh.metadata,
        annotations: { [VMETAL_HOST_ANNOTATION.gateway]: '192.0.2.1', other: 'kept' },
      },
    });
    await tc.client.create(R.NodeProvider, provider('prov-rel', {}, 'rel'));
    await runSelectHost(tc.ctx, R.NodeProvider, 'prov-rel', undefined);
    await tc.client.create(R.NodeClaim, nodeClaim('c-rel', 'prov-rel-any'));
    await runSelectHost(tc.ctx, R.NodeClaim, 'c-rel', PROJECT_NS);
    const ipc = ipClaimName({ namespace: PROJECT_NS, name: 'c-rel' });
    expect(await tc.client.get(R.IPClaim, HOST_NS, ipc)).toBeDefined();

    // What provisioning would have written (renderData's part): image, data, online, our annotations.
    const held = (await tc.client.get(R.BareMetalHost, HOST_NS, 'rel-0000'))!;
    expect(held.metadata.labels?.[NODE_TYPE_LABEL]).toBe('prov-rel-any');
    const provisioned = await tc.client.replace(R.BareMetalHost, {
      ...held,
      metadata: {
        ...held.metadata,
        annotations: {
          ...held.metadata.annotations,
          [VMETAL_HOST_ANNOTATION.ipAddress]: '10.60.0.10/24',
          [VMETAL_HOST_ANNOTATION.gateway]: '10.60.0.1',
        },
      },
      spec: { ...held.spec, image: { url: 'http://x/i.qcow2', checksum: 'http://x/i.sum' }, online: true },
    });
    await tc.client.replaceStatus(R.BareMetalHost, {
      ...provisioned,
      status: {
        ...provisioned.status,
        provisioning: { ...provisioned.status?.provisioning, state: 'provisioned' },
      },
    });

    await tc.client.delete(R.NodeClaim, PROJECT_NS, 'c-rel');
    expect(await runDeprovision('c-rel')).toMatchObject({ kind: 'requeue' });
    const cleared = (await tc.client.get(R.BareMetalHost, HOST_NS, 'rel-0000'))!;
    expect(cleared.spec?.image).toBeUndefined();
    expect(cleared.spec?.online).toBe(false);
    expect(cleared.metadata.annotations).toEqual({
      [VMETAL_HOST_ANNOTATION.gateway]: '192.0.2.1',
      other: 'kept',
    });
    expect(cleared.spec?.consumerRef?.name).toBe('c-rel'); // still held while deprovisioning
    expect(await tc.client.get(R.NodeClaim, PROJECT_NS, 'c-rel')).toBeDefined();

    await tc.client.replaceStatus(R.BareMetalHost, {
      ...cleared,
      status: { ...cleared.status, provisioning: { ...cleared.status?.provisioning, state: 'available' } },
    });
    expect(await runDeprovision('c-rel')).toMatchObject({ kind: 'done' });
    const back = (await tc.client.get(R.BareMetalHost, HOST_NS, 'rel-0000'))!;
    expect(back.spec?.consumerRef).toBeUndefined();
    expect(back.metadata.labels?.[NODE_CLAIM_LABEL]).toBeUndefined();
    expect(back.metadata.labels?.[NODE_TYPE_LABEL]).toBeUndefined();
    expect(back.metadata.annotations?.[VMETAL_ORIGINAL_ANNOTATIONS]).toBeUndefined();
    expect(back.metadata.labels?.pool).toBe('rel');
    const ipClaim = await tc.client.get(R.IPClaim, HOST_NS, ipc);
    expect(ipClaim === undefined || ipClaim.metadata.deletionTimestamp !== undefined).toBe(true);
    expect(await tc.client.get(R.NodeClaim, PROJECT_NS, 'c-rel')).toBeUndefined();
  });
});
