/**
 * Deletion racing allocation (different queues, so the queue's per-template order does not help):
 * the claim is deleted and released between our decision and our create; the Metal3Data is
 * deleted and released while we create its IPClaims. Nothing may leak. The race is placed
 * deterministically with a client whose create runs the competing steps first.
 */
import { describe, expect, it } from 'vitest';
import { R, type Resource } from '../../../shared/api/resources.ts';
import { KubeClient } from '../../../shared/kube/client.ts';
import { InvalidError } from '../../../shared/kube/errors.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import type { ReconcileContext } from '../../../shared/reconcile/context.ts';
import { allocate, createMachine, makeCtx, NS, release, render, seedTemplate } from '../../helpers/data.ts';
import { useDataCluster } from './use-data-cluster.ts';

/** A client that runs `before` once, right before its next create of kind `kind`. */
class RacingClient extends KubeClient {
  before: { kind: string; run: () => Promise<void> } | undefined;
  override async create<T extends KubeObject>(
    t: Resource<T>,
    obj: T,
    opts: { dryRun?: boolean } = {},
  ): Promise<T> {
    const b = this.before;
    if (b && b.kind === t.kind) {
      this.before = undefined;
      await b.run();
    }
    return super.create(t, obj, opts);
  }
}

let racing: RacingClient;
let racingCtx: ReconcileContext;

const tc = useDataCluster({
  pools: true,
  template: seedTemplate('racy', (s) => {
    delete s.templateReference;
  }),
  seed: async ({ client }) => {
    racing = new RacingClient(client.kc);
    racingCtx = makeCtx(racing);
  },
});

const all = async (t: Resource) => (await tc.client.list(t, NS)).items;

describe('deletion racing allocation', () => {
  it('claim deleted and released while its Metal3Data is being created: the Metal3Data is released too', async () => {
    const m = await createMachine(tc.client, 'r1', 'racy');
    // The finalizer is already there (an earlier delivery added it).
    await tc.client.patch(R.Metal3DataClaim, NS, 'r1', {
      metadata: { finalizers: ['metal3dataclaim.infrastructure.cluster.x-k8s.io'] },
    });
    racing.before = {
      kind: 'Metal3Data',
      run: async () => {
        await tc.client.delete(R.Metal3DataClaim, NS, 'r1');
        expect(await release(tc.ctx, R.Metal3DataClaim, 'r1')).toMatchObject({ kind: 'done' });
        expect(await tc.client.get(R.Metal3DataClaim, NS, 'r1')).toBeUndefined();
      },
    };
    const r = await allocate(racingCtx, R.Metal3DataClaim, 'r1');
    expect(r).toMatchObject({ kind: 'done' });
    tc.server.settle();
    expect(await all(R.Metal3Data)).toEqual([]);
    expect(m.claim.metadata.uid).toBeDefined();
  });

  it('Metal3Data deleted and released while its IPClaims are created: the IPClaims are released too', async () => {
    await createMachine(tc.client, 'r2', 'racy');
    expect(await allocate(tc.ctx, R.Metal3DataClaim, 'r2')).toMatchObject({ kind: 'done' });
    const data = (await all(R.Metal3Data))[0]!;
    racing.before = {
      kind: 'IPClaim',
      run: async () => {
        await tc.client.delete(R.Metal3DataClaim, NS, 'r2');
        await release(tc.ctx, R.Metal3DataClaim, 'r2');
        expect(await tc.client.get(R.Metal3Data, NS, data.metadata.name!)).toBeUndefined();
      },
    };
    const r = await render(racingCtx, data.metadata.name!);
    expect(r).toMatchObject({ kind: 'done' });
    expect(await tc.client.get(R.Metal3Data, NS, data.metadata.name!)).toBeUndefined();
    // IPAM may have served the claim in between; the relay would deliver its deletion too.
    for (const c of await all(R.IPClaim)) await release(tc.ctx, R.IPClaim, c.metadata.name!);
    tc.server.settle();
    expect(await all(R.IPClaim)).toEqual([]);
    expect(await all(R.IPAddress)).toEqual([]);
    expect(await all(R.Metal3Data)).toEqual([]);
  });

  it('a create the API server rejects (422) is recorded on the claim, terminal', async () => {
    await createMachine(tc.client, 'r3', 'racy');
    racing.before = {
      kind: 'Metal3Data',
      run: async () => {
        throw new InvalidError(422, { message: 'admission webhook denied the request' });
      },
    };
    const r = await allocate(racingCtx, R.Metal3DataClaim, 'r3');
    const message = 'Failed to create associated Metal3Data object: admission webhook denied the request';
    expect(r).toEqual({ kind: 'terminal', reason: 'InvalidConfiguration', message });
    expect((await tc.client.get(R.Metal3DataClaim, NS, 'r3'))?.status).toEqual({ errorMessage: message });
  });
});
