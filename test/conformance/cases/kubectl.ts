/** The real kubectl (a child process with KUBECONFIG) against the target, with no special flags. */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { stringify } from 'yaml';
import { R } from '../../../shared/api/resources.ts';
import { KUBECTL, kubectl, kubectlExit } from '../../helpers/kubectl.ts';
import { eventually, GROUP, Widget, widget } from '../fixtures.ts';
import { type ConformanceCase, tempDir } from '../suite.ts';

export { KUBECTL, kubectlAvailable } from '../../helpers/kubectl.ts';

/** Fully qualified, so a same-named kind of another group on the target cannot shadow ours. */
const W = `widgets.${GROUP}`;

const yamlOf = (docs: object[]) => docs.map((d) => stringify(d)).join('---\n');

export const KUBECTL_CASES: ConformanceCase[] = [
  {
    name: 'kubectl apply -f creates, updates and leaves unchanged (CR and ConfigMap)',
    async run({ kubeconfigPath, client, ns }) {
      const dir = tempDir();
      const file = join(dir, 'objs.yaml');
      const docs = (size: number, v: string) => [
        {
          apiVersion: `${GROUP}/v1`,
          kind: 'Widget',
          metadata: { name: 'ap', namespace: ns },
          spec: { size },
        },
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ap', namespace: ns }, data: { v } },
      ];
      writeFileSync(file, yamlOf(docs(1, 'a')));
      const out1 = await kubectl(kubeconfigPath, ['apply', '-f', file]);
      expect(out1).toContain(`widget.${GROUP}/ap created`);
      expect(out1).toContain('configmap/ap created');
      writeFileSync(file, yamlOf(docs(2, 'b')));
      const out2 = await kubectl(kubeconfigPath, ['apply', '-f', file]);
      expect(out2).toContain(`widget.${GROUP}/ap configured`);
      expect(out2).toContain('configmap/ap configured');
      expect((await client.get<any>(Widget, ns, 'ap')).spec.size).toBe(2);
      expect((await client.get<any>(R.ConfigMap, ns, 'ap')).data).toEqual({ v: 'b' });
      const out3 = await kubectl(kubeconfigPath, ['apply', '-f', file]);
      expect(out3).toContain(`widget.${GROUP}/ap unchanged`);
      expect(out3).toContain('configmap/ap unchanged');
    },
  },
  {
    name: 'kubectl get prints the printer columns; short names and categories resolve',
    async run({ kubeconfigPath, client, ns }) {
      await client.create(Widget, widget(ns, 'tbl', { size: 7 }));
      await client.patch(
        Widget,
        ns,
        'tbl',
        { status: { conditions: [{ type: 'Ready', status: 'True' }] } },
        'merge',
        { status: true },
      );
      const out = await kubectl(kubeconfigPath, ['get', W, '-n', ns]);
      const [header, row] = out.trim().split('\n');
      expect(header!.split(/\s+/)).toEqual(['NAME', 'SIZE', 'READY', 'AGE']);
      expect(row!.split(/\s+/).slice(0, 3)).toEqual(['tbl', '7', 'True']);
      expect(await kubectl(kubeconfigPath, ['get', 'wdg', '-n', ns, '-o', 'name'])).toBe(
        `widget.${GROUP}/tbl\n`,
      );
      expect(await kubectl(kubeconfigPath, ['get', 'conformance', '-n', ns, '-o', 'name'])).toBe(
        `widget.${GROUP}/tbl\n`,
      );
      await client.create(R.ConfigMap, { metadata: { name: 'c', namespace: ns }, data: { a: 'b' } });
      const cms = await kubectl(kubeconfigPath, ['get', 'cm', '-n', ns]);
      expect(cms.split('\n')[1]!.split(/\s+/).slice(0, 2)).toEqual(['c', '1']);
      expect(cms.split('\n')[0]!.split(/\s+/)).toEqual(['NAME', 'DATA', 'AGE']);
    },
  },
  {
    name: 'kubectl get -o json and -o yaml',
    async run({ kubeconfigPath, client, ns }) {
      const w = await client.create<any>(Widget, widget(ns, 'out', { size: 3 }));
      const j = JSON.parse(
        await kubectl(kubeconfigPath, ['get', `widgets.${GROUP}`, 'out', '-n', ns, '-o', 'json']),
      );
      expect(j.metadata.uid).toBe(w.metadata.uid);
      expect(j.spec.size).toBe(3);
      const list = JSON.parse(await kubectl(kubeconfigPath, ['get', W, '-n', ns, '-o', 'json']));
      expect(list.items.map((i: any) => i.metadata.name)).toEqual(['out']);
      const y = await kubectl(kubeconfigPath, ['get', W, 'out', '-n', ns, '-o', 'yaml']);
      expect(y).toContain('size: 3');
      expect(y).toContain(`uid: ${w.metadata.uid}`);
    },
  },
  {
    name: 'kubectl patch --type merge (main and status subresource), then delete',
    async run({ kubeconfigPath, client, ns }) {
      await client.create(Widget, widget(ns, 'pt', { size: 1 }));
      expect(
        await kubectl(kubeconfigPath, [
          'patch',
          W,
          'pt',
          '-n',
          ns,
          '--type',
          'merge',
          '-p',
          '{"spec":{"size":4}}',
        ]),
      ).toContain('patched');
      await kubectl(kubeconfigPath, [
        'patch',
        W,
        'pt',
        '-n',
        ns,
        '--subresource',
        'status',
        '--type',
        'merge',
        '-p',
        '{"status":{"phase":"Up"}}',
      ]);
      const got = await client.get<any>(Widget, ns, 'pt');
      expect(got.spec.size).toBe(4);
      expect(got.status.phase).toBe('Up');
      await expect(
        kubectl(kubeconfigPath, ['patch', W, 'pt', '-n', ns, '--type', 'merge', '-p', '{"spec":{"size":0}}']),
      ).rejects.toThrow(/is invalid/);
      expect(await kubectl(kubeconfigPath, ['delete', W, 'pt', '-n', ns])).toContain(
        `widget.${GROUP} "pt" deleted`,
      );
      expect(await client.get(Widget, ns, 'pt')).toBeUndefined();
    },
  },
  {
    name: 'kubectl wait --for=jsonpath returns when the condition holds',
    async run({ kubeconfigPath, client, ns }) {
      await client.create(Widget, widget(ns, 'wt'));
      const waiting = kubectl(kubeconfigPath, [
        'wait',
        '-n',
        ns,
        `${W}/wt`,
        '--for=jsonpath={.status.phase}=Ready',
        '--timeout=20s',
      ]);
      await new Promise((r) => setTimeout(r, 300));
      await client.patch(Widget, ns, 'wt', { status: { phase: 'Ready' } }, 'merge', { status: true });
      expect(await waiting).toContain('condition met');
    },
  },
  {
    name: 'kubectl get -w streams changes',
    async run({ kubeconfigPath, client, ns }) {
      await client.create(Widget, widget(ns, 'first', { size: 1 }));
      const child = spawn(KUBECTL, ['get', W, '-n', ns, '-w'], {
        env: { ...process.env, KUBECONFIG: kubeconfigPath },
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (d) => {
        out += d;
      });
      child.stderr.on('data', (d) => {
        err += d;
      });
      try {
        await eventually(() => out.includes('first'), `initial row (stderr: ${err})`, 15_000);
        await client.create(Widget, widget(ns, 'second', { size: 2 }));
        await eventually(() => out.includes('second'), 'streamed row', 15_000);
        expect(out.split('\n')[0]!.split(/\s+/)).toEqual(['NAME', 'SIZE', 'READY', 'AGE']);
      } finally {
        child.kill();
      }
    },
  },
  {
    name: 'kubectl create -f, label, annotate and get namespaces',
    async run({ kubeconfigPath, ns }) {
      const obj = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'ks', namespace: ns },
        stringData: { k: 'v' },
      };
      expect(await kubectl(kubeconfigPath, ['create', '-f', '-'], JSON.stringify(obj))).toContain(
        'secret/ks created',
      );
      await kubectl(kubeconfigPath, ['label', 'secret', 'ks', '-n', ns, 'a=b']);
      await kubectl(kubeconfigPath, ['annotate', 'secret', 'ks', '-n', ns, 'x=y']);
      const s = JSON.parse(await kubectl(kubeconfigPath, ['get', 'secret', 'ks', '-n', ns, '-o', 'json']));
      expect(s.metadata.labels).toEqual({ a: 'b' });
      expect(s.metadata.annotations).toEqual({ x: 'y' });
      expect(Buffer.from(s.data.k, 'base64').toString()).toBe('v');
      expect(await kubectl(kubeconfigPath, ['get', 'ns', ns, '-o', 'name'])).toBe(`namespace/${ns}\n`);
    },
  },
  {
    name: 'kubectl create configmap|secret generic|serviceaccount|role|rolebinding (typed clients, protobuf bodies)',
    async run({ kubeconfigPath, client, ns }) {
      await kubectl(kubeconfigPath, ['create', 'configmap', 'gen', '-n', ns, '--from-literal=a=b']);
      await kubectl(kubeconfigPath, [
        'create',
        'secret',
        'generic',
        'gen',
        '-n',
        ns,
        '--from-literal=pw=hunter2',
      ]);
      await kubectl(kubeconfigPath, ['create', 'serviceaccount', 'robot', '-n', ns]);
      await kubectl(kubeconfigPath, [
        'create',
        'role',
        'reader',
        '-n',
        ns,
        '--verb=get,list',
        '--resource=configmaps',
      ]);
      await kubectl(kubeconfigPath, [
        'create',
        'rolebinding',
        'reader',
        '-n',
        ns,
        '--role=reader',
        '--user=alice',
      ]);
      expect((await client.get<any>(R.ConfigMap, ns, 'gen')).data).toEqual({ a: 'b' });
      expect(Buffer.from((await client.get<any>(R.Secret, ns, 'gen')).data.pw, 'base64').toString()).toBe(
        'hunter2',
      );
      const role = JSON.parse(
        await kubectl(kubeconfigPath, ['get', 'role', 'reader', '-n', ns, '-o', 'json']),
      );
      expect(role.rules).toEqual([{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }]);
      const rb = JSON.parse(
        await kubectl(kubeconfigPath, ['get', 'rolebinding', 'reader', '-n', ns, '-o', 'json']),
      );
      expect(rb.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' });
      expect(rb.subjects).toEqual([{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }]);
    },
  },
  {
    name: 'kubectl diff (server dry-run), replace -f, apply --server-side (a conflict with replace, then forced), delete -f',
    async run({ kubeconfigPath, client, ns }) {
      const file = join(tempDir(), 'w.yaml');
      const doc = (size: number) =>
        stringify({
          apiVersion: `${GROUP}/v1`,
          kind: 'Widget',
          metadata: { name: 'df', namespace: ns },
          spec: { size },
        });
      writeFileSync(file, doc(1));
      await kubectl(kubeconfigPath, ['apply', '-f', file]);
      writeFileSync(file, doc(2));
      const diff = await kubectlExit(kubeconfigPath, ['diff', '-f', file]);
      expect(diff.code).toBe(1); // kubectl diff exits 1 when there are differences
      expect(diff.stdout).toMatch(/^-\s+size: 1$/m);
      expect(diff.stdout).toMatch(/^\+\s+size: 2$/m);
      expect((await client.get<any>(Widget, ns, 'df')).spec.size).toBe(1);
      await kubectl(kubeconfigPath, ['replace', '-f', file]);
      expect((await client.get<any>(Widget, ns, 'df')).spec.size).toBe(2);
      writeFileSync(file, doc(3));
      // replace made kubectl-replace the owner of spec.size (and dropped the last-applied
      // annotation): a server-side apply changing it conflicts until forced.
      const conflicting = await kubectlExit(kubeconfigPath, ['apply', '--server-side', '-f', file]);
      expect(conflicting.code).toBe(1);
      expect(conflicting.stderr).toContain(
        `Apply failed with 1 conflict: conflict with "kubectl-replace" using ${GROUP}/v1: .spec.size`,
      );
      expect((await client.get<any>(Widget, ns, 'df')).spec.size).toBe(2);
      expect(
        await kubectl(kubeconfigPath, ['apply', '--server-side', '--force-conflicts', '-f', file]),
      ).toContain('serverside-applied');
      expect((await client.get<any>(Widget, ns, 'df')).spec.size).toBe(3);
      await kubectl(kubeconfigPath, ['delete', '-f', file]);
      expect(await client.get(Widget, ns, 'df')).toBeUndefined();
    },
  },
  {
    name: 'kubectl apply rejects unknown fields of a custom resource (fieldValidation=Strict)',
    async run({ kubeconfigPath, client, ns }) {
      const file = join(tempDir(), 'typo.yaml');
      writeFileSync(
        file,
        stringify({
          apiVersion: `${GROUP}/v1`,
          kind: 'Widget',
          metadata: { name: 'typo', namespace: ns },
          spec: { size: 1, sise: 2 },
        }),
      );
      const r = await kubectlExit(kubeconfigPath, ['apply', '-f', file]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('strict decoding error: unknown field "spec.sise"');
      expect(await client.get(Widget, ns, 'typo')).toBeUndefined();
      const w = await kubectlExit(kubeconfigPath, ['apply', '--validate=warn', '-f', file]);
      expect(w.code).toBe(0);
      expect(w.stderr).toContain('unknown field "spec.sise"');
      expect((await client.get<any>(Widget, ns, 'typo')).spec).toEqual({ size: 1, color: 'red' });
    },
  },
  {
    name: 'kubectl explain shows the CRD schema (OpenAPI v3)',
    async run({ kubeconfigPath }) {
      const out = await kubectl(kubeconfigPath, ['explain', `${W}.spec.color`]);
      expect(out).toContain('KIND:       Widget');
      expect(out).toMatch(/FIELD:\s+color <string>/);
      expect(out).toMatch(/ENUM:\s+red\s+blue/);
    },
  },
];
