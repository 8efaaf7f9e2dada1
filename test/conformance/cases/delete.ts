/** Deletion: finalizers, deletionTimestamp, preconditions, propagation policies, GC, namespaces. */
import { expect } from 'vitest';
import { R } from '../../../shared/api/resources.ts';
import type { KubeApiError } from '../../../shared/kube/errors.ts';
import { createTempCrd, eventually, GROUP, Widget, widget } from '../fixtures.ts';
import { failure } from '../http.ts';
import { type ConformanceCase, record } from '../suite.ts';

const owner = (o: any, extra: Record<string, unknown> = {}) => ({
  apiVersion: o.apiVersion ?? `${GROUP}/v1`,
  kind: o.kind ?? 'Widget',
  name: o.metadata.name,
  uid: o.metadata.uid,
  ...extra,
});

export const DELETE_CASES: ConformanceCase[] = [
  {
    name: 'DELETE without finalizers removes the object (DELETED event)',
    async run({ client, ns }) {
      await client.create(Widget, widget(ns, 'd'));
      const w = await record(client, Widget, ns, {});
      try {
        expect(await client.delete(Widget, ns, 'd')).toBe(true);
        await w.waitFor((e) => e.type === 'DELETED', 'DELETED');
        expect(await client.get(Widget, ns, 'd')).toBeUndefined();
        expect(await client.delete(Widget, ns, 'd')).toBe(false);
      } finally {
        w.stop();
      }
    },
  },
  {
    name: 'DELETE with finalizers: deletionTimestamp, grace 0, generation+1; no new finalizers; last one removed deletes',
    async run({ client, ns }) {
      const w0 = await client.create<any>(
        Widget,
        widget(ns, 'f', { size: 1 }, { finalizers: ['example.com/hold'] }),
      );
      const w = await record(client, Widget, ns, { resourceVersion: w0.metadata.resourceVersion });
      try {
        await client.delete(Widget, ns, 'f');
        const d = await client.get<any>(Widget, ns, 'f');
        expect(d.metadata.deletionTimestamp).toMatch(/Z$/);
        expect(d.metadata.deletionGracePeriodSeconds).toBe(0);
        expect(d.metadata.generation).toBe(2);
        await w.waitFor((e) => e.type === 'MODIFIED', 'MODIFIED');
        // Repeated DELETE returns the object, unchanged.
        await client.delete(Widget, ns, 'f');
        const again = await client.get<any>(Widget, ns, 'f');
        expect(again.metadata.resourceVersion).toBe(d.metadata.resourceVersion);
        const e = await failure(
          client.patch(Widget, ns, 'f', { metadata: { finalizers: ['example.com/hold', 'x.io/new'] } }),
        );
        expect(e.code).toBe(422);
        expect(e.status.message).toContain(
          'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"x.io/new"}',
        );
        await client.patch(Widget, ns, 'f', { metadata: { finalizers: null } });
        await w.waitFor((e) => e.type === 'DELETED', 'DELETED');
        expect(await client.get(Widget, ns, 'f')).toBeUndefined();
      } finally {
        w.stop();
      }
    },
  },
  {
    name: 'delete preconditions: uid and resourceVersion mismatches are 409 Precondition failed',
    async run({ client, ns }) {
      const o = await client.create<any>(Widget, widget(ns, 'p'));
      const e = await failure(
        client.delete(Widget, ns, 'p', { preconditions: { uid: '00000000-0000-0000-0000-000000000000' } }),
      );
      expect(e.code).toBe(409);
      expect(e.status.message).toBe(
        `Operation cannot be fulfilled on widgets.${GROUP} "p": Precondition failed: UID in precondition: 00000000-0000-0000-0000-000000000000, UID in object meta: ${o.metadata.uid}`,
      );
      const e2 = await failure(client.delete(Widget, ns, 'p', { preconditions: { resourceVersion: '1' } }));
      expect(e2.status.message).toBe(
        `Operation cannot be fulfilled on widgets.${GROUP} "p": Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta: ${o.metadata.resourceVersion}`,
      );
      expect(
        await client.delete(Widget, ns, 'p', {
          preconditions: { uid: o.metadata.uid, resourceVersion: o.metadata.resourceVersion },
        }),
      ).toBe(true);
    },
  },
  {
    name: 'background garbage collection deletes dependents whose owners are all gone',
    async run({ client, ns }) {
      const o1 = await client.create<any>(Widget, widget(ns, 'owner1'));
      const o2 = await client.create<any>(Widget, widget(ns, 'owner2'));
      await client.create(R.ConfigMap, {
        metadata: { name: 'only1', namespace: ns, ownerReferences: [owner(o1)] },
      });
      await client.create(R.ConfigMap, {
        metadata: { name: 'both', namespace: ns, ownerReferences: [owner(o1), owner(o2)] },
      });
      await client.delete(Widget, ns, 'owner1');
      await eventually(async () => !(await client.get(R.ConfigMap, ns, 'only1')), 'only1 collected', 30_000);
      const both = await client.get<any>(R.ConfigMap, ns, 'both');
      expect(both).toBeDefined();
      await client.delete(Widget, ns, 'owner2');
      await eventually(async () => !(await client.get(R.ConfigMap, ns, 'both')), 'both collected', 30_000);
    },
  },
  {
    name: 'foreground deletion holds the owner until blocking dependents are gone',
    async run({ client, ns }) {
      const o = await client.create<any>(Widget, widget(ns, 'fg'));
      await client.create(R.ConfigMap, {
        metadata: {
          name: 'dep',
          namespace: ns,
          finalizers: ['example.com/slow'],
          ownerReferences: [owner(o, { blockOwnerDeletion: true })],
        },
      });
      await client.delete(Widget, ns, 'fg', { propagationPolicy: 'Foreground' });
      const held = await eventually(async () => {
        const x = await client.get<any>(Widget, ns, 'fg');
        return x?.metadata.deletionTimestamp ? x : undefined;
      }, 'owner terminating');
      expect(held.metadata.finalizers).toContain('foregroundDeletion');
      await eventually(
        async () => (await client.get<any>(R.ConfigMap, ns, 'dep'))?.metadata.deletionTimestamp,
        'dependent terminating',
        30_000,
      );
      await client.patch(R.ConfigMap, ns, 'dep', { metadata: { finalizers: null } });
      await eventually(async () => !(await client.get(Widget, ns, 'fg')), 'owner gone', 30_000);
    },
  },
  {
    name: 'orphan deletion strips the ownerReferences of dependents and keeps them',
    async run({ client, ns }) {
      const o = await client.create<any>(Widget, widget(ns, 'orph'));
      await client.create(R.ConfigMap, {
        metadata: { name: 'kept', namespace: ns, ownerReferences: [owner(o)] },
      });
      await client.delete(Widget, ns, 'orph', { propagationPolicy: 'Orphan' });
      await eventually(async () => !(await client.get(Widget, ns, 'orph')), 'owner gone', 30_000);
      const kept = await eventually(
        async () => {
          const k = await client.get<any>(R.ConfigMap, ns, 'kept');
          return k && !k.metadata.ownerReferences ? k : undefined;
        },
        'ownerReferences stripped',
        30_000,
      );
      expect(kept.metadata.name).toBe('kept');
    },
  },
  {
    name: 'dryRun=All on create and delete writes nothing (the answer shows what would happen)',
    async run({ client, ns }) {
      const d = await client.create<any>(Widget, widget(ns, 'dry'), { dryRun: true });
      expect(d.metadata.uid).toBeTruthy();
      expect(await client.get(Widget, ns, 'dry')).toBeUndefined();
      const real = await client.create<any>(
        Widget,
        widget(ns, 'real', { size: 1 }, { finalizers: ['example.com/x'] }),
      );
      const { HttpMethod } = await import('@kubernetes/client-node');
      const api = (client as any).api;
      const dryDel = (await api.send(HttpMethod.DELETE, client.path(Widget, ns, 'real'), { dryRun: 'All' }))
        .body;
      expect(dryDel.metadata.deletionTimestamp).toBeTruthy();
      const after = await client.get<any>(Widget, ns, 'real');
      expect(after.metadata.deletionTimestamp).toBeUndefined();
      expect(after.metadata.resourceVersion).toBe(real.metadata.resourceVersion);
    },
  },
  {
    name: 'deleting a namespace deletes its contents, then the namespace',
    async run({ client, ns }) {
      const sub = `${ns}-sub`;
      await client.create(R.Namespace, { metadata: { name: sub } });
      await client.create(Widget, widget(sub, 'inside'));
      await client.create(R.ConfigMap, { metadata: { name: 'inside', namespace: sub } });
      await client.delete(R.Namespace, undefined, sub);
      await eventually(
        async () => !(await client.get(R.Namespace, undefined, sub)),
        'namespace gone',
        60_000,
      );
      expect(await client.get(Widget, sub, 'inside')).toBeUndefined();
    },
  },
  {
    name: 'DELETE on a collection deletes what the selector matches',
    async run({ client, ns }) {
      for (const [n, l] of [
        ['a', 'x'],
        ['b', 'x'],
        ['c', 'y'],
      ]) {
        await client.create(R.ConfigMap, { metadata: { name: n!, namespace: ns, labels: { g: l! } } });
      }
      const { HttpMethod } = await import('@kubernetes/client-node');
      await (client as any).api.send(HttpMethod.DELETE, client.path(R.ConfigMap, ns), {
        labelSelector: 'g=x',
      });
      // Selected by label: a namespace also holds the kube-root-ca.crt ConfigMap its controller publishes.
      await eventually(
        async () => (await client.list(R.ConfigMap, ns, { labelSelector: 'g' })).items.length === 1,
        'collection deleted',
        30_000,
      );
      expect(
        (await client.list(R.ConfigMap, ns, { labelSelector: 'g' })).items.map((i) => i.metadata.name),
      ).toEqual(['c']);
    },
  },
  {
    name: 'deleting a CRD removes its objects and stops serving the kind',
    async run({ client, ns }) {
      const group = `${ns}.example.com`;
      const Temp = await createTempCrd(client, group);
      await eventually(
        async () => client.create(Temp, { metadata: { name: 't', namespace: ns }, spec: { a: 1 } }),
        'kind served',
        30_000,
      );
      const w = await record(client, Temp, ns, { resourceVersion: '0' });
      await w.waitFor((e) => e.type === 'ADDED', 'initial');
      await client.delete(R.CustomResourceDefinition, undefined, `temps.${group}`);
      await eventually(
        async () => !(await client.get(R.CustomResourceDefinition, undefined, `temps.${group}`)),
        'CRD gone',
        60_000,
      );
      await w.ended;
      const e = await client.list(Temp, ns).then(
        () => undefined,
        (x: KubeApiError) => x,
      );
      expect(e?.code).toBe(404);
    },
  },
];
