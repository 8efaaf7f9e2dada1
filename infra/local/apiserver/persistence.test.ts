import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { R } from '../../../shared/api/resources.ts';
import { KubeClient } from '../../../shared/kube/client.ts';
import { WIDGET_CRD, Widget, widget } from '../../../test/conformance/fixtures.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const children: ChildProcess[] = [];

/** Starts `metal3fn apiserver` as a child process and resolves once it prints its URL. */
async function startChild(
  data: string,
  kubeconfig: string,
): Promise<{ child: ChildProcess; client: KubeClient }> {
  const child = spawn(
    process.execPath,
    [
      join(ROOT, 'bin/metal3fn.ts'),
      'apiserver',
      '--port',
      '0',
      '--data',
      data,
      '--kubeconfig-out',
      kubeconfig,
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.push(child);
  let out = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('kubeconfig:')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`apiserver exited ${code}: ${out}`)));
  });
  return { child, client: KubeClient.fromFile(kubeconfig) };
}

afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
});

describe('durable state (--data)', () => {
  it('keeps every acknowledged write across kill -9; resourceVersions keep increasing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'm3fn-persist-'));
    const data = join(dir, 'state.db');
    const kc = join(dir, 'kubeconfig');
    const first = await startChild(data, kc);
    await first.client.create(R.CustomResourceDefinition, WIDGET_CRD);
    await first.client.create(R.Namespace, { metadata: { name: 'p' } });
    const writes: Promise<unknown>[] = [];
    for (let i = 0; i < 50; i++)
      writes.push(first.client.create(Widget, widget('p', `w${i}`, { size: 1 + (i % 5) })));
    await Promise.all(writes);
    const last = await first.client.patch<any>(Widget, 'p', 'w0', { spec: { size: 9 } });
    await first.client.delete(Widget, 'p', 'w1');
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));

    const second = await startChild(data, kc);
    const list = await second.client.list<any>(Widget, 'p');
    expect(list.items).toHaveLength(49);
    expect(list.items.find((w) => w.metadata.name === 'w0').spec.size).toBe(9);
    expect(list.items.some((w) => w.metadata.name === 'w1')).toBe(false);
    expect(BigInt(list.resourceVersion) >= BigInt(last.metadata.resourceVersion)).toBe(true);
    const next = await second.client.create<any>(Widget, widget('p', 'after'));
    expect(BigInt(next.metadata.resourceVersion) > BigInt(list.resourceVersion)).toBe(true);
    expect(await second.client.get(R.Namespace, undefined, 'default')).toBeDefined();
    second.child.kill('SIGTERM');
    await new Promise((r) => second.child.once('exit', r));
    expect(second.child.exitCode).toBe(0);
  }, 30_000);
});
