/**
 * Server-side apply and field ownership. Upstream: staging/src/k8s.io/apimachinery/pkg/util/
 * managedfields/internal (fieldmanager.go and the managers it chains: managedfieldsupdater.go,
 * stripmeta.go, skipnonapplied.go "before-first-apply", capmanagers.go, lastappliedmanager.go,
 * lastappliedupdater.go, conflict.go NewConflictError), sigs.k8s.io/structured-merge-diff
 * merge/update.go (Updater.Update, Updater.Apply, prune) and fieldpath/serialize.go (fieldsV1),
 * apiserver pkg/endpoints/handlers/create.go managerOrUserAgent, apimachinery
 * pkg/apis/meta/v1/validation ValidatePatchOptions / ValidateFieldManager.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HttpMethod } from '@kubernetes/client-node';
import { expect } from 'vitest';
import { stringify } from 'yaml';
import { R } from '../../../shared/api/resources.ts';
import { KubeClient } from '../../../shared/kube/client.ts';
import { kubectl, kubectlExit } from '../../helpers/kubectl.ts';
import { runPython } from '../../helpers/python.ts';
import { GROUP, Widget } from '../fixtures.ts';
import { failure, send } from '../http.ts';
import { type ConformanceCase, tempDir } from '../suite.ts';

/** A server-side apply as clients send it (JSON is YAML). */
const apply = (client: KubeClient, path: string, body: unknown, query: Record<string, string>) =>
  send(client, HttpMethod.PATCH, path, query, body, 'application/apply-patch+yaml');

/** managedFields without times (they are to the second; checked on their own), sorted by manager. */
const owners = (o: any) =>
  [...(o.metadata.managedFields ?? [])]
    .map(({ time: _t, ...e }: any) => e)
    .sort((a: any, b: any) => (a.manager < b.manager ? -1 : a.manager > b.manager ? 1 : 0));

const cmDoc = (ns: string, name: string, data: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns },
  data,
});

const wDoc = (ns: string, name: string, spec: Record<string, unknown>) => ({
  apiVersion: `${GROUP}/v1`,
  kind: 'Widget',
  metadata: { name, namespace: ns },
  spec,
});

