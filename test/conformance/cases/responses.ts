/**
 * What the server answers beyond objects: DELETE's Status, boolean query parameters as the
 * parameter codec reads them, the health endpoints' text, the OpenAPI documents `kubectl
 * explain` reads.
 */
import { expect } from 'vitest';
import { R } from '../../../shared/api/resources.ts';
import { kubectl } from '../../helpers/kubectl.ts';
import { runPython } from '../../helpers/python.ts';
import { GROUP, Widget, widget } from '../fixtures.ts';
import { rawRequest } from '../http.ts';
import { ServiceAccount } from '../identity.ts';
import type { ConformanceCase } from '../suite.ts';

export const RESPONSE_CASES: ConformanceCase[] = [
  {
    // k8s.io/apiserver registry/generic/registry/store.go finalizeDelete: an object deleted at once
    // is answered with Status Success (details: name, group, resource as kind, uid) unless its
    // store sets ReturnDeletedObject (kubernetes pkg/registry/core/serviceaccount/storage,
    // namespace/storage); an object kept by finalizers is answered as it now is.
    name: 'DELETE answers Status Success for most kinds (Python client reads a V1Status), the object for ServiceAccounts and while finalizers hold it',
    requires: ['python'],
    async run({ kubeconfigPath, client, ns }) {
      const cm = await client.create<any>(R.ConfigMap, { metadata: { name: 'gone', namespace: ns } });
      const py = await runPython(
        kubeconfigPath,
        `
r = client.CoreV1Api().delete_namespaced_config_map('gone', args['ns'])
print(json.dumps({'type': type(r).__name__, 'status': r.status, 'name': r.details.name, 'kind': r.details.kind, 'uid': r.details.uid}))
`,
        { ns },
      );
      expect(py).toEqual({
        type: 'V1Status',
        status: 'Success',
        name: 'gone',
        kind: 'configmaps',
        uid: cm.metadata.uid,
      });
      const w = await client.create<any>(Widget, widget(ns, 'w'));
      const cr = await rawRequest(client.kc, 'DELETE', client.path(Widget, ns, 'w'));
      expect(cr.status).toBe(200);
      expect(cr.body).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Success',
        details: { name: 'w', group: GROUP, kind: 'widgets', uid: w.metadata.uid },
      });
      await client.create(ServiceAccount, { metadata: { name: 'sa', namespace: ns } });
      const sa = await rawRequest(client.kc, 'DELETE', client.path(ServiceAccount, ns, 'sa'));
      expect(sa.body).toMatchObject({ kind: 'ServiceAccount', metadata: { name: 'sa' } });
      await client.create(
        Widget,
        widget(ns, 'held', { size: 1 }, { finalizers: ['conformance.metal3fn.io/hold'] }),
      );
      const held = await rawRequest(client.kc, 'DELETE', client.path(Widget, ns, 'held'));
      expect(held.body.kind).toBe('Widget');
      expect(held.body.metadata.deletionTimestamp).toBeDefined();
      await client.patch(Widget, ns, 'held', { metadata: { finalizers: null } });
    },
  },
  {
    // Query parameters decode through the parameter codec (k8s.io/apimachinery
    // pkg/runtime/conversion.go Convert_Slice_string_To_bool): "0" and any case of "false" are
    // false, every other value true. The Python client's Watch().stream() sends watch=True.
    name: 'boolean query parameters: watch=True (the Python client) and watch=t stream events, watch=0 and watch=False list',
    requires: ['python'],
    async run({ kubeconfigPath, client, ns }) {
      // Selected by name: every namespace also holds kube-root-ca.crt.
      await client.create(R.ConfigMap, { metadata: { name: 'seen', namespace: ns } });
      const events = await runPython(
        kubeconfigPath,
        `
w = watch.Watch()
out = []
for e in w.stream(client.CoreV1Api().list_namespaced_config_map, args['ns'], field_selector='metadata.name=seen', timeout_seconds=10):
    out.append([e['type'], e['object'].metadata.name])
    w.stop()
print(json.dumps(out))
`,
        { ns },
      );
      expect(events).toEqual([['ADDED', 'seen']]);
      const path = client.path(R.ConfigMap, ns);
      for (const v of ['t', 'True', '1', '']) {
        const r = await rawRequest(client.kc, 'GET', path, {
          query: { watch: v, timeoutSeconds: '1', fieldSelector: 'metadata.name=seen' },
        });
        const first = JSON.parse(r.text.split('\n')[0]!);
        expect([v, first.type, first.object?.metadata?.name]).toEqual([v, 'ADDED', 'seen']);
      }
      for (const v of ['0', 'False', 'false']) {
        const r = await rawRequest(client.kc, 'GET', path, { query: { watch: v } });
        expect([v, r.body.kind]).toEqual([v, 'ConfigMapList']);
      }
    },
  },
  {
    // k8s.io/apiserver pkg/server/healthz/healthz.go handleRootHealth: "ok", or with ?verbose one
    // "[+]<check> ok" line per check then "<endpoint> check passed"; ?exclude marks a check.
    name: '/readyz?verbose, /livez?verbose and /healthz answer in the real text format',
    requires: ['kubectl'],
    async run({ kubeconfigPath }) {
      for (const endpoint of ['readyz', 'livez', 'healthz']) {
        const lines = (await kubectl(kubeconfigPath, ['get', '--raw', `/${endpoint}?verbose`]))
          .trimEnd()
          .split('\n');
        expect(lines.at(-1)).toBe(`${endpoint} check passed`);
        for (const l of lines.slice(0, -1)) expect(l).toMatch(/^\[\+\][\w./-]+ ok$/);
        expect(lines).toEqual(expect.arrayContaining(['[+]ping ok', '[+]etcd ok', '[+]log ok']));
        expect(await kubectl(kubeconfigPath, ['get', '--raw', `/${endpoint}`])).toBe('ok');
      }
      const excluded = await kubectl(kubeconfigPath, ['get', '--raw', '/readyz?verbose&exclude=etcd']);
      expect(excluded).toContain('[+]etcd excluded: ok\n');
      expect(await kubectl(kubeconfigPath, ['get', '--raw', '/livez/ping'])).toBe('ok');
    },
  },
  {
    // k8s.io/apiserver endpoints/handlers/response.go (transformObject) and negotiation: an Accept
    // clause `as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1|v1beta1` answers metadata only (what
    // client-go's metadata client and controller-runtime's metadata-only reads ask for); a list asked
    // for as one object, or one object as a list, is 406; an `as` the server does not offer is passed
    // over for the next clause, and 406 when none is left.
    name: 'Accept as=PartialObjectMetadata / PartialObjectMetadataList: metadata only for GET, LIST and WATCH; 406 for what cannot be produced',
    async run({ client, ns }) {
      const w = await client.create<any>(Widget, widget(ns, 'meta', { size: 3 }, { labels: { a: 'b' } }));
      const path = client.path(Widget, ns, 'meta');
      const one = (v: string) => `application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=${v}`;
      for (const v of ['v1', 'v1beta1']) {
        const r = await rawRequest(client.kc, 'GET', path, { accept: one(v) });
        expect(r.status).toBe(200);
        expect(r.body).toEqual({
          kind: 'PartialObjectMetadata',
          apiVersion: `meta.k8s.io/${v}`,
          metadata: w.metadata,
        });
      }

      await client.create(Widget, widget(ns, 'other'));
      const collection = client.path(Widget, ns);
      const list = await rawRequest(client.kc, 'GET', collection, {
        accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1',
      });
      expect(list.status).toBe(200);
      expect(list.body.kind).toBe('PartialObjectMetadataList');
      expect(list.body.apiVersion).toBe('meta.k8s.io/v1');
      expect(list.body.metadata.resourceVersion).toMatch(/^\d+$/);
      expect(list.body.items.map((i: any) => [i.kind, i.apiVersion, i.metadata.name, 'spec' in i])).toEqual([
        ['PartialObjectMetadata', 'meta.k8s.io/v1', 'meta', false],
        ['PartialObjectMetadata', 'meta.k8s.io/v1', 'other', false],
      ]);
      expect(list.body.items[0].metadata).toEqual(w.metadata);

      // Each watch event's object is metadata only.
      const watched = await rawRequest(client.kc, 'GET', collection, {
        accept: one('v1'),
        query: { watch: 'true', timeoutSeconds: '1', fieldSelector: 'metadata.name=meta' },
      });
      expect(watched.status).toBe(200);
      const events = watched.text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
      expect(events).toEqual([
        {
          type: 'ADDED',
          object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: w.metadata },
        },
      ]);

      const refused = [
        await rawRequest(client.kc, 'GET', path, {
          accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1',
        }),
        await rawRequest(client.kc, 'GET', collection, { accept: one('v1') }),
        await rawRequest(client.kc, 'GET', path, { accept: 'application/json;as=Gadget;g=meta.k8s.io;v=v1' }),
        await rawRequest(client.kc, 'GET', path, {
          accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v2',
        }),
      ];
      for (const r of refused) {
        expect(r.status).toBe(406);
        expect(r.body).toMatchObject({
          kind: 'Status',
          status: 'Failure',
          reason: 'NotAcceptable',
          code: 406,
        });
      }
      // An `as` not offered is passed over for the plain JSON that follows it.
      const fallback = await rawRequest(client.kc, 'GET', path, {
        accept: 'application/json;as=Gadget;g=meta.k8s.io;v=v1,application/json',
      });
      expect(fallback.status).toBe(200);
      expect(fallback.body).toEqual(w);
    },
  },
  {
    // What `kubectl get` reads (Table, v1) with includeObject=None: cells only. KubeClient's
    // existence check and name list (ADR 029) are these requests.
    name: 'Table with includeObject=None: rows of cells and no object, for GET and LIST (KubeClient.exists, listNames)',
    async run({ client, ns }) {
      await client.create(Widget, widget(ns, 'b'));
      await client.create(Widget, widget(ns, 'a'));
      const accept = 'application/json;as=Table;g=meta.k8s.io;v=v1,application/json';
      const one = await rawRequest(client.kc, 'GET', client.path(Widget, ns, 'a'), {
        accept,
        query: { includeObject: 'None' },
      });
      expect(one.body.kind).toBe('Table');
      expect(one.body.rows).toHaveLength(1);
      expect(one.body.rows[0].object).toBeUndefined();
      const nameAt = one.body.columnDefinitions.findIndex((c: any) => c.format === 'name');
      expect(one.body.rows[0].cells[nameAt]).toBe('a');
      const all = await rawRequest(client.kc, 'GET', client.path(Widget, ns), {
        accept,
        query: { includeObject: 'None' },
      });
      expect(all.body.rows.map((r: any) => [r.cells[nameAt], r.object])).toEqual([
        ['a', undefined],
        ['b', undefined],
      ]);
      expect(await client.exists(Widget, ns, 'a')).toBe(true);
      expect(await client.exists(Widget, ns, 'absent')).toBe(false);
      expect(await client.listNames(Widget, ns)).toEqual(['a', 'b']);
    },
  },
  {
    // kubectl explain reads /openapi/v3/<group version>; built-in kinds carry upstream's schemas.
    name: 'kubectl explain knows the built-in kinds fields',
    requires: ['kubectl'],
    async run({ kubeconfigPath }) {
      const data = await kubectl(kubeconfigPath, ['explain', 'configmap.data']);
      expect(data).toContain('FIELD: data <map[string]string>');
      expect(data).toContain('Data contains the configuration data.');
      const taints = await kubectl(kubeconfigPath, ['explain', 'node.spec.taints']);
      expect(taints).toContain('FIELD: taints <[]Taint>');
      expect(taints).toMatch(/effect\s+<string> -required-/);
      const secret = await kubectl(kubeconfigPath, ['explain', 'secrets']);
      expect(secret).toMatch(/stringData\s+<map\[string\]string>/);
    },
  },
];
