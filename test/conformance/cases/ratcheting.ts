/**
 * CRD validation ratcheting (CRDValidationRatcheting, beta and on by default since Kubernetes
 * 1.30): after a CRD's schema is tightened, an update that leaves an invalid value unchanged is
 * accepted; changing that value still must satisfy the schema (apiextensions-apiserver
 * pkg/apiserver/validation/ratcheting.go; CEL rules: pkg/apiserver/schema/cel/validation.go
 * shouldRatchetError, for rules that do not use oldSelf).
 */
import { expect } from 'vitest';
import { R } from '../../../shared/api/resources.ts';
import { caseCrd } from '../crd.ts';
import { eventually } from '../fixtures.ts';
import { failure, rawRequest } from '../http.ts';
import type { ConformanceCase } from '../suite.ts';

/** The case's CRD, loose (name up to 20 characters, no rule) or tightened (5, and a rule on limits). */
function ratchetCrd(group: string, tight: boolean) {
  const limits: Record<string, unknown> = { type: 'object', properties: { max: { type: 'integer' } } };
  if (tight) limits['x-kubernetes-validations'] = [{ rule: 'self.max <= 10', message: 'max is at most 10' }];
  const spec = {
    type: 'object',
    properties: { name: { type: 'string', maxLength: tight ? 5 : 20 }, size: { type: 'integer' }, limits },
  };
  return caseCrd(group, 'Ratchet', 'ratchets', {
    schema: { openAPIV3Schema: { type: 'object', properties: { spec } } },
  });
}

export const RATCHETING_CASES: ConformanceCase[] = [
  {
    name: 'validation ratcheting: after a CRD is tightened, unchanged invalid fields do not block updates; changed ones must be valid',
    async run({ client, ns }) {
      const group = `${ns}.example.com`;
      const { crd: loose, resource: Ratchet } = ratchetCrd(group, false);
      const crdName = loose.metadata.name;
      await client.create(R.CustomResourceDefinition, loose);
      try {
        await eventually(
          () =>
            client.create(Ratchet, {
              apiVersion: `${group}/v1`,
              kind: 'Ratchet',
              metadata: { name: 'r', namespace: ns },
              spec: { name: 'fifteen-letters', size: 1, limits: { max: 50 } },
            }),
          'the CRD to serve its kind',
          30_000,
        );
        const crd = await client.get<any>(R.CustomResourceDefinition, undefined, crdName);
        await client.replace(R.CustomResourceDefinition, { ...crd, spec: ratchetCrd(group, true).crd.spec });
        // The tightened schema is in force once a new name the old one allowed is refused (dry run).
        const refused = await eventually(
          async () => {
            const r = await rawRequest(client.kc, 'PATCH', client.path(Ratchet, ns, 'r'), {
              body: { spec: { name: 'sixteen-letters!' } },
              contentType: 'application/merge-patch+json',
              query: { dryRun: 'All' },
            });
            return r.status === 422 ? r.body : undefined;
          },
          'the tightened schema',
          30_000,
        );
        expect(refused.details.causes[0]).toMatchObject({ reason: 'FieldValueTooLong', field: 'spec.name' });
        const size = await client.patch<any>(Ratchet, ns, 'r', { spec: { size: 2 } });
        expect(size.spec).toEqual({ name: 'fifteen-letters', size: 2, limits: { max: 50 } });
        const label = await client.patch<any>(Ratchet, ns, 'r', { metadata: { labels: { a: 'b' } } });
        expect(label.metadata.labels).toEqual({ a: 'b' });
        const rule = await failure(client.patch(Ratchet, ns, 'r', { spec: { limits: { max: 60 } } }));
        expect(rule.code).toBe(422);
        expect(rule.status.message).toContain('spec.limits: Invalid value: "object": max is at most 10');
        const valid = await client.patch<any>(Ratchet, ns, 'r', {
          spec: { name: 'short', limits: { max: 3 } },
        });
        expect(valid.spec.name).toBe('short');
      } finally {
        await client.delete(R.CustomResourceDefinition, undefined, crdName);
      }
    },
  },
];