export const SSA_CASES: ConformanceCase[] = [
  {
    name: 'managedFields on create and update: one Update entry per fieldManager, fieldsV1 as upstream, time to the second; an update takes over what it changes',
    async run({ client, ns }) {
      const first = new KubeClient(client.kc, { fieldManager: 'first' });
      const second = new KubeClient(client.kc, { fieldManager: 'second' });
      const created = await first.create<any>(R.ConfigMap, {
        metadata: { name: 'mf', namespace: ns, labels: { x: '1' } },
        data: { a: '1', b: '2' },
      });
      expect(created.metadata.managedFields).toHaveLength(1);
      expect(created.metadata.managedFields[0].time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      expect(owners(created)).toEqual([
        {
          manager: 'first',
          operation: 'Update',
          apiVersion: 'v1',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:data': { '.': {}, 'f:a': {}, 'f:b': {} },
            'f:metadata': { 'f:labels': { '.': {}, 'f:x': {} } },
          },
        },
      ]);
      const patched = await second.patch<any>(R.ConfigMap, ns, 'mf', { data: { a: '9' } });
      expect(owners(patched)).toEqual([
        {
          manager: 'first',
          operation: 'Update',
          apiVersion: 'v1',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:data': { '.': {}, 'f:b': {} },
            'f:metadata': { 'f:labels': { '.': {}, 'f:x': {} } },
          },
        },
        {
          manager: 'second',
          operation: 'Update',
          apiVersion: 'v1',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:data': { 'f:a': {} } },
        },
      ]);
      // A write that changes nothing changes no ownership and no resourceVersion.
      const again = await second.patch<any>(R.ConfigMap, ns, 'mf', { data: { a: '9' } });
      expect(again.metadata.resourceVersion).toBe(patched.metadata.resourceVersion);
    },
  },
  {
    name: 'without fieldManager the manager is the User-Agent up to its first "/" (the official Python client: OpenAPI-Generator)',
    requires: ['python'],
    async run({ kubeconfigPath, ns }) {
      const out = await runPython(
        kubeconfigPath,
        `
v1 = client.CoreV1Api()
cm = v1.create_namespaced_config_map(args["ns"], {"metadata": {"name": "py"}, "data": {"k": "v"}})
print(json.dumps([{"manager": e.manager, "operation": e.operation, "fieldsV1": e.fields_v1} for e in cm.metadata.managed_fields]))
`,
        { ns },
      );
      expect(out).toEqual([
        { manager: 'OpenAPI-Generator', operation: 'Update', fieldsV1: { 'f:data': { '.': {}, 'f:k': {} } } },
      ]);
    },
  },
  {
    name: 'kubectl apply --server-side: an Apply entry for kubectl; another manager changing its field gets 409 with the conflict causes; force=true takes the field over',
    requires: ['kubectl'],
    async run({ kubeconfigPath, client, ns }) {
      const file = join(tempDir(), 'cm.yaml');
      writeFileSync(file, stringify(cmDoc(ns, 'ap', { a: '1', b: '2' })));
      expect(await kubectl(kubeconfigPath, ['apply', '--server-side', '-f', file])).toContain(
        'configmap/ap serverside-applied',
      );
      const got = await client.get<any>(R.ConfigMap, ns, 'ap');
      expect(owners(got)).toEqual([
        {
          manager: 'kubectl',
          operation: 'Apply',
          apiVersion: 'v1',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:data': { 'f:a': {}, 'f:b': {} } },
        },
      ]);
      const path = client.path(R.ConfigMap, ns, 'ap');
      const e = await failure(apply(client, path, cmDoc(ns, 'ap', { a: 'x' }), { fieldManager: 'other' }));
      expect(e.code).toBe(409);
      expect(e.status.reason).toBe('Conflict');
      expect(e.status.message).toBe('Apply failed with 1 conflict: conflict with "kubectl": .data.a');
      expect(e.status.details?.causes).toEqual([
        { reason: 'FieldManagerConflict', message: 'conflict with "kubectl"', field: '.data.a' },
      ]);
      expect((await client.get<any>(R.ConfigMap, ns, 'ap')).data).toEqual({ a: '1', b: '2' });
      const forced = await apply(client, path, cmDoc(ns, 'ap', { a: 'x' }), {
        fieldManager: 'other',
        force: 'true',
      });
      expect(forced.data).toEqual({ a: 'x', b: '2' });
      expect(owners(forced).map((m: any) => [m.manager, m.fieldsV1])).toEqual([
        ['kubectl', { 'f:data': { 'f:b': {} } }],
        ['other', { 'f:data': { 'f:a': {} } }],
      ]);
      // kubectl re-applying its old value now conflicts with "other".
      const r = await kubectlExit(kubeconfigPath, ['apply', '--server-side', '-f', file]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('Apply failed with 1 conflict: conflict with "other": .data.a');
    },
  },
  {
    name: 'an update-owned field conflicts with "<manager>" using <apiVersion>; several conflicts are listed by manager',
    async run({ client, ns }) {
      const updater = new KubeClient(client.kc, { fieldManager: 'editor' });
      await updater.create(R.ConfigMap, {
        metadata: { name: 'mc', namespace: ns },
        data: { a: '1', b: '1' },
      });
      const path = client.path(R.ConfigMap, ns, 'mc');
      await apply(client, path, cmDoc(ns, 'mc', { c: '1' }), { fieldManager: 'applier' });
      const e = await failure(
        apply(client, path, cmDoc(ns, 'mc', { a: '2', b: '2', c: '2' }), { fieldManager: 'third' }),
      );
      expect(e.code).toBe(409);
      expect(e.status.message).toBe(
        'Apply failed with 3 conflicts: conflicts with "applier":\n- .data.c\nconflicts with "editor" using v1:\n- .data.a\n- .data.b',
      );
      expect(e.status.details?.causes).toEqual([
        { reason: 'FieldManagerConflict', message: 'conflict with "applier"', field: '.data.c' },
        { reason: 'FieldManagerConflict', message: 'conflict with "editor" using v1', field: '.data.a' },
        { reason: 'FieldManagerConflict', message: 'conflict with "editor" using v1', field: '.data.b' },
      ]);
    },
  },
  {
    name: 'a field a manager stops applying is removed, unless another manager owns it too',
    async run({ client, ns }) {
      const path = client.path(R.ConfigMap, ns, 'rm');
      await apply(client, path, cmDoc(ns, 'rm', { a: '1', b: '1', c: '1' }), { fieldManager: 'm1' });
      let o = await apply(client, path, cmDoc(ns, 'rm', { a: '1', b: '1' }), { fieldManager: 'm1' });
      expect(o.data).toEqual({ a: '1', b: '1' });
      // m2 applies b with the same value: no conflict, both own it.
      await apply(client, path, cmDoc(ns, 'rm', { b: '1' }), { fieldManager: 'm2' });
      o = await apply(client, path, cmDoc(ns, 'rm', { a: '1' }), { fieldManager: 'm1' });
      expect(o.data).toEqual({ a: '1', b: '1' });
      expect(owners(o).map((m: any) => [m.manager, m.fieldsV1])).toEqual([
        ['m1', { 'f:data': { 'f:a': {} } }],
        ['m2', { 'f:data': { 'f:b': {} } }],
      ]);
      o = await apply(
        client,
        path,
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'rm', namespace: ns } },
        { fieldManager: 'm2' },
      );
      expect(o.data).toEqual({ a: '1' });
      // A field taken over by an update is not removed by the applier's next apply.
      const editor = new KubeClient(client.kc, { fieldManager: 'editor' });
      await apply(client, path, cmDoc(ns, 'rm', { a: '1', d: '1' }), { fieldManager: 'm1' });
      await editor.patch(R.ConfigMap, ns, 'rm', { data: { d: '2' } });
      o = await apply(client, path, cmDoc(ns, 'rm', { a: '1' }), { fieldManager: 'm1' });
      expect(o.data).toEqual({ a: '1', d: '2' });
    },
  },
  {
    name: 'list types from the CRD schema: map items owned per key (k:), set items per value (v:), atomic lists as a whole',
    async run({ client, ns }) {
      const path = client.path(Widget, ns, 'lt');
      const a = await apply(
        client,
        path,
        wDoc(ns, 'lt', { size: 1, ports: [{ port: 80, name: 'http' }], aliases: ['x'], tags: ['t1'] }),
        { fieldManager: 'a' },
      );
      expect(owners(a)).toEqual([
        {
          manager: 'a',
          operation: 'Apply',
          apiVersion: `${GROUP}/v1`,
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:spec': {
              'f:aliases': { 'v:"x"': {} },
              'f:ports': { 'k:{"port":80,"protocol":"TCP"}': { '.': {}, 'f:name': {}, 'f:port': {} } },
              'f:size': {},
              'f:tags': {},
            },
          },
        },
      ]);
      const b = await apply(
        client,
        path,
        wDoc(ns, 'lt', { ports: [{ port: 443, name: 'https' }], aliases: ['y'] }),
        { fieldManager: 'b' },
      );
      expect(b.spec.ports).toEqual([
        { port: 80, name: 'http', protocol: 'TCP' },
        { port: 443, name: 'https', protocol: 'TCP' },
      ]);
      expect(b.spec.aliases).toEqual(['x', 'y']);
      const e = await failure(apply(client, path, wDoc(ns, 'lt', { tags: ['t2'] }), { fieldManager: 'b' }));
      expect(e.code).toBe(409);
      expect(e.status.message).toBe('Apply failed with 1 conflict: conflict with "a": .spec.tags');
      // a stops applying its port and alias: only its items go.
      const a2 = await apply(client, path, wDoc(ns, 'lt', { size: 1, tags: ['t1'] }), { fieldManager: 'a' });
      expect(a2.spec.ports).toEqual([{ port: 443, name: 'https', protocol: 'TCP' }]);
      expect(a2.spec.aliases).toEqual(['y']);
    },
  },
  {
    name: 'built-in list types: metadata.finalizers is a set and ownerReferences a map keyed by uid, so two appliers keep each other’s items',
    async run({ client, ns }) {
      const path = client.path(R.ConfigMap, ns, 'fin');
      const meta = (finalizers: string[]) => ({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'fin', namespace: ns, finalizers },
      });
      await apply(client, path, meta(['example.com/a']), { fieldManager: 'a' });
      const both = await apply(client, path, meta(['example.com/b']), { fieldManager: 'b' });
      expect(both.metadata.finalizers).toEqual(['example.com/a', 'example.com/b']);
      expect(owners(both).map((m: any) => [m.manager, m.fieldsV1])).toEqual([
        ['a', { 'f:metadata': { 'f:finalizers': { 'v:"example.com/a"': {} } } }],
        ['b', { 'f:metadata': { 'f:finalizers': { 'v:"example.com/b"': {} } } }],
      ]);
      const onlyB = await apply(client, path, meta([]), { fieldManager: 'a' });
      expect(onlyB.metadata.finalizers).toEqual(['example.com/b']);
      await apply(client, path, meta([]), { fieldManager: 'b' });
      expect((await client.get<any>(R.ConfigMap, ns, 'fin')).metadata.finalizers).toBeUndefined();
      // ownerReferences: items keyed by uid, each item atomic (OwnerReference is +structType=atomic).
      const ref = async (name: string) => {
        const o = await client.create<any>(R.ConfigMap, { metadata: { name, namespace: ns } });
        return { apiVersion: 'v1', kind: 'ConfigMap', name, uid: o.metadata.uid };
      };
      const [ra, rb] = [await ref('owner-a'), await ref('owner-b')];
      const owned = (refs: object[]) => ({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'fin', namespace: ns, ownerReferences: refs },
      });
      await apply(client, path, owned([ra]), { fieldManager: 'a' });
      const two = await apply(client, path, owned([rb]), { fieldManager: 'b' });
      expect(two.metadata.ownerReferences.map((r: any) => r.name)).toEqual(['owner-a', 'owner-b']);
      expect(owners(two).map((m: any) => [m.manager, m.fieldsV1])).toEqual([
        ['a', { 'f:metadata': { 'f:ownerReferences': { [`k:{"uid":"${ra.uid}"}`]: {} } } }],
        ['b', { 'f:metadata': { 'f:ownerReferences': { [`k:{"uid":"${rb.uid}"}`]: {} } } }],
      ]);
    },
  },
  {
    name: 'kubectl apply (client-side, last-applied annotation), then kubectl apply --server-side takes its fields over without conflict and keeps the annotation current',
    requires: ['kubectl'],
    async run({ kubeconfigPath, client, ns }) {
      const file = join(tempDir(), 'csa.yaml');
      writeFileSync(file, stringify(cmDoc(ns, 'csa', { a: '1' })));
      expect(await kubectl(kubeconfigPath, ['apply', '-f', file])).toContain('configmap/csa created');
      const csa = await client.get<any>(R.ConfigMap, ns, 'csa');
      expect(owners(csa)).toEqual([
        {
          manager: 'kubectl-client-side-apply',
          operation: 'Update',
          apiVersion: 'v1',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:data': { '.': {}, 'f:a': {} },
            'f:metadata': {
              'f:annotations': { '.': {}, 'f:kubectl.kubernetes.io/last-applied-configuration': {} },
            },
          },
        },
      ]);
      writeFileSync(file, stringify(cmDoc(ns, 'csa', { a: '2' })));
      expect(await kubectl(kubeconfigPath, ['apply', '--server-side', '-f', file])).toContain(
        'configmap/csa serverside-applied',
      );
      const ssa = await client.get<any>(R.ConfigMap, ns, 'csa');
      expect(ssa.data).toEqual({ a: '2' });
      const kubectlEntry = owners(ssa).find((m: any) => m.manager === 'kubectl');
      expect(kubectlEntry).toMatchObject({ operation: 'Apply', fieldsV1: { 'f:data': { 'f:a': {} } } });
      expect(
        JSON.parse(ssa.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']).data,
      ).toEqual({
        a: '2',
      });
      // And client-side apply still works on top.
      writeFileSync(file, stringify(cmDoc(ns, 'csa', { a: '3' })));
      expect(await kubectl(kubeconfigPath, ['apply', '-f', file])).toContain('configmap/csa configured');
      expect((await client.get<any>(R.ConfigMap, ns, 'csa')).data).toEqual({ a: '3' });
    },
  },
  {
    name: 'status writes are tracked under subresource "status"; main-resource writes never own status',
    async run({ client, ns }) {
      const path = client.path(Widget, ns, 'st');
      await apply(
        client,
        path,
        { ...wDoc(ns, 'st', { size: 2 }), status: { phase: 'ignored' } },
        { fieldManager: 'spec-owner' },
      );
      const s = await client.patch<any>(Widget, ns, 'st', { status: { phase: 'Up' } }, 'merge', {
        status: true,
      });
      expect(s.status).toEqual({ phase: 'Up' });
      expect(owners(s)).toEqual([
        {
          manager: 'metal3-functions',
          operation: 'Update',
          apiVersion: `${GROUP}/v1`,
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:status': { '.': {}, 'f:phase': {} } },
          subresource: 'status',
        },
        {
          manager: 'spec-owner',
          operation: 'Apply',
          apiVersion: `${GROUP}/v1`,
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:spec': { 'f:size': {} } },
        },
      ]);
    },
  },
  {
    name: 'managedFields [] in a request clears them; updates of an untracked object stay untracked; the first apply finds "before-first-apply"',
    async run({ client, ns }) {
      await client.create(R.ConfigMap, { metadata: { name: 'rs', namespace: ns }, data: { a: '1' } });
      const cleared = await client.patch<any>(R.ConfigMap, ns, 'rs', { metadata: { managedFields: [] } });
      expect(cleared.metadata.managedFields).toBeUndefined();
      const updated = await client.patch<any>(R.ConfigMap, ns, 'rs', { data: { a: '2' } });
      expect(updated.metadata.managedFields).toBeUndefined();
      const path = client.path(R.ConfigMap, ns, 'rs');
      const e = await failure(apply(client, path, cmDoc(ns, 'rs', { a: '3' }), { fieldManager: 'late' }));
      expect(e.code).toBe(409);
      expect(e.status.message).toBe(
        'Apply failed with 1 conflict: conflict with "before-first-apply" using v1: .data.a',
      );
      const forced = await apply(client, path, cmDoc(ns, 'rs', { a: '3' }), {
        fieldManager: 'late',
        force: 'true',
      });
      // The map itself stays with "before-first-apply"; its key went to the forced applier.
      expect(owners(forced).map((m: any) => [m.manager, m.operation, m.fieldsV1])).toEqual([
        ['before-first-apply', 'Update', { 'f:data': {} }],
        ['late', 'Apply', { 'f:data': { 'f:a': {} } }],
      ]);
    },
  },
  {
    name: 'at most 10 Update managers: the oldest are merged into "ancient-changes", keeping every field owned',
    async run({ client, ns }) {
      const keys = Array.from({ length: 12 }, (_, i) => `k${i}`);
      await new KubeClient(client.kc, { fieldManager: 'u0' }).create(R.ConfigMap, {
        metadata: { name: 'cap', namespace: ns },
        data: Object.fromEntries(keys.map((k) => [k, '0'])),
      });
      for (let i = 1; i < 12; i++) {
        await new KubeClient(client.kc, { fieldManager: `u${i}` }).patch(R.ConfigMap, ns, 'cap', {
          data: { [`k${i}`]: '1' },
        });
      }
      const o = await client.get<any>(R.ConfigMap, ns, 'cap');
      const entries = o.metadata.managedFields;
      expect(entries).toHaveLength(10);
      expect(entries.every((e: any) => e.operation === 'Update')).toBe(true);
      expect(entries.filter((e: any) => e.manager === 'ancient-changes')).toHaveLength(1);
      // Every key is still owned by someone.
      const owned = new Set(entries.flatMap((e: any) => Object.keys(e.fieldsV1['f:data'] ?? {})));
      for (const k of keys) expect(owned.has(`f:${k}`)).toBe(true);
    },
  },
  {
    name: 'patch and create options: force only with apply, fieldManager required by apply and at most 128 bytes (422 with the options kind)',
    async run({ client, ns }) {
      await client.create(R.ConfigMap, { metadata: { name: 'op', namespace: ns } });
      const path = client.path(R.ConfigMap, ns, 'op');
      const f = await failure(
        send(
          client,
          HttpMethod.PATCH,
          path,
          { force: 'true' },
          { data: { a: '1' } },
          'application/merge-patch+json',
        ),
      );
      expect(f.code).toBe(422);
      expect(f.status.message).toBe(
        'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch',
      );
      const m = await failure(apply(client, path, cmDoc(ns, 'op', {}), {}));
      expect(m.code).toBe(422);
      expect(m.status.message).toBe(
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
      );
      // CBOR apply is behind the CBORServingAndStorage gate, off in 1.32: not a media type the server takes.
      const cbor = await failure(
        send(client, HttpMethod.PATCH, path, { fieldManager: 'x' }, {}, 'application/apply-patch+cbor'),
      );
      expect(cbor.code).toBe(415);
      expect(cbor.status.message).toBe(
        'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml',
      );
      const long = await failure(
        send(
          client,
          HttpMethod.POST,
          client.path(R.ConfigMap, ns),
          { fieldManager: 'x'.repeat(129) },
          { metadata: { name: 'op2' } },
          'application/json',
        ),
      );
      expect(long.code).toBe(422);
      expect(long.status.message).toBe(
        'CreateOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes',
      );
    },
  },
  {
    name: 'an applied configuration with a field its schema does not declare is refused: "failed to create typed patch object ... field not declared in schema"',
    requires: ['kubectl'],
    async run({ kubeconfigPath, client, ns }) {
      const file = join(tempDir(), 'typo.yaml');
      writeFileSync(
        file,
        stringify({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'typo', namespace: ns },
          dta: { a: '1' },
        }),
      );
      const r = await kubectlExit(kubeconfigPath, ['apply', '--server-side', '-f', file]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(
        `failed to create typed patch object (${ns}/typo; /v1, Kind=ConfigMap): .dta: field not declared in schema`,
      );
      expect(await client.get(R.ConfigMap, ns, 'typo')).toBeUndefined();
    },
  },
];
