/**
 * The scale subresource of custom resources (apiextensions-apiserver
 * pkg/registry/customresource/etcd.go ScaleREST, validator.go ValidateScaleSpec), driven by
 * `kubectl scale` (k8s.io/kubectl pkg/scale/scale.go ScaleSimple: a merge patch to /scale) and as
 * autoscalers read and write it.
 */
import { expect } from 'vitest';
import { R } from '../../../shared/api/resources.ts';
import { kubectl } from '../../helpers/kubectl.ts';
import { caseCrd } from '../crd.ts';
import { eventually } from '../fixtures.ts';
import { rawRequest } from '../http.ts';
import type { ConformanceCase } from '../suite.ts';

/** A CRD of the case's own group, with a scale subresource over spec.replicas / status.replicas. */
const scalerCrd = (group: string) =>
  caseCrd(group, 'Scaler', 'scalers', {
    subresources: {
      status: {},
      scale: {
        specReplicasPath: '.spec.replicas',
        statusReplicasPath: '.status.replicas',
        labelSelectorPath: '.status.selector',
      },
    },
    schema: {
      openAPIV3Schema: {
        type: 'object',
        properties: {
          spec: { type: 'object', properties: { replicas: { type: 'integer' } } },
          status: {
            type: 'object',
            properties: { replicas: { type: 'integer' }, selector: { type: 'string' } },
          },
        },
      },
    },
  });

export const SCALE_CASES: ConformanceCase[] = [
  {
    name: 'a CRD declaring subresources.scale: kubectl scale, GET/PUT/PATCH of autoscaling/v1 Scale, preconditions and validation',
    requires: ['kubectl'],
    async run({ kubeconfigPath, client, ns }) {
      const group = `${ns}.example.com`;
      const { crd, resource: Scaler } = scalerCrd(group);
      await client.create(R.CustomResourceDefinition, crd);
      try {
        await eventually(
          () =>
            client.create(Scaler, {
              apiVersion: `${group}/v1`,
              kind: 'Scaler',
              metadata: { name: 's', namespace: ns },
              spec: { replicas: 1 },
            }),
          'the CRD to serve its kind',
          30_000,
        );
        await client.patch(Scaler, ns, 's', { status: { replicas: 1, selector: 'app=s' } }, 'merge', {
          status: true,
        });
        const out = await kubectl(kubeconfigPath, ['scale', '-n', ns, `scalers.${group}/s`, '--replicas=3']);
        expect(out).toContain(`scaler.${group}/s scaled`);
        const cr = await client.get<any>(Scaler, ns, 's');
        expect(cr.spec.replicas).toBe(3);
        const path = `${client.path(Scaler, ns, 's')}/scale`;
        const scale = await rawRequest(client.kc, 'GET', path);
        expect(scale.status).toBe(200);
        expect(scale.body).toEqual({
          kind: 'Scale',
          apiVersion: 'autoscaling/v1',
          metadata: {
            name: 's',
            namespace: ns,
            uid: cr.metadata.uid,
            resourceVersion: cr.metadata.resourceVersion,
            creationTimestamp: cr.metadata.creationTimestamp,
          },
          spec: { replicas: 3 },
          status: { replicas: 1, selector: 'app=s' },
        });
        const stale = await rawRequest(client.kc, 'PUT', path, {
          body: {
            ...scale.body,
            metadata: { ...scale.body.metadata, resourceVersion: '1' },
            spec: { replicas: 5 },
          },
        });
        expect(stale.status).toBe(409);
        const put = await rawRequest(client.kc, 'PUT', path, {
          body: { ...scale.body, spec: { replicas: 2 } },
        });
        expect(put.status).toBe(200);
        expect(put.body.spec.replicas).toBe(2);
        const negative = await rawRequest(client.kc, 'PATCH', path, {
          body: { spec: { replicas: -1 } },
          contentType: 'application/merge-patch+json',
        });
        expect(negative.status).toBe(422);
        expect(negative.body.details.causes).toEqual([
          {
            reason: 'FieldValueInvalid',
            message: 'Invalid value: -1: should be a non-negative integer',
            field: '.spec.replicas',
          },
        ]);
        expect((await client.get<any>(Scaler, ns, 's')).spec.replicas).toBe(2);
      } finally {
        await client.delete(R.CustomResourceDefinition, undefined, `scalers.${group}`);
      }
    },
  },
];
