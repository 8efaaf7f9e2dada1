/** The CRD and helpers the conformance cases use (a kind of our own, so a real cluster can host it). */

import { envelopeOf, R, type Resource } from '../../shared/api/resources.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { caseCrd } from './crd.ts';

export const GROUP = 'conformance.metal3fn.io';

export const Widget: Resource = envelopeOf({
  group: GROUP,
  version: 'v1',
  kind: 'Widget',
  plural: 'widgets',
  namespaced: true,
  statusSubresource: true,
});

export const Gadget: Resource = envelopeOf({
  group: GROUP,
  version: 'v1',
  kind: 'Gadget',
  plural: 'gadgets',
  namespaced: false,
  statusSubresource: false,
});

export const WIDGET_CRD: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `widgets.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: {
      kind: 'Widget',
      plural: 'widgets',
      singular: 'widget',
      listKind: 'WidgetList',
      shortNames: ['wdg'],
      categories: ['conformance'],
    },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        additionalPrinterColumns: [
          { name: 'Size', type: 'integer', jsonPath: '.spec.size' },
          { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
          { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
        ],
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                required: ['size'],
                'x-kubernetes-validations': [
                  {
                    rule: '!has(oldSelf.providerID) || self.providerID == oldSelf.providerID',
                    message: 'providerID is immutable once set',
                  },
                ],
                properties: {
                  size: { type: 'integer', minimum: 1, maximum: 100 },
                  color: { type: 'string', enum: ['red', 'blue'], default: 'red' },
                  name: { type: 'string', maxLength: 10, pattern: '^[a-z]+$' },
                  providerID: { type: 'string' },
                  tags: { type: 'array', maxItems: 3, items: { type: 'string', minLength: 1 } },
                  port: { 'x-kubernetes-int-or-string': true },
                  selector: {
                    type: 'object',
                    properties: {
                      matchExpressions: {
                        type: 'array',
                        items: {
                          type: 'object',
                          required: ['key', 'operator'],
                          properties: {
                            key: { type: 'string' },
                            operator: { type: 'string', enum: ['in', 'notin', 'exists'] },
                            values: { type: 'array', items: { type: 'string' } },
                          },
                        },
                      },
                    },
                  },
                  image: {
                    type: 'object',
                    'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'image is immutable' }],
                    properties: { url: { type: 'string' } },
                  },
                  extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                  // List types for server-side apply: a map keyed by port+protocol (protocol defaulted), a set.
                  ports: {
                    type: 'array',
                    'x-kubernetes-list-type': 'map',
                    'x-kubernetes-list-map-keys': ['port', 'protocol'],
                    items: {
                      type: 'object',
                      required: ['port'],
                      properties: {
                        port: { type: 'integer' },
                        protocol: { type: 'string', default: 'TCP' },
                        name: { type: 'string' },
                      },
                    },
                  },
                  aliases: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
                  nullableField: { type: 'string', nullable: true },
                },
              },
              status: {
                type: 'object',
                properties: {
                  ready: { type: 'boolean' },
                  phase: { type: 'string' },
                  conditions: {
                    type: 'array',
                    items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                  },
                },
              },
            },
          },
        },
      },
    ],
  },
};

export const GADGET_CRD: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `gadgets.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Cluster',
    names: { kind: 'Gadget', plural: 'gadgets', singular: 'gadget', listKind: 'GadgetList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};

export const widget = (
  ns: string,
  name: string,
  spec: Record<string, unknown> = { size: 1 },
  extra: Partial<KubeObject['metadata']> = {},
): KubeObject => ({
  apiVersion: `${GROUP}/v1`,
  kind: 'Widget',
  metadata: { name, namespace: ns, ...extra },
  spec,
});

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `fn` returns a truthy value (event-driven code settles fast; the bound is a safety net). */
export async function eventually<T>(fn: () => T | Promise<T>, what: string, timeoutMs = 5000): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? `: ${last}` : ''}`);
    await sleep(10);
  }
}

/** A throw-away namespaced CRD `temps.<group>` (kind Temp, any fields), for cases that delete a CRD. */
export async function createTempCrd(client: KubeClient, group: string): Promise<Resource> {
  const { crd, resource } = caseCrd(group, 'Temp', 'temps', {
    schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
  });
  await client.create(R.CustomResourceDefinition, crd);
  return resource;
}
