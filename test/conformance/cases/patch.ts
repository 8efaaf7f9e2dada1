/** Patch types: merge (RV precondition), JSON patch (test), strategic (built-ins only), apply; dryRun. */
import { HttpMethod } from '@kubernetes/client-node';
import { expect } from 'vitest';
import { envelopeOf, R } from '../../../shared/api/resources.ts';
import type { KubeApiError } from '../../../shared/kube/errors.ts';
import { kubeErrorFrom } from '../../../shared/kube/errors.ts';
import { Widget, widget } from '../fixtures.ts';
import type { ConformanceCase } from '../suite.ts';

async function failure(p: Promise<unknown>): Promise<KubeApiError> {
  try {
    await p;
  } catch (e) {
    const x = e as any;
    if (x.code && x.body !== undefined && !x.status) return kubeErrorFrom(x.code, x.body);
    return e as KubeApiError;
  }
  throw new Error('expected the request to fail');
}

/** A raw request with any content type, through client-node's request machinery. */
const raw = (
  client: any,
  method: HttpMethod,
  path: string,
  body: unknown,
  contentType: string,
  query: Record<string, string> = {},
) => client.api.send(method, path, query, body, contentType).then((r: { body: unknown }) => r.body);

export const PATCH_CASES: ConformanceCase[] = [
  {
    name: 'merge patch: null deletes, maps merge, lists replace; a resourceVersion in the body is a precondition',
    async run({ client, ns }) {
      const w = await client.create<any>(
        Widget,
        widget(ns, 'm', { size: 1, tags: ['a', 'b'], extra: { x: 1, y: 2 } }),
      );
      const p = await client.patch<any>(Widget, ns, 'm', { spec: { tags: ['c'], extra: { x: null, z: 3 } } });
      expect(p.spec).toEqual({ size: 1, color: 'red', tags: ['c'], extra: { y: 2, z: 3 } });
      const e = await failure(
        client.patch(Widget, ns, 'm', {
          metadata: { resourceVersion: w.metadata.resourceVersion },
          spec: { size: 5 },
        }),
      );
      expect(e.code).toBe(409);
      const ok = await client.patch<any>(Widget, ns, 'm', {
        metadata: { resourceVersion: p.metadata.resourceVersion },
        spec: { size: 5 },
      });
      expect(ok.spec.size).toBe(5);
    },
  },
  {
    name: 'JSON patch with test: success applies, a failed test is 422 and writes nothing',
    async run({ client, ns }) {
      await client.create(Widget, widget(ns, 'j', { size: 1 }));
      const p = await client.patch<any>(
        Widget,
        ns,
        'j',
        [
          { op: 'test', path: '/spec/size', value: 1 },
          { op: 'replace', path: '/spec/size', value: 2 },
          { op: 'add', path: '/metadata/labels', value: { a: 'b' } },
        ],
        'json',
      );
      expect(p.spec.size).toBe(2);
      expect(p.metadata.labels).toEqual({ a: 'b' });
      const e = await failure(
        client.patch(
          Widget,
          ns,
          'j',
          [
            { op: 'test', path: '/spec/size', value: 1 },
            { op: 'replace', path: '/spec/size', value: 9 },
          ],
          'json',
        ),
      );
      expect(e.code).toBe(422);
      expect((await client.get<any>(Widget, ns, 'j')).spec.size).toBe(2);
    },
  },
  {
    // kube-apiserver applies JSON patch with evanphx/json-patch, whose `test` for null matches an
    // absent member (its parent present), unlike RFC 6902: how a client says "not set yet".
    name: 'JSON patch test for null: matches an absent or null member, not a set one nor a missing parent',
    async run({ client, ns }) {
      const name = `${ns}-jp-node`;
      await client.create(envelopeOf(R.Node), { metadata: { name, labels: { 'metal3.io/uuid': 'u-1' } } });
      try {
        const test = (path: string, value: unknown) => [
          { op: 'test', path, value },
          { op: 'add', path: '/metadata/annotations', value: { tested: path } },
        ];
        const p = await client.patch<any>(R.Node, undefined, name, test('/spec/providerID', null), 'json');
        expect(p.metadata.annotations).toEqual({ tested: '/spec/providerID' });
        // An absent label: /metadata/labels exists.
        await client.patch(
          R.Node,
          undefined,
          name,
          test('/metadata/labels/kubernetes.io~1hostname', null),
          'json',
        );
        // A set label is not null; a set value is tested by value (the ~1 escape of '/').
        const e1 = await failure(
          client.patch(R.Node, undefined, name, test('/metadata/labels/metal3.io~1uuid', null), 'json'),
        );
        expect(e1.code).toBe(422);
        await client.patch(R.Node, undefined, name, test('/metadata/labels/metal3.io~1uuid', 'u-1'), 'json');
        // A missing parent is an error, not a match.
        const e2 = await failure(client.patch(R.Node, undefined, name, test('/spec/taints/0', null), 'json'));
        expect(e2.code).toBe(422);
        // "Set it only while unset", as resolveProviderID writes it.
        const setOnce = (id: string) =>
          client.patch<any>(
            R.Node,
            undefined,
            name,
            [
              { op: 'test', path: '/spec/providerID', value: null },
              { op: 'add', path: '/spec/providerID', value: id },
            ],
            'json',
          );
        expect((await setOnce('metal3://a/b/c')).spec.providerID).toBe('metal3://a/b/c');
        // Now set: the same guarded write fails on its test and writes nothing.
        const e3 = await failure(setOnce('metal3://x/y/z'));
        expect(e3.code).toBe(422);
        expect((await client.get<any>(R.Node, undefined, name)).spec.providerID).toBe('metal3://a/b/c');
      } finally {
        await client.delete(R.Node, undefined, name);
      }
    },
  },
  {
    name: 'strategic merge patch: 415 on custom resources, accepted on built-ins',
    async run({ client, ns }) {
      await client.create(Widget, widget(ns, 's'));
      const e = await failure(
        raw(
          client,
          HttpMethod.PATCH,
          client.path(Widget, ns, 's'),
          { spec: { size: 2 } },
          'application/strategic-merge-patch+json',
        ),
      );
      expect(e.code).toBe(415);
      expect(e.status.reason).toBe('UnsupportedMediaType');
      expect(e.status.message).toMatch(
        /^the body of the request was in an unknown format - accepted media types include: /,
      );
      await client.create(R.ConfigMap, {
        metadata: { name: 'c', namespace: ns, labels: { a: '1' } },
        data: { x: '1' },
      });
      const p = await raw(
        client,
        HttpMethod.PATCH,
        client.path(R.ConfigMap, ns, 'c'),
        { metadata: { labels: { b: '2' } }, data: { y: '2' } },
        'application/strategic-merge-patch+json',
      );
      expect(p.metadata.labels).toEqual({ a: '1', b: '2' });
      expect(p.data).toEqual({ x: '1', y: '2' });
    },
  },
  {
    name: 'server-side apply creates and updates (fieldManager required)',
    async run({ client, ns }) {
      const body = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'ssa', namespace: ns },
        data: { a: '1' },
      };
      const c = await raw(
        client,
        HttpMethod.PATCH,
        client.path(R.ConfigMap, ns, 'ssa'),
        body,
        'application/apply-patch+yaml',
        { fieldManager: 'test' },
      );
      expect(c.data).toEqual({ a: '1' });
      const u = await raw(
        client,
        HttpMethod.PATCH,
        client.path(R.ConfigMap, ns, 'ssa'),
        { ...body, data: { a: '2' } },
        'application/apply-patch+yaml',
        { fieldManager: 'test' },
      );
      expect(u.data).toEqual({ a: '2' });
      const e = await failure(
        raw(
          client,
          HttpMethod.PATCH,
          client.path(R.ConfigMap, ns, 'ssa'),
          body,
          'application/apply-patch+yaml',
        ),
      );
      expect(e.code).toBe(422);
    },
  },
  {
    name: 'dryRun=All on update and patch validates and writes nothing',
    async run({ client, ns }) {
      const w = await client.create<any>(Widget, widget(ns, 'd', { size: 1 }));
      const p = await raw(
        client,
        HttpMethod.PATCH,
        client.path(Widget, ns, 'd'),
        { spec: { size: 7 } },
        'application/merge-patch+json',
        { dryRun: 'All' },
      );
      expect(p.spec.size).toBe(7);
      const u = await raw(
        client,
        HttpMethod.PUT,
        client.path(Widget, ns, 'd'),
        { ...w, spec: { size: 8 } },
        'application/json',
        { dryRun: 'All' },
      );
      expect(u.spec.size).toBe(8);
      const e = await failure(
        raw(
          client,
          HttpMethod.PATCH,
          client.path(Widget, ns, 'd'),
          { spec: { size: 0 } },
          'application/merge-patch+json',
          { dryRun: 'All' },
        ),
      );
      expect(e.code).toBe(422);
      const now = await client.get<any>(Widget, ns, 'd');
      expect(now.spec.size).toBe(1);
      expect(now.metadata.resourceVersion).toBe(w.metadata.resourceVersion);
    },
  },
];
