/**
 * The one object-reconciler opening (shared/reconcile/object.ts), against the embedded API server:
 *  - the reconciled object fails its schema: the failure is recorded on it (its error field, a
 *    Warning Event) once, nothing else is written, the result is terminal; a repeat delivery
 *    writes nothing at all;
 *  - an object read while reconciling fails its schema: the failure is recorded on the reconciled
 *    object, the related object is never written to.
 * Both with violations only zod sees (refinements: the CRD admits the objects).
 */
import { describe, expect, it } from 'vitest';
import { envelopeOf, R } from '../../../shared/api/resources.ts';
import { allocate, createMachine, NS, pool, render, seedTemplate } from '../../helpers/data.ts';
import { useDataCluster } from '../data/use-data-cluster.ts';

const tc = useDataCluster({ pools: true });

/** The requests that wrote, as `verb resource` (the API server's own log). */
const writes = () =>
  tc.server.log.entries
    .filter((e) => !['get', 'list', 'watch'].includes(e.verb) && e.status < 300)
    .map((e) => `${e.verb} ${e.resource}`);

const warnings = async (name: string) =>
  (await tc.client.list(R.Event, NS)).items.filter(
    (e) => e.involvedObject?.name === name && e.type === 'Warning',
  );

describe('the reconciled object fails its schema', () => {
  it('is recorded on it once (errorMessage, one Warning Event), nothing else is written', async () => {
    // A claim whose template ref names another namespace: the CRD admits it, the schema does not.
    await tc.client.create(envelopeOf(R.Metal3DataClaim), {
      metadata: { name: 'foreign-ref', namespace: NS },
      spec: { template: { name: 'nodepool-1', namespace: 'elsewhere' } },
    });
    tc.server.log.reset();
    const first = await allocate(tc.ctx, R.Metal3DataClaim, 'foreign-ref');
    expect(first).toMatchObject({ kind: 'terminal', reason: 'InvalidConfiguration' });
    expect(first.kind === 'terminal' && first.message).toMatch(
      /^Metal3DataClaim metal3\/foreign-ref is invalid: spec\.template\.namespace: /,
    );
    expect(writes()).toEqual(['update metal3dataclaims/status', 'create events']);

    const claim = await tc.client.get(envelopeOf(R.Metal3DataClaim), NS, 'foreign-ref');
    expect(claim?.status).toEqual({ errorMessage: first.kind === 'terminal' ? first.message : '' });
    expect(claim?.metadata.finalizers).toBeUndefined();
    const events = await warnings('foreign-ref');
    expect(events.map((e) => [e.reason, e.message, e.count])).toEqual([
      ['AllocationFailed', first.kind === 'terminal' ? first.message : '', 1],
    ]);
    expect((await tc.client.list(R.Metal3Data, NS)).items).toEqual([]);

    // Delivered again: the same terminal result, and not one write (no Event count bump either).
    tc.server.log.reset();
    expect(await allocate(tc.ctx, R.Metal3DataClaim, 'foreign-ref')).toEqual(first);
    expect(writes()).toEqual([]);
    expect((await warnings('foreign-ref')).map((e) => e.count)).toEqual([1]);
  });
});

describe('an object read while reconciling fails its schema', () => {
  it('is recorded on the reconciled object; the related object is never written', async () => {
    // A pool whose range ends before it starts: admitted by the CRD, refused by the schema.
    await tc.client.create(
      envelopeOf(R.IPPool),
      pool('backwards', { pools: [{ start: '10.9.0.20', end: '10.9.0.10' }], prefix: 24 }),
    );
    const before = (await tc.client.get(envelopeOf(R.IPPool), NS, 'backwards'))!;
    await tc.client.create(R.IPClaim, {
      metadata: { name: 'on-backwards', namespace: NS },
      spec: { pool: { name: 'backwards' } },
    });
    tc.server.log.reset();
    const first = await allocate(tc.ctx, R.IPClaim, 'on-backwards');
    expect(first).toMatchObject({ kind: 'terminal', reason: 'InvalidConfiguration' });
    expect(first.kind === 'terminal' && first.message).toMatch(
      /^IPPool metal3\/backwards is invalid: spec\.pools\[0\]\.end: end 10\.9\.0\.10 must be >= start/,
    );
    expect(writes()).toEqual(['update ipclaims/status', 'create events']);
    const claim = await tc.client.get(R.IPClaim, NS, 'on-backwards');
    expect(claim?.status?.errorMessage).toBe(first.kind === 'terminal' ? first.message : '');
    expect((await warnings('on-backwards')).map((e) => e.reason)).toEqual(['IPAllocationFailed']);
    expect(await warnings('backwards')).toEqual([]);
    const after = (await tc.client.get(envelopeOf(R.IPPool), NS, 'backwards'))!;
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(after).toEqual(before);
    expect((await tc.client.list(R.IPAddress, NS)).items).toEqual([]);

    // The claim's error is sticky: a repeat delivery writes nothing.
    tc.server.log.reset();
    expect((await allocate(tc.ctx, R.IPClaim, 'on-backwards')).kind).toBe('done');
    expect(writes()).toEqual([]);
  });
});

describe('an object read while rendering fails its schema', () => {
  it('is recorded on the Metal3Data, no Secret is written, the Metal3Machine is left as it is', async () => {
    await tc.client.create(
      R.Metal3DataTemplate,
      seedTemplate('rel-t', (spec) => {
        delete spec.templateReference;
      }),
    );
    await createMachine(tc.client, 'rel', 'rel-t');
    // The machine's userData names another namespace: admitted by the CRD, refused by the schema.
    await tc.client.patch(envelopeOf(R.Metal3Machine), NS, 'rel', {
      spec: { userData: { name: 'ud', namespace: 'elsewhere' } },
    });
    expect((await allocate(tc.ctx, R.Metal3DataClaim, 'rel')).kind).toBe('done');
    const machineBefore = (await tc.client.get(envelopeOf(R.Metal3Machine), NS, 'rel'))!;
    tc.server.log.reset();

    const first = await render(tc.ctx, 'rel-t-0');
    expect(first).toMatchObject({ kind: 'terminal', reason: 'InvalidConfiguration' });
    const message = first.kind === 'terminal' ? first.message : '';
    expect(message).toMatch(/^Metal3Machine metal3\/rel is invalid: spec\.userData\.namespace: /);
    expect(writes()).toEqual(['update metal3datas/status', 'create events']);
    const data = await tc.client.get(R.Metal3Data, NS, 'rel-t-0');
    expect(data?.status).toEqual({ ready: false, error: true, errorMessage: message });
    expect((await warnings('rel-t-0')).map((e) => [e.reason, e.message])).toEqual([
      ['InvalidConfiguration', message],
    ]);
    expect(await warnings('rel')).toEqual([]);
    expect(await tc.client.get(envelopeOf(R.Metal3Machine), NS, 'rel')).toEqual(machineBefore);

    tc.server.log.reset();
    expect(await render(tc.ctx, 'rel-t-0')).toEqual(first);
    expect(writes()).toEqual([]);
  });
});
