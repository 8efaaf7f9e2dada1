/** Create, read, update: identity fields, conflicts, status subresource, generation, Status bodies. */
import { expect } from 'vitest';
import { envelopeOf, R } from '../../../shared/api/resources.ts';
import {
  AlreadyExistsError,
  ConflictError,
  InvalidError,
  type KubeApiError,
  NotFoundError,
} from '../../../shared/kube/errors.ts';
import { Gadget, GROUP, Widget, widget } from '../fixtures.ts';
import { type ConformanceCase, record } from '../suite.ts';

async function failure(p: Promise<unknown>): Promise<KubeApiError> {
  try {
    await p;
  } catch (e) {
    return e as KubeApiError;
  }
  throw new Error('expected the request to fail');
}

export const CRUD_CASES: ConformanceCase[] = [
  {
    name: 'create assigns uid, creationTimestamp, resourceVersion and generation 1',
    async run({ client, ns }) {
      const w = await client.create<any>(Widget, widget(ns, 'w1'));
      expect(w.metadata.uid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(w.metadata.creationTimestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
      expect(w.metadata.resourceVersion).toMatch(/^\d+$/);
      expect(w.metadata.generation).toBe(1);
      expect(w.apiVersion).toBe(`${GROUP}/v1`);
      const got = await client.get<any>(Widget, ns, 'w1');
      expect(got).toEqual(w);
    },
  },
  {
    name: 'generateName appends 5 characters from the server alphabet',
    async run({ client, ns }) {
      const a = await client.create<any>(Widget, {
        ...widget(ns, ''),
        metadata: { generateName: 'gen-', namespace: ns },
      });
      const b = await client.create<any>(Widget, {
        ...widget(ns, ''),
        metadata: { generateName: 'gen-', namespace: ns },
      });
      expect(a.metadata.name).toMatch(/^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      expect(b.metadata.name).not.toBe(a.metadata.name);
    },
  },
  {
    name: 'create of an existing name is 409 AlreadyExists',
    async run({ client, ns }) {
      await client.create(Widget, widget(ns, 'dup'));
      const e = await failure(client.create(Widget, widget(ns, 'dup')));
      expect(e).toBeInstanceOf(AlreadyExistsError);
      expect(e.status).toMatchObject({
        kind: 'Status',
        status: 'Failure',
        reason: 'AlreadyExists',
        code: 409,
        message: `widgets.${GROUP} "dup" already exists`,
        details: { name: 'dup', group: GROUP, kind: 'widgets' },
      });
    },
  },
  {
    name: 'get of a missing object is 404 NotFound with the server message; core group omitted',
    async run({ client, ns }) {
      const e = await failure(
        client.replace(Widget, {
          ...widget(ns, 'nope'),
          metadata: { name: 'nope', namespace: ns, resourceVersion: '1' },
        }),
      );
      expect(e).toBeInstanceOf(NotFoundError);
      expect(e.status).toMatchObject({
        reason: 'NotFound',
        code: 404,
        message: `widgets.${GROUP} "nope" not found`,
        details: { name: 'nope', group: GROUP, kind: 'widgets' },
      });
      const e2 = await failure(client.patch(R.ConfigMap, ns, 'nope', { data: { a: 'b' } }));
      expect(e2.status.message).toBe('configmaps "nope" not found');
      expect(e2.status.details).toEqual({ name: 'nope', kind: 'configmaps' });
      expect(await client.get(R.ConfigMap, ns, 'nope')).toBeUndefined();
    },
  },
  {
    name: 'create with a resourceVersion is refused (500, as etcd storage answers)',
    async run({ client, ns }) {
      const e = await failure(
        client.create(Widget, widget(ns, 'rv', { size: 1 }, { resourceVersion: '12' })),
      );
      expect(e.code).toBe(500);
      expect(e.status.message).toBe('resourceVersion should not be set on objects to be created');
    },
  },
  {
    name: 'create in a missing namespace is 404 for the namespace',
    async run({ client }) {
      const e = await failure(client.create(Widget, widget('no-such-ns-xyz', 'w')));
      expect(e).toBeInstanceOf(NotFoundError);
      expect(e.status.message).toBe('namespaces "no-such-ns-xyz" not found');
    },
  },
  {
    name: 'update with a stale resourceVersion is 409 Conflict with the exact message',
    async run({ client, ns }) {
      const w = await client.create<any>(Widget, widget(ns, 'm1'));
      await client.replace(Widget, { ...w, spec: { size: 2 } });
      const e = await failure(client.replace(Widget, { ...w, spec: { size: 3 } }));
      expect(e).toBeInstanceOf(ConflictError);
      expect(e.status).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: `Operation cannot be fulfilled on widgets.${GROUP} "m1": the object has been modified; please apply your changes to the latest version and try again`,
        reason: 'Conflict',
        details: { name: 'm1', group: GROUP, kind: 'widgets' },
        code: 409,
      });
    },
  },
  {
    name: 'update of a custom resource without resourceVersion is 422',
    async run({ client, ns }) {
      await client.create(Widget, widget(ns, 'm1'));
      const e = await failure(client.replace(Widget, widget(ns, 'm1', { size: 5 })));
      expect(e).toBeInstanceOf(InvalidError);
      expect(e.code).toBe(422);
      expect(e.status.message).toBe(
        `Widget.${GROUP} "m1" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`,
      );
    },
  },
  {
    name: 'built-in kinds allow an unconditional update',
    async run({ client, ns }) {
      await client.create(R.ConfigMap, { metadata: { name: 'c', namespace: ns }, data: { a: '1' } });
      const u = await client.replace<any>(R.ConfigMap, {
        metadata: { name: 'c', namespace: ns },
        data: { a: '2' },
      });
      expect(u.data).toEqual({ a: '2' });
    },
  },
  {
    name: 'one global resourceVersion counter across kinds, increasing with every write',
    async run({ client, ns }) {
      const a = await client.create<any>(Widget, widget(ns, 'a'));
      const b = await client.create(envelopeOf(R.ConfigMap), { metadata: { name: 'b', namespace: ns } });
      const c = await client.create(envelopeOf(R.Secret), { metadata: { name: 'c', namespace: ns } });
      const rvs = [a, b, c].map((o) => BigInt(o.metadata.resourceVersion));
      expect(rvs[1]! > rvs[0]!).toBe(true);
      expect(rvs[2]! > rvs[1]!).toBe(true);
    },
  },
  {
    name: 'a no-op update keeps the resourceVersion and emits no event',
    async run({ client, ns }) {
      const w = await client.create<any>(Widget, widget(ns, 'same', { size: 2 }));
      const rec = await record(client, Widget, ns, { resourceVersion: w.metadata.resourceVersion });
      try {
        const u = await client.replace<any>(Widget, w);
        expect(u.metadata.resourceVersion).toBe(w.metadata.resourceVersion);
        const p = await client.patch<any>(Widget, ns, 'same', { spec: { size: 2 } });
        expect(p.metadata.resourceVersion).toBe(w.metadata.resourceVersion);
        await client.patch(Widget, ns, 'same', { spec: { size: 3 } });
        await rec.waitFor((e) => e.type === 'MODIFIED', 'the real change');
        expect(rec.events.map((e) => (e.object as any).spec.size)).toEqual([3]);
      } finally {
        rec.stop();
      }
    },
  },
  {
    name: 'status subresource: stripped on create, ignored by main writes, only status via /status; generation rules',
    async run({ client, ns }) {
      const w = await client.create<any>(Widget, {
        ...widget(ns, 's1', { size: 1 }),
        status: { ready: true },
      });
      expect(w.status).toBeUndefined();
      const s = await client.replaceStatus<any>(Widget, {
        ...w,
        spec: { size: 9 },
        status: { ready: true, phase: 'x' },
      });
      expect(s.status).toEqual({ ready: true, phase: 'x' });
      expect(s.spec.size).toBe(1);
      expect(s.metadata.generation).toBe(1);
      const m = await client.replace<any>(Widget, { ...s, spec: { size: 2 }, status: { ready: false } });
      expect(m.status).toEqual({ ready: true, phase: 'x' });
      expect(m.metadata.generation).toBe(2);
      const l = await client.replace<any>(Widget, { ...m, metadata: { ...m.metadata, labels: { a: 'b' } } });
      expect(l.metadata.generation).toBe(2);
      const e = await failure(client.replaceStatus(Widget, { ...w, status: { ready: false } }));
      expect(e).toBeInstanceOf(ConflictError);
      const ps = await client.patch<any>(
        Widget,
        ns,
        's1',
        { status: { phase: 'y' }, spec: { size: 50 } },
        'merge',
        { status: true },
      );
      expect(ps.status.phase).toBe('y');
      expect(ps.spec.size).toBe(2);
    },
  },
  {
    name: 'kinds without a status subresource bump generation on any non-metadata change',
    async run({ client }) {
      const name = `g-${Date.now()}`;
      const g = await client.create<any>(Gadget, {
        apiVersion: `${GROUP}/v1`,
        kind: 'Gadget',
        metadata: { name },
        spec: { a: 1 },
      });
      try {
        const u = await client.replace<any>(Gadget, { ...g, status: { x: 1 } });
        expect(u.status).toEqual({ x: 1 });
        expect(u.metadata.generation).toBe(2);
        expect(u.metadata.namespace).toBeUndefined();
      } finally {
        await client.delete(Gadget, undefined, name);
      }
    },
  },
  {
    name: 'cluster-scoped built-ins: nodes, with providerID settable once',
    async run({ client, ns }) {
      const name = `${ns}-node`;
      const n = await client.create(envelopeOf(R.Node), { metadata: { name }, spec: {} });
      try {
        const u = await client.patch<any>(R.Node, undefined, name, {
          spec: { providerID: 'metal3://a/b/c' },
        });
        expect(u.spec.providerID).toBe('metal3://a/b/c');
        const e = await failure(
          client.patch(R.Node, undefined, name, { spec: { providerID: 'metal3://x' } }),
        );
        expect(e.code).toBe(422);
        expect(e.status.message).toBe(
          `Node "${name}" is invalid: spec.providerID: Forbidden: node updates may not change providerID except from "" to valid`,
        );
        expect(n.metadata.namespace).toBeUndefined();
      } finally {
        await client.delete(R.Node, undefined, name);
      }
    },
  },
  {
    // Invalid base64 fails decoding into []byte (Go's encoding/json), before validation: a 400
    // (k8s.io/apiserver pkg/endpoints/handlers/rest.go transformDecodeError).
    name: 'secrets: stringData folds into base64 data; invalid base64 is 400 from the decoder',
    async run({ client, ns }) {
      const s = await client.create(envelopeOf(R.Secret), {
        metadata: { name: 's', namespace: ns },
        stringData: { k: 'v' },
      });
      expect(s.data).toEqual({ k: Buffer.from('v').toString('base64') });
      expect(s.stringData).toBeUndefined();
      expect(s.type).toBe('Opaque');
      const e = await failure(
        client.create(R.Secret, { metadata: { name: 'bad', namespace: ns }, data: { k: '%%%' } }),
      );
      expect(e.code).toBe(400);
      expect(e.status.message).toBe(
        'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 0',
      );
    },
  },
  {
    name: 'names must be DNS-1123 subdomains',
    async run({ client, ns }) {
      const e = await failure(client.create(R.ConfigMap, { metadata: { name: 'Bad_Name', namespace: ns } }));
      expect(e.code).toBe(422);
      expect(e.status.message).toMatch(
        /^ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/,
      );
      expect(e.status.details?.causes?.[0]).toMatchObject({
        reason: 'FieldValueInvalid',
        field: 'metadata.name',
      });
    },
  },
  {
    name: 'leases and events are served',
    async run({ client, ns }) {
      const l = await client.create(R.Lease, {
        metadata: { name: 'l', namespace: ns },
        spec: { holderIdentity: 'me' },
      });
      expect(l.spec?.holderIdentity).toBe('me');
      const ev = await client.create(envelopeOf(R.Event), {
        metadata: { name: 'e1', namespace: ns },
        involvedObject: { kind: 'Widget', name: 'w', namespace: ns },
        reason: 'Tested',
        message: 'hello',
        type: 'Normal',
      });
      expect(ev.reason).toBe('Tested');
    },
  },
];
