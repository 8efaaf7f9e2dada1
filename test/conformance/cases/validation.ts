/** CRD schema validation, defaulting, pruning, CEL rules, with 422 causes naming field paths. */
import { expect } from 'vitest';
import { envelopeOf, R } from '../../../shared/api/resources.ts';
import type { KubeApiError } from '../../../shared/kube/errors.ts';
import { GROUP, Widget, widget } from '../fixtures.ts';
import type { ConformanceCase } from '../suite.ts';

async function failure(p: Promise<unknown>): Promise<KubeApiError> {
  try {
    await p;
  } catch (e) {
    return e as KubeApiError;
  }
  throw new Error('expected the request to fail');
}

export const VALIDATION_CASES: ConformanceCase[] = [
  {
    name: 'required fields, types, bounds: 422 with causes naming each field',
    async run({ client, ns }) {
      const e = await failure(
        client.create(Widget, widget(ns, 'v', { size: 'big', name: 'ABC', tags: ['a', 'b', 'c', 'd'] })),
      );
      expect(e.code).toBe(422);
      const fields = (e.status.details?.causes ?? []).map((c) => c.field).sort();
      expect(fields).toEqual(['spec.name', 'spec.size', 'spec.tags']);
      expect(e.status.message).toContain(`Widget.${GROUP} "v" is invalid: [`);
      expect(e.status.message).toContain(
        'spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"',
      );
      const r = await failure(client.create(Widget, widget(ns, 'r', {})));
      expect(r.status.message).toBe(`Widget.${GROUP} "r" is invalid: spec.size: Required value`);
      expect(r.status.details?.causes).toEqual([
        { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.size' },
      ]);
      const m = await failure(client.create(Widget, widget(ns, 'm', { size: 101 })));
      expect(m.status.message).toContain(
        'spec.size: Invalid value: 101: spec.size in body should be less than or equal to 100',
      );
    },
  },
  {
    name: 'enum violations in nested lists name the element path',
    async run({ client, ns }) {
      const e = await failure(
        client.create(
          Widget,
          widget(ns, 'e', { size: 1, selector: { matchExpressions: [{ key: 'k', operator: 'foo' }] } }),
        ),
      );
      expect(e.status.message).toBe(
        `Widget.${GROUP} "e" is invalid: spec.selector.matchExpressions[0].operator: Unsupported value: "foo": supported values: "in", "notin", "exists"`,
      );
      expect(e.status.details?.causes?.[0]).toMatchObject({
        reason: 'FieldValueNotSupported',
        field: 'spec.selector.matchExpressions[0].operator',
      });
    },
  },
  {
    name: 'defaults are applied and unknown fields pruned (preserve-unknown-fields kept)',
    async run({ client, ns }) {
      const w = await client.create<any>(
        Widget,
        widget(ns, 'd', { size: 1, bogus: true, extra: { anything: { goes: 1 } }, port: 'http' }),
      );
      expect(w.spec).toEqual({ size: 1, color: 'red', extra: { anything: { goes: 1 } }, port: 'http' });
      const i = await client.patch<any>(Widget, ns, 'd', { spec: { port: 8080, nullableField: null } });
      expect(i.spec.port).toBe(8080);
      const e = await failure(client.patch(Widget, ns, 'd', { spec: { port: true } }));
      expect(e.code).toBe(422);
    },
  },
  {
    name: 'x-kubernetes-validations: self == oldSelf immutability and transition rules with their messages',
    async run({ client, ns }) {
      await client.create(Widget, widget(ns, 'c', { size: 1, image: { url: 'a' } }));
      const e = await failure(client.patch(Widget, ns, 'c', { spec: { image: { url: 'b' } } }));
      expect(e.code).toBe(422);
      expect(e.status.message).toBe(
        `Widget.${GROUP} "c" is invalid: spec.image: Invalid value: "object": image is immutable`,
      );
      await client.patch(Widget, ns, 'c', { spec: { providerID: 'p1' } });
      const e2 = await failure(client.patch(Widget, ns, 'c', { spec: { providerID: 'p2' } }));
      expect(e2.status.message).toContain('providerID is immutable once set');
      const ok = await client.patch<any>(Widget, ns, 'c', { spec: { size: 4 } });
      expect(ok.spec.size).toBe(4);
    },
  },
  {
    name: 'a CRD whose x-kubernetes-validations rule does not compile is rejected',
    async run({ client, ns }) {
      const group = `${ns}.example.com`;
      const crd = {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: `bads.${group}` },
        spec: {
          group,
          scope: 'Namespaced',
          names: { kind: 'Bad', plural: 'bads' },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              schema: {
                openAPIV3Schema: {
                  type: 'object',
                  properties: {
                    spec: {
                      type: 'object',
                      'x-kubernetes-validations': [{ rule: 'self.x ~ 1' }],
                      properties: { x: { type: 'integer' } },
                    },
                  },
                },
              },
            },
          ],
        },
      };
      const e = await failure(client.create(envelopeOf(R.CustomResourceDefinition), crd));
      expect(e.code).toBe(422);
      expect(e.status.details?.causes?.[0]?.field).toBe(
        'spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule',
      );
    },
  },
];
