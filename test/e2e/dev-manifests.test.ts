/**
 * `metal3fn dev --manifests` on a user's own clusters, as a stranger runs it (the CLI in a child
 * process): test/fixtures/dev-manifests/ — two Clusters named `edge` in namespaces team-a and
 * team-b, bare Machines with KubeadmConfigs (no KubeadmControlPlane or MachineDeployment), a host
 * someone else's Metal3Machine holds, and team-c's Cluster whose kubeconfig Secret the user brings
 * (an API server this test runs). The same objects are applied one per file in reverse order and
 * in a shuffled order, each run with --scale-down; both reach every machine Ready, release cleanly
 * and end in the same state, leaving no file behind.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiServerHandle, startApiServer } from '../../infra/local/apiserver/index.ts';
import { loadManifests } from '../../infra/local/manifests.ts';
import { R } from '../../shared/api/resources.ts';
import { KubeClient } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { runMetal3fn } from '../helpers/cli.ts';
import { type Order, writeInOrder } from '../helpers/manifest-order.ts';

const FIXTURE = new URL('../fixtures/dev-manifests/', import.meta.url).pathname;
const SHUFFLE_SEED = 20_250_125;
const MACHINES = 5; // 2 in team-a/edge, 2 in team-b/edge, 1 in team-c/own

interface Dump {
  management: KubeObject[];
  workload: Record<string, KubeObject[]>;
  atReady: { management: KubeObject[]; workload: Record<string, KubeObject[]> };
}

interface Run {
  order: Order;
  files: string[];
  code: number | null;
  out: string;
  dump: Dump;
  summary: Record<string, unknown>;
  /** team-c's own workload cluster (started by this test), and what its Secret was. */
  own: ApiServerHandle;
  ownNodesAtEnd: KubeObject[];
  ownSecret: KubeObject;
  /** What the run left in its TMPDIR. */
  leftInTmp: string[];
}

const work: string[] = [];
const runs: Record<'reverse' | 'shuffle', Run> = {} as never;

async function run(order: Order, docs: KubeObject[]): Promise<Run> {
  const dir = await mkdtemp(join(tmpdir(), 'metal3fn-manifests-'));
  work.push(dir);
  // team-c's workload cluster exists before the run: an API server here, its kubeconfig in the
  // Secret the manifests bring.
  const own = await startApiServer();
  const ownSecret: KubeObject = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: 'own-kubeconfig',
      namespace: 'team-c',
      labels: { 'cluster.x-k8s.io/cluster-name': 'own' },
    },
    type: 'cluster.x-k8s.io/secret',
    data: { value: Buffer.from(own.kubeconfig()).toString('base64') },
  } as KubeObject;
  const files = await writeInOrder([...docs, ownSecret], join(dir, 'manifests'), order);
  const tmp = join(dir, 'tmp');
  await import('node:fs/promises').then((fs) => fs.mkdir(tmp));
  const { code, out } = await runMetal3fn(
    [
      'dev',
      '--manifests',
      join(dir, 'manifests'),
      '--sim-delay',
      '50',
      '--scale-down',
      '--dump-state',
      join(dir, 'state.json'),
      '--summary-json',
      join(dir, 'summary.json'),
      '--timeout',
      '150',
    ],
    { env: { TMPDIR: tmp } },
  );
  const ownClient = KubeClient.fromString(own.kubeconfig());
  const result: Run = {
    order,
    files,
    code,
    out,
    dump: JSON.parse(await readFile(join(dir, 'state.json'), 'utf8').catch(() => '{}')) as Dump,
    summary: JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8').catch(() => '{}')) as Record<
      string,
      unknown
    >,
    own,
    ownNodesAtEnd: (await ownClient.list(R.Node)).items,
    ownSecret,
    leftInTmp: await readdir(tmp),
  };
  return result;
}

beforeAll(async () => {
  const docs = await loadManifests(FIXTURE);
  const [reverse, shuffle] = await Promise.all([
    run({ kind: 'reverse' }, docs),
    run({ kind: 'shuffle', seed: SHUFFLE_SEED }, docs),
  ]);
  runs.reverse = reverse;
  runs.shuffle = shuffle;
}, 400_000);

afterAll(async () => {
  for (const r of Object.values(runs)) await r.own?.stop();
  for (const d of work) await rm(d, { recursive: true, force: true });
});

