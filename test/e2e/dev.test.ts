/**
 * The main job as a user runs it: the CLI in a child process, a small sample, scale-down and a
 * state dump; then the dump is checked against what the seeds promise.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { KubeObject } from '../../shared/kube/types.ts';
import { runMetal3fn } from '../helpers/cli.ts';

const MACHINES = 4;

interface Dump {
  management: KubeObject[];
  workload: Record<string, KubeObject[]>;
  atReady?: { management: KubeObject[]; workload: Record<string, KubeObject[]> };
}

let exitCode: number | null;
let stdout = '';
let dump: Dump;
let summary: Record<string, unknown>;

beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'metal3fn-e2e-'));
  const dumpFile = join(dir, 'state.json');
  const summaryFile = join(dir, 'summary.json');
  ({ code: exitCode, out: stdout } = await runMetal3fn([
    'dev',
    '--machines',
    String(MACHINES),
    '--hosts',
    '6',
    '--sim-delay',
    '50',
    '--scale-down',
    '--dump-state',
    dumpFile,
    '--summary-json',
    summaryFile,
    '--timeout',
    '90',
  ]));
  dump = JSON.parse(await readFile(dumpFile, 'utf8')) as Dump;
  summary = JSON.parse(await readFile(summaryFile, 'utf8')) as Record<string, unknown>;
}, 180_000);

const ofKind = (objs: KubeObject[], kind: string) => objs.filter((o) => o.kind === kind);
const atReady = () => dump.atReady!.management;
const workloadAtReady = () => Object.values(dump.atReady!.workload).flat();
const decode = (s: KubeObject, key: string) =>
  Buffer.from((s as { data?: Record<string, string> }).data?.[key] ?? '', 'base64').toString('utf8');

describe('metal3fn dev --scale-down --dump-state (child process)', () => {
  it('exits 0 with every machine Ready and a clean release', () => {
    expect(stdout).toContain('OK: every machine Ready');
    expect(stdout).toContain('release check: clean');
    expect(exitCode).toBe(0);
    expect(summary).toMatchObject({
      machines: MACHINES,
      ready: MACHINES,
      deadLettered: 0,
      releaseFindings: [],
    });
  });

  it('gave every machine its own host, both ways', () => {
    const m3ms = ofKind(atReady(), 'Metal3Machine');
    expect(m3ms).toHaveLength(MACHINES);
    const hostsOfMachines = m3ms.map((m) => m.metadata.annotations?.['metal3.io/BareMetalHost']);
    expect(new Set(hostsOfMachines).size).toBe(MACHINES);
    const consumers = ofKind(atReady(), 'BareMetalHost')
      .map((h) => (h.spec as { consumerRef?: { name: string } }).consumerRef?.name)
      .filter(Boolean);
    expect(consumers.sort()).toEqual(m3ms.map((m) => m.metadata.name).sort());
    // Excluded hosts were never chosen.
    for (const h of ofKind(atReady(), 'BareMetalHost')) {
      const a = h.metadata.annotations ?? {};
      if ('capm3.metal3.io/unhealthy' in a || 'baremetalhost.metal3.io/paused' in a)
        expect((h.spec as { consumerRef?: unknown }).consumerRef).toBeUndefined();
    }
  });

  it('allocated dense indexes per template and no address twice', () => {
    const byTemplate = new Map<string, number[]>();
    for (const d of ofKind(atReady(), 'Metal3Data')) {
      const spec = d.spec as { index: number; template: { name: string } };
      expect(d.metadata.name).toBe(`${spec.template.name}-${spec.index}`);
      byTemplate.set(spec.template.name, [...(byTemplate.get(spec.template.name) ?? []), spec.index]);
    }
    expect([...byTemplate.values()].flat()).toHaveLength(MACHINES);
    for (const idx of byTemplate.values()) expect(idx.sort((a, b) => a - b)).toEqual(idx.map((_, i) => i));
    const addresses = ofKind(atReady(), 'IPAddress').map((a) => (a.spec as { address: string }).address);
    expect(addresses).toHaveLength(MACHINES);
    expect(new Set(addresses).size).toBe(MACHINES);
  });

  it('wrote the Secrets the seed names, with the rendered content', () => {
    const secrets = ofKind(atReady(), 'Secret');
    for (const m3m of ofKind(atReady(), 'Metal3Machine')) {
      const name = m3m.metadata.name!;
      const data = ofKind(atReady(), 'Metal3Data').find(
        (d) => (d.spec as { claim: { name: string } }).claim.name === name,
      )!;
      const index = (data.spec as { index: number }).index;
      const meta = secrets.find((s) => s.metadata.name === `${name}-metadata-${index}`);
      const net = secrets.find((s) => s.metadata.name === `${name}-networkdata-${index}`);
      expect(meta, `${name}-metadata-${index}`).toBeDefined();
      expect(net, `${name}-networkdata-${index}`).toBeDefined();
      expect((meta as { type?: string }).type).toBe('infrastructure.cluster.x-k8s.io/secret');
      const host = m3m.metadata.annotations!['metal3.io/BareMetalHost']!.split('/')[1];
      const metaData = parseYaml(decode(meta!, 'metaData')) as Record<string, unknown>;
      expect(metaData.providerid).toBe(`metal3/${host}/${name}`);
      for (const v of Object.values(metaData)) expect(typeof v).toBe('string');
      const machine = m3m.metadata.ownerReferences!.find((r) => r.kind === 'Machine')!.name;
      expect(metaData.name).toBe(machine);
      const networkData = parseYaml(decode(net!, 'networkData')) as { networks: { ip_address: string }[] };
      const ip = ofKind(atReady(), 'IPAddress').find(
        (a) => (a.spec as { address: string }).address === networkData.networks[0]!.ip_address,
      );
      expect(ip).toBeDefined();
    }
  });

  it('set new-format providerIDs on the Metal3Machines, the Machines and the Nodes', () => {
    const nodes = workloadAtReady().filter((o) => o.kind === 'Node');
    expect(nodes).toHaveLength(MACHINES);
    for (const m3m of ofKind(atReady(), 'Metal3Machine')) {
      const host = m3m.metadata.annotations!['metal3.io/BareMetalHost']!.split('/')[1];
      const expected = `metal3://metal3/${host}/${m3m.metadata.name}`;
      expect((m3m.spec as { providerID?: string }).providerID).toBe(expected);
      const machine = ofKind(atReady(), 'Machine').find(
        (m) => m.metadata.name === m3m.metadata.ownerReferences!.find((r) => r.kind === 'Machine')!.name,
      )!;
      expect((machine.spec as { providerID?: string }).providerID).toBe(expected);
      expect((machine.status as { phase?: string }).phase).toBe('Running');
      expect(nodes.filter((n) => (n.spec as { providerID?: string }).providerID === expected)).toHaveLength(
        1,
      );
    }
  });

  it('released everything at the end', () => {
    const left = dump.management.filter((o) =>
      ['Metal3Machine', 'Metal3Data', 'Metal3DataClaim', 'IPClaim', 'IPAddress', 'Machine'].includes(o.kind!),
    );
    expect(left.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([]);
    expect(
      ofKind(dump.management, 'Secret').filter(
        (s) => (s as { type?: string }).type === 'infrastructure.cluster.x-k8s.io/secret',
      ),
    ).toEqual([]);
    for (const h of ofKind(dump.management, 'BareMetalHost')) {
      expect((h.spec as { consumerRef?: unknown }).consumerRef).toBeUndefined();
      expect((h.status as { provisioning: { state: string } }).provisioning.state).toBe('available');
    }
  });
});
