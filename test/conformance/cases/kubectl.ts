/** The real kubectl (a child process with KUBECONFIG) against the target, with no special flags. */
import { execFile, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { stringify } from 'yaml';
import { R } from '../../../shared/api/resources.ts';
import { eventually, GROUP, Widget, widget } from '../fixtures.ts';
import { type ConformanceCase, tempDir } from '../suite.ts';

export const KUBECTL = process.env.KUBECTL ?? 'kubectl';

export function kubectl(kubeconfig: string, args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      KUBECTL,
      args,
      { env: { ...process.env, KUBECONFIG: kubeconfig }, timeout: 30_000 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`kubectl ${args.join(' ')} failed: ${stderr || err.message}`));
        else resolve(stdout);
      },
    );
    if (input !== undefined) child.stdin!.end(input);
  });
}

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
      const out = await kubectl(kubeconfigPath, ['get', 'widgets', '-n', ns]);
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
      const list = JSON.parse(await kubectl(kubeconfigPath, ['get', 'widgets', '-n', ns, '-o', 'json']));
      expect(list.items.map((i: any) => i.metadata.name)).toEqual(['out']);
      const y = await kubectl(kubeconfigPath, ['get', 'widget', 'out', '-n', ns, '-o', 'yaml']);
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
          'widget',
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
        'widget',
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
        kubectl(kubeconfigPath, [
          'patch',
          'widget',
          'pt',
          '-n',
          ns,
          '--type',
          'merge',
          '-p',
          '{"spec":{"size":0}}',
        ]),
      ).rejects.toThrow(/is invalid/);
      expect(await kubectl(kubeconfigPath, ['delete', 'widget', 'pt', '-n', ns])).toContain(
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
        'widget/wt',
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
      const child = spawn(KUBECTL, ['get', 'widgets', '-n', ns, '-w'], {
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
];