const ofKind = (objs: KubeObject[], kind: string) => objs.filter((o) => o.kind === kind);
const key = (o: KubeObject) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`;
const find = (objs: KubeObject[], kind: string, ns: string, name: string) =>
  objs.find((o) => o.kind === kind && o.metadata.namespace === ns && o.metadata.name === name);
const decode = (s: KubeObject | undefined) =>
  Buffer.from((s?.data as Record<string, string> | undefined)?.value ?? '', 'base64').toString();

/**
 * The end state without what legitimately differs between two runs: which host a machine got (and
 * so which Metal3Data index and data Secret suffix), Events, resourceVersions and uids.
 */
function shape(objs: KubeObject[]): string[] {
  return objs
    .filter((o) => o.kind !== 'Event')
    .map((o) =>
      (o as { type?: string }).type === 'infrastructure.cluster.x-k8s.io/secret'
        ? key(o).replace(/-\d+$/, '-N')
        : key(o),
    )
    .sort();
}

describe.each(['reverse', 'shuffle'] as const)('metal3fn dev --manifests, files in %s order', (name) => {
  const r = () => runs[name];

  it('brings every machine Ready, scales down what it applied and releases cleanly (exit 0)', () => {
    expect(r().out).toContain(`${MACHINES} machines expected; clusters team-a/edge, team-b/edge, team-c/own`);
    expect(r().out).toContain('release check: clean');
    expect(r().out).toContain('OK: every machine Ready');
    expect(r().code, r().out.slice(-3000)).toBe(0);
    expect(r().summary).toMatchObject({
      machines: MACHINES,
      ready: MACHINES,
      deadLettered: 0,
      releaseFindings: [],
    });
  });

  it('gives each of the two Clusters named edge its own workload API server and Secret; none for team-c', () => {
    const atReady = r().dump.atReady;
    expect(Object.keys(atReady.workload).sort()).toEqual(['team-a/edge', 'team-b/edge']);
    const secrets = ['team-a', 'team-b'].map((ns) =>
      find(atReady.management, 'Secret', ns, 'edge-kubeconfig'),
    );
    for (const [i, ns] of ['team-a', 'team-b'].entries()) {
      const s = secrets[i]!;
      expect(s.metadata.labels).toEqual({ 'cluster.x-k8s.io/cluster-name': 'edge' });
      expect((s as { type?: string }).type).toBe('cluster.x-k8s.io/secret');
      // No control plane provider named: the Cluster owns it, as Cluster API core writes it then.
      const cluster = find(atReady.management, 'Cluster', ns, 'edge')!;
      expect(s.metadata.ownerReferences).toEqual([
        expect.objectContaining({
          kind: 'Cluster',
          name: 'edge',
          uid: cluster.metadata.uid,
          controller: true,
        }),
      ]);
    }
    const servers = secrets.map((s) => /server: (\S+)/.exec(decode(s))?.[1]);
    expect(servers[0]).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(servers[1]).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(servers[0]).not.toBe(servers[1]);
    // team-c's Secret is the user's, unchanged.
    const own = find(atReady.management, 'Secret', 'team-c', 'own-kubeconfig')!;
    expect(own.data).toEqual(r().ownSecret.data);
    expect(own.metadata.ownerReferences).toBeUndefined();
  });

  it("registers each machine's Node in its own cluster, with the providerID of its Machine", () => {
    const { management, workload } = r().dump.atReady;
    const machines = ofKind(management, 'Machine');
    expect(machines.map(key).sort()).toEqual([
      'Machine team-a/edge-cp-0',
      'Machine team-a/edge-worker-0',
      'Machine team-b/edge-cp-0',
      'Machine team-b/edge-worker-0',
      'Machine team-c/own-0',
    ]);
    for (const m of machines) {
      const ns = m.metadata.namespace!;
      const providerID = (m.spec as { providerID?: string }).providerID!;
      const m3m = find(management, 'Metal3Machine', ns, m.metadata.name!)!;
      const host = m3m.metadata.annotations!['metal3.io/BareMetalHost']!.split('/')[1];
      expect(providerID).toBe(`metal3://${ns}/${host}/${m.metadata.name}`);
      expect((m.status as { phase?: string }).phase).toBe('Running');
      if (ns === 'team-c') continue;
      const nodes = ofKind(workload[`${ns}/edge`]!, 'Node');
      expect(nodes.filter((n) => (n.spec as { providerID?: string }).providerID === providerID)).toHaveLength(
        1,
      );
      expect((m.status as { nodeRef?: { name?: string } }).nodeRef?.name).toBe(m.metadata.name);
    }
    for (const ns of ['team-a', 'team-b'])
      expect(
        ofKind(workload[`${ns}/edge`]!, 'Node')
          .map((n) => n.metadata.name)
          .sort(),
      ).toEqual(['edge-cp-0', 'edge-worker-0']);
  });

  it("registered team-c's Node in the cluster its Secret names, and took it away on scale-down", () => {
    const ownMachine = find(r().dump.atReady.management, 'Machine', 'team-c', 'own-0')!;
    expect((ownMachine.status as { nodeRef?: { name?: string } }).nodeRef?.name).toBe('rack3-srv1');
    // The host deprovisioned at scale-down: its Node left the cluster (the kubelet simulator).
    expect(r().ownNodesAtEnd).toEqual([]);
  });

  it('played the kubeadm bootstrap provider for each KubeadmConfig a Machine references', () => {
    const { management } = r().dump.atReady;
    for (const ns of ['team-a', 'team-b'])
      for (const name of ['edge-cp-0', 'edge-worker-0']) {
        const config = find(management, 'KubeadmConfig', ns, name)!;
        expect(config.status).toEqual({ ready: true, dataSecretName: name });
        expect(config.metadata.ownerReferences?.map((o) => `${o.kind}/${o.name}`)).toEqual([
          `Machine/${name}`,
        ]);
        const data = find(management, 'Secret', ns, name)!;
        expect(data.metadata.ownerReferences?.map((o) => `${o.kind}/${o.name}`)).toEqual([
          `KubeadmConfig/${name}`,
        ]);
        expect(decode(data)).toMatch(/^#cloud-config\n/);
        const machine = find(management, 'Machine', ns, name)!;
        expect((machine.spec as { bootstrap?: { dataSecretName?: string } }).bootstrap?.dataSecretName).toBe(
          name,
        );
      }
    // team-c's Machine came with its own bootstrap data: kept as given.
    const own = find(management, 'Machine', 'team-c', 'own-0')!;
    expect((own.spec as { bootstrap?: { dataSecretName?: string } }).bootstrap?.dataSecretName).toBe(
      'own-0-userdata',
    );
  });

  it('never took the host another Metal3Machine holds, and left it exactly as it was', () => {
    const applied = (docs: KubeObject[]) => find(docs, 'BareMetalHost', 'team-a', 'rack1-srv4')!;
    for (const state of [r().dump.atReady.management, r().dump.management]) {
      const host = applied(state);
      expect(host.spec).toEqual({
        online: true,
        bootMACAddress: '52:54:0a:00:01:04',
        bmc: { address: 'ipmi://10.0.1.104', credentialsName: 'rack1-bmc' },
        consumerRef: {
          apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
          kind: 'Metal3Machine',
          name: 'legacy-machine-7',
          namespace: 'team-a',
        },
      });
      expect(host.metadata.labels).toEqual({ pool: 'edge', owner: 'legacy-team' });
      expect(host.metadata.annotations).toEqual({ 'example.com/asset-tag': 'A-0004' });
    }
    const held = ofKind(r().dump.atReady.management, 'Metal3Machine').map(
      (m) => m.metadata.annotations?.['metal3.io/BareMetalHost'],
    );
    expect(held).not.toContain('team-a/rack1-srv4');
  });

  it("removed the run's machines and what was made for them, and nothing the user applied besides", () => {
    const end = r().dump.management;
    for (const kind of [
      'Machine',
      'Metal3Machine',
      'Metal3DataClaim',
      'Metal3Data',
      'IPClaim',
      'IPAddress',
      'KubeadmConfig',
    ])
      expect(ofKind(end, kind).map(key), kind).toEqual([]);
    for (const kind of ['Cluster', 'Metal3Cluster', 'Metal3DataTemplate', 'IPPool', 'BareMetalHost'])
      expect(ofKind(end, kind).length, kind).toBe(ofKind(r().dump.atReady.management, kind).length);
    expect(find(end, 'Secret', 'team-c', 'own-0-userdata')).toBeDefined();
    for (const h of ofKind(end, 'BareMetalHost').filter((x) => x.metadata.name !== 'rack1-srv4')) {
      expect((h.spec as { consumerRef?: unknown }).consumerRef, h.metadata.name).toBeUndefined();
      expect((h.status as { provisioning: { state: string } }).provisioning.state).toBe('available');
    }
  });

  it('left no file behind (its TMPDIR is empty)', () => {
    expect(r().leftInTmp).toEqual([]);
  });
});

describe('the order of the files', () => {
  it('was really different in the two runs', () => {
    const names = (r: Run) => r.files.map((f) => f.replace(/^\d+-/, ''));
    expect(names(runs.reverse)).not.toEqual(names(runs.shuffle));
    expect([...names(runs.reverse)].sort()).toEqual([...names(runs.shuffle)].sort());
  });

  it('does not change the end state, at Ready or after scale-down', () => {
    expect(shape(runs.shuffle.dump.atReady.management)).toEqual(shape(runs.reverse.dump.atReady.management));
    expect(shape(runs.shuffle.dump.management)).toEqual(shape(runs.reverse.dump.management));
    for (const cluster of ['team-a/edge', 'team-b/edge'])
      expect(shape(runs.shuffle.dump.atReady.workload[cluster]!)).toEqual(
        shape(runs.reverse.dump.atReady.workload[cluster]!),
      );
  });
});
