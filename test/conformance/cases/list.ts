/** List shape, ordering, pagination, label and field selectors. */

import { HttpMethod } from '@kubernetes/client-node';
import { expect } from 'vitest';
import { R } from '../../../shared/api/resources.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { GROUP, Widget, widget } from '../fixtures.ts';
import { failure, send } from '../http.ts';
import type { ConformanceCase } from '../suite.ts';

/** One raw page through client-node's request machinery (KubeClient.list follows continue tokens itself). */
export const page = (client: KubeClient, path: string, query: Record<string, string>): Promise<any> =>
  send(client, HttpMethod.GET, path, query);

export const LIST_CASES: ConformanceCase[] = [
  {
    name: 'list has kind <Kind>List, apiVersion, the global resourceVersion and items sorted by name',
    async run({ client, ns }) {
      for (const n of ['c', 'a', 'b']) await client.create(Widget, widget(ns, n));
      const raw = await page(client, client.path(Widget, ns), {});
      expect(raw.kind).toBe('WidgetList');
      expect(raw.apiVersion).toBe(`${GROUP}/v1`);
      expect(raw.metadata.resourceVersion).toMatch(/^\d+$/);
      expect(raw.items.map((i: any) => i.metadata.name)).toEqual(['a', 'b', 'c']);
      const all = await client.list(Widget);
      expect(all.items.filter((i) => i.metadata.namespace === ns)).toHaveLength(3);
    },
  },
  {
    name: 'limit/continue pagination with remainingItemCount; KubeClient follows the tokens',
    async run({ client, ns }) {
      // Secrets: a new namespace has none (ConfigMaps would include its kube-root-ca.crt).
      for (let i = 0; i < 7; i++)
        await client.create(R.Secret, { metadata: { name: `s-${i}`, namespace: ns } });
      const first = await page(client, client.path(R.Secret, ns), { limit: '3' });
      expect(first.items).toHaveLength(3);
      expect(first.metadata.continue).toBeTruthy();
      expect(first.metadata.remainingItemCount).toBe(4);
      const second = await page(client, client.path(R.Secret, ns), {
        limit: '3',
        continue: first.metadata.continue,
      });
      expect(second.items.map((i: any) => i.metadata.name)).toEqual(['s-3', 's-4', 's-5']);
      expect(second.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
      const all = await client.list(R.Secret, ns, { limit: 2 });
      expect(all.items.map((i) => i.metadata.name)).toEqual([
        's-0',
        's-1',
        's-2',
        's-3',
        's-4',
        's-5',
        's-6',
      ]);
    },
  },
  {
    name: 'label selectors: =, ==, !=, in, notin, exists, !exists, commas; != and notin match missing keys',
    async run({ client, ns }) {
      const mk = (name: string, labels: Record<string, string>) =>
        client.create(Widget, widget(ns, name, { size: 1 }, { labels }));
      await mk('a', { env: 'prod', tier: 'web' });
      await mk('b', { env: 'dev', tier: 'db' });
      await mk('c', { tier: 'web' });
      const names = async (sel: string) =>
        (await client.list(Widget, ns, { labelSelector: sel })).items.map((i) => i.metadata.name);
      expect(await names('env=prod')).toEqual(['a']);
      expect(await names('env==dev')).toEqual(['b']);
      expect(await names('env!=prod')).toEqual(['b', 'c']);
      expect(await names('env in (prod,dev)')).toEqual(['a', 'b']);
      expect(await names('env notin (prod)')).toEqual(['b', 'c']);
      expect(await names('env')).toEqual(['a', 'b']);
      expect(await names('!env')).toEqual(['c']);
      expect(await names('tier=web,env')).toEqual(['a']);
      expect(await names('tier in (web), !env')).toEqual(['c']);
    },
  },
  {
    name: 'an invalid label selector is 400',
    async run({ client, ns }) {
      const e = await failure(client.list(Widget, ns, { labelSelector: 'a in (b' }));
      expect(e.code).toBe(400);
      const e2 = await failure(client.list(Widget, ns, { labelSelector: 'bad key=1' }));
      expect(e2.code).toBe(400);
    },
  },
  {
    name: 'field selectors: metadata.name and metadata.namespace with =, ==, !=; others 400',
    async run({ client, ns }) {
      for (const n of ['a', 'b']) await client.create(Widget, widget(ns, n));
      const names = async (sel: string, n?: string) =>
        (await client.list(Widget, n, { fieldSelector: sel })).items.map((i) => i.metadata.name);
      expect(await names('metadata.name=a', ns)).toEqual(['a']);
      expect(await names('metadata.name==b', ns)).toEqual(['b']);
      expect(await names('metadata.name!=a', ns)).toEqual(['b']);
      expect(await names(`metadata.namespace=${ns},metadata.name=b`)).toEqual(['b']);
      const e = await failure(client.list(Widget, ns, { fieldSelector: 'spec.size=1' }));
      expect(e.code).toBe(400);
      expect(e.status.message).toContain('field label not supported: spec.size');
    },
  },
  {
    name: 'a label selector and a field selector together: both apply (metadata.name!= on a custom resource)',
    async run({ client, ns }) {
      for (const [n, owner] of [
        ['a', 'm1'],
        ['b', 'm1'],
        ['c', 'm2'],
      ] as const)
        await client.create(Widget, widget(ns, n, { size: 1 }, { labels: { owner } }));
      // The stray list of a machine that reads its own host by name (ADR 022).
      const { items } = await client.list(Widget, ns, {
        labelSelector: 'owner=m1',
        fieldSelector: 'metadata.name!=a',
      });
      expect(items.map((i) => i.metadata.name)).toEqual(['b']);
      const none = await client.list(Widget, ns, {
        labelSelector: 'owner=m2',
        fieldSelector: 'metadata.name!=c',
      });
      expect(none.items).toEqual([]);
    },
  },
  {
    name: 'built-in field labels: Secret type, Event involvedObject.*',
    async run({ client, ns }) {
      await client.create(R.Secret, { metadata: { name: 'o', namespace: ns }, type: 'Opaque' });
      await client.create(R.Secret, {
        metadata: { name: 't', namespace: ns },
        type: 'infrastructure.cluster.x-k8s.io/secret',
      });
      const s = await client.list(R.Secret, ns, {
        fieldSelector: 'type=infrastructure.cluster.x-k8s.io/secret',
      });
      expect(s.items.map((i) => i.metadata.name)).toEqual(['t']);
      for (const [n, target] of [
        ['e1', 'm1'],
        ['e2', 'm2'],
      ]) {
        await client.create(R.Event, {
          metadata: { name: n!, namespace: ns },
          involvedObject: { kind: 'Metal3Machine', name: target, namespace: ns },
          reason: 'X',
          message: 'y',
          type: 'Normal',
        });
      }
      const ev = await client.list(R.Event, ns, {
        fieldSelector: 'involvedObject.name=m2,involvedObject.kind=Metal3Machine',
      });
      expect(ev.items.map((i) => i.metadata.name)).toEqual(['e2']);
      const e = await failure(client.list(R.ConfigMap, ns, { fieldSelector: 'data.x=1' }));
      expect(e.code).toBe(400);
    },
  },
];
