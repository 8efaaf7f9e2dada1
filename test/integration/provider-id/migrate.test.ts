/**
 * `metal3fn migrate-provider-ids` as a child process against two embedded API servers: a small
 * legacy setup (a KubeadmControlPlane machine and a MachineDeployment machine on metal3://<uid>),
 * the dry-run plan, --apply (rolloutAfter on the owners, idempotent on re-run), a refused case,
 * and --wait reporting until no legacy ID remains.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../../bin/commands/migrate-provider-ids.ts';
import { envelopeOf, R, type Resource } from '../../../shared/api/resources.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { createCluster, createMachine, createNode, type Env, NS, startEnv } from './harness.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
let env: Env;
let kubeconfig: string;
const uids: Record<string, string> = {};

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['bin/metal3fn.ts', 'migrate-provider-ids', '--kubeconfig', kubeconfig, ...args],
      { cwd: ROOT },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

const ownerRef = (o: KubeObject, controller = true) => ({
  apiVersion: o.apiVersion!,
  kind: o.kind!,
  name: o.metadata.name!,
  uid: o.metadata.uid!,
  controller,
});

beforeAll(async () => {
  env = await startEnv();
  const c = env.mgmt.client;
  await createCluster(c);
  kubeconfig = join(mkdtempSync(join(tmpdir(), 'migrate-')), 'kubeconfig');
  await env.mgmt.server.writeKubeconfig(kubeconfig);

  const kcp = await c.create(envelopeOf(R.KubeadmControlPlane), {
    metadata: { name: 'kcp', namespace: NS },
    spec: {
      replicas: 1,
      version: 'v1.28.1',
      machineTemplate: { infrastructureRef: { kind: 'Metal3MachineTemplate', name: 'cp-tmpl' } },
    },
  });
  const md = await c.create(envelopeOf(R.MachineDeployment), {
    metadata: { name: 'md', namespace: NS },
    spec: {
      clusterName: 'c1',
      replicas: 1,
      selector: { matchLabels: { pool: 'md' } },
      template: { metadata: { labels: { pool: 'md' } }, spec: { clusterName: 'c1' } },
    },
  });
  const ms = await c.create(envelopeOf(R.MachineSet), {
    metadata: { name: 'md-ms', namespace: NS, ownerReferences: [ownerRef(md)] },
    spec: { clusterName: 'c1', replicas: 1, selector: { matchLabels: { pool: 'md' } } },
  });
  for (const [name, owner] of [
    ['cp-0', kcp],
    ['w-0', ms],
  ] as const) {
    const { hostUid } = await createMachine(c, { name, host: `h-${name}` });
    uids[name] = hostUid;
    await c.patch(R.Machine, NS, name, { metadata: { ownerReferences: [ownerRef(owner)] } });
    await c.patch(R.Metal3Machine, NS, name, { spec: { providerID: `metal3://${hostUid}` } });
    await createNode(env.workload.client, `h-${name}`, { uid: hostUid, providerID: `metal3://${hostUid}` });
  }
  // A machine already on the new format is not part of the plan.
  const { hostUid } = await createMachine(c, {
    name: 'cp-new',
    host: 'h-cp-new',
    providerID: 'metal3://metal3/h-cp-new/cp-new',
  });
  await createNode(env.workload.client, 'h-cp-new', {
    uid: hostUid,
    providerID: 'metal3://metal3/h-cp-new/cp-new',
  });
});
afterAll(() => env?.stop());

const rolloutAfter = async (t: Resource, name: string) =>
  ((await env.mgmt.client.get(t, NS, name))?.spec as { rolloutAfter?: string } | undefined)?.rolloutAfter;

describe('migrate-provider-ids', () => {
  it('dry run prints the plan and writes nothing', async () => {
    env.mgmt.server.log.reset();
    const r = await cli([]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^CLUSTER\s+MACHINE\s+HOST\s+NODE\s+CURRENT-ID\s+OWNER\s+ACTION\s+REASON$/);
    const row = (m: string) => lines.find((l) => l.includes(` ${m} `))!.split(/\s{2,}/);
    expect(row('cp-0').slice(0, 7)).toEqual([
      'metal3/c1',
      'cp-0',
      'h-cp-0',
      'h-cp-0',
      `metal3://${uids['cp-0']}`,
      'KubeadmControlPlane/kcp',
      'roll',
    ]);
    expect(row('w-0').slice(0, 7)).toEqual([
      'metal3/c1',
      'w-0',
      'h-w-0',
      'h-w-0',
      `metal3://${uids['w-0']}`,
      'MachineDeployment/md',
      'roll',
    ]);
    expect(r.stdout).not.toContain('cp-new');
    expect(r.stdout).toContain('would roll metal3/KubeadmControlPlane/kcp');
    expect(r.stdout).toContain('dry run: rerun with --apply');
    const writes = env.mgmt.server.log.entries.filter((e) => !['get', 'list', 'watch'].includes(e.verb));
    expect(writes).toEqual([]);
    expect(await rolloutAfter(R.KubeadmControlPlane, 'kcp')).toBeUndefined();
  });

  it('--apply sets rolloutAfter on the KubeadmControlPlane and the MachineDeployment; a re-run rewrites nothing', async () => {
    const before = Date.now();
    const r = await cli(['--apply']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('rolling metal3/KubeadmControlPlane/kcp');
    expect(r.stdout).toContain('rolling metal3/MachineDeployment/md');
    const kcpAt = await rolloutAfter(R.KubeadmControlPlane, 'kcp');
    const mdAt = await rolloutAfter(R.MachineDeployment, 'md');
    expect(kcpAt).toBeDefined();
    expect(mdAt).toBe(kcpAt);
    expect(Date.parse(kcpAt!)).toBeGreaterThanOrEqual(before - 1000);

    env.mgmt.server.log.reset();
    const again = await cli(['--apply']);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`already rolling metal3/KubeadmControlPlane/kcp (rolloutAfter ${kcpAt})`);
    expect(env.mgmt.server.log.entries.filter((e) => e.verb === 'patch' || e.verb === 'update')).toEqual([]);
    expect(await rolloutAfter(R.KubeadmControlPlane, 'kcp')).toBe(kcpAt);
  });

  it('refuses ambiguous cases with a reason and exit code 3; bad flags exit 2', async () => {
    await createNode(env.workload.client, 'orphan', { providerID: 'metal3://0000-no-such-host' });
    const r = await cli(['--json']);
    expect(r.code).toBe(3);
    const plan = JSON.parse(r.stdout) as { rows: { node?: string; action: string; reason: string }[] };
    expect(plan.rows.find((x) => x.node === 'orphan')).toMatchObject({
      action: 'refuse',
      reason: 'uid 0000-no-such-host matches no BareMetalHost',
    });
    expect(await run(['--bogus', '--kubeconfig', kubeconfig])).toBe(2); // in-process: usage errors need no cluster
  });

  it('--wait reports until no migratable legacy ID remains (CAPI replacement simulated by the test); the refused orphan does not block it', async () => {
    const child: ChildProcess = spawn(
      process.execPath,
      [
        'bin/metal3fn.ts',
        'migrate-provider-ids',
        '--kubeconfig',
        kubeconfig,
        '--apply',
        '--wait',
        '--timeout',
        '25',
      ],
      { cwd: ROOT },
    );
    let out = '';
    const sawRemaining = new Promise<void>((resolve) => {
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (/legacy providerIDs remaining: 4/.test(out)) resolve();
      });
    });
    const exited = new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
    await sawRemaining;
    // What Cluster API's rollout does in the end: the old machines and their Nodes go away.
    for (const name of ['cp-0', 'w-0']) {
      await env.mgmt.client.delete(R.Metal3Machine, NS, name);
      await env.workload.client.delete(R.Node, undefined, `h-${name}`);
    }
    const code = await Promise.race([exited, new Promise<number>((r) => setTimeout(() => r(-1), 30_000))]);
    if (code === -1) child.kill();
    expect(code).toBe(3); // done waiting; 3 because the orphan Node was refused
    expect(out).toContain('note: 1 refused legacy ID(s) are not waited for');
    expect(out).toMatch(/legacy providerIDs remaining: 0/);
  });
});
