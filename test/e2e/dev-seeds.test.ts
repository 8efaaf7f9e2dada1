/**
 * The seed documents' YAML as written, run end to end: `metal3fn dev --manifests` on every
 * whole-object file of test/fixtures/seeds/ copied unchanged, plus test/fixtures/seed-run/
 * completion.yaml (only what they reference but do not define), against a management API server
 * this test runs (`--kubeconfig F --simulators`, as against a real cluster that already holds
 * another team's machine), with --scale-down. Each object's outcome is stated below, and every
 * applied object must have one.
 */
import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadManifests } from '../../infra/local/manifests.ts';
import { apiVersionOf, R } from '../../shared/api/resources.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { runMetal3fn } from '../helpers/cli.ts';
import { startTestCluster, type TestCluster } from '../helpers/cluster.ts';

const SEEDS = new URL('../fixtures/seeds/', import.meta.url).pathname;
const COMPLETION = new URL('../fixtures/seed-run/completion.yaml', import.meta.url).pathname;
/** Seed files that are fragments (a spec or selector without apiVersion and kind), not objects. */
const FRAGMENTS = [
  '001-hostselector-example-1.yaml',
  '001-hostselector-example-2.yaml',
  '001-hostselector-example-3.yaml',
  '001-hostselector-example-4.yaml',
  '003-nodetype-selector.yaml',
];

interface Dump {
  management: KubeObject[];
  workload: Record<string, KubeObject[]>;
  atReady: { management: KubeObject[]; workload: Record<string, KubeObject[]> };
}

let dir: string;
let tc: TestCluster;
let applied: KubeObject[];
let code: number | null;
let out: string;
let dump: Dump;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'metal3fn-seeds-'));
  const manifests = join(dir, 'manifests');
  await import('node:fs/promises').then((fs) => fs.mkdir(manifests));
  const seedFiles = (await readdir(SEEDS)).filter((f) => f.endsWith('.yaml'));
  for (const f of seedFiles.filter((f) => !FRAGMENTS.includes(f)))
    await copyFile(join(SEEDS, f), join(manifests, f));
  await copyFile(COMPLETION, join(manifests, 'zz-completion.yaml'));
  applied = await loadManifests(manifests);

  // The management cluster, with another team's Machine in it before the run.
  tc = await startTestCluster({ namespaces: ['other-team'] });
  await tc.client.create(R.Metal3Machine, {
    metadata: { name: 'theirs-0', namespace: 'other-team' },
    spec: { image: { url: 'http://x/img', checksum: 'http://x/img.sha256sum' } },
  });
  await tc.client.create(R.Machine, {
    metadata: { name: 'theirs-0', namespace: 'other-team' },
    spec: {
      clusterName: 'theirs',
      bootstrap: { dataSecretName: 'theirs-0-userdata' },
      infrastructureRef: {
        apiVersion: apiVersionOf(R.Metal3Machine),
        kind: 'Metal3Machine',
        name: 'theirs-0',
      },
    },
  });
  const kubeconfig = join(dir, 'management.kubeconfig');
  await writeFile(kubeconfig, tc.kubeconfig);
  ({ code, out } = await runMetal3fn([
    'dev',
    '--kubeconfig',
    kubeconfig,
    '--simulators',
    '--manifests',
    manifests,
    '--sim-delay',
    '50',
    '--scale-down',
    '--dump-state',
    join(dir, 'state.json'),
    '--timeout',
    '150',
  ]));
  dump = JSON.parse(await readFile(join(dir, 'state.json'), 'utf8').catch(() => '{}')) as Dump;
}, 300_000);

afterAll(async () => {
  await tc?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const keyOf = (kind: string, ns: string | undefined, name: string) => `${kind} ${ns ?? ''}/${name}`;
const get = (state: KubeObject[], kind: string, ns: string | undefined, name: string) =>
  state.find(
    (o) => o.kind === kind && o.metadata.name === name && (o.metadata.namespace ?? undefined) === ns,
  );
const conditions = (o: KubeObject | undefined) =>
  (
    (o?.status as { conditions?: { type: string; status: string; reason?: string }[] } | undefined)
      ?.conditions ?? []
  ).map((c) => `${c.type}=${c.status}${c.reason ? ` ${c.reason}` : ''}`);
const ownersOf = (o: KubeObject | undefined) =>
  (o?.metadata.ownerReferences ?? []).map((r) => `${r.kind}/${r.name}`);
const hostOf = (m3m: KubeObject | undefined) => m3m?.metadata.annotations?.['metal3.io/BareMetalHost'];

/** At Ready and after scale-down, what each applied object is: its stated outcome. */
type Outcome = { atReady(o: KubeObject | undefined): void; end(o: KubeObject | undefined): void };
const kept = (check: (o: KubeObject) => void = () => {}): Outcome => ({
  atReady: (o) => {
    expect(o).toBeDefined();
    check(o!);
  },
  end: (o) => expect(o).toBeDefined(),
});
/** A machine of the run: Ready with a new-format providerID on its host, gone after scale-down. */
const readyMachine = (extra: (m3m: KubeObject) => void = () => {}): Outcome => ({
  atReady: (m3m) => {
    expect((m3m!.status as { ready?: boolean }).ready).toBe(true);
    const host = hostOf(m3m)!.split('/')[1];
    expect((m3m!.spec as { providerID?: string }).providerID).toBe(
      `metal3://metal3/${host}/${m3m!.metadata.name}`,
    );
    extra(m3m!);
  },
  end: (o) => expect(o).toBeUndefined(),
});
const released: Outcome['end'] = (h) => {
  expect((h!.spec as { consumerRef?: unknown }).consumerRef).toBeUndefined();
  expect((h!.status as { provisioning: { state: string } }).provisioning.state).toBe('available');
};

const OUTCOMES: Record<string, Outcome> = {
  // 000-kubeadmconfig.yaml: seed 000's node-registration snippet; no Machine references it, so the
  // bootstrap provider leaves it alone (no owner, no status, no data Secret).
  'KubeadmConfig metal3/providerid-example': kept((o) => {
    expect(o.status ?? {}).toEqual({});
    expect(o.metadata.ownerReferences).toBeUndefined();
  }),
  // 001-cluster.yaml: infrastructure ready from its Metal3Cluster; its control plane (the
  // KubeadmControlPlane) owns the kubeconfig Secret of its embedded workload API server.
  'Cluster metal3/cluster': kept((o) => {
    expect(o.status).toMatchObject({ infrastructureReady: true, phase: 'Provisioned' });
    expect((o.spec as { controlPlaneEndpoint?: unknown }).controlPlaneEndpoint).toEqual({
      host: '192.168.111.249',
      port: 6443,
    });
  }),
  // 001-metal3cluster.yaml: ready (reconcileCluster), owned by the Cluster.
  'Metal3Cluster metal3/m3cluster': kept((o) => {
    expect((o.status as { ready?: boolean }).ready).toBe(true);
    expect(ownersOf(o)).toEqual(['Cluster/cluster']);
  }),
  // 001-kubeadmconfig.yaml: the bootstrap config of Machine controlplane-0: owned by it, its data
  // Secret `controlplane-0` written, ready.
  'KubeadmConfig metal3/controlplane-0': {
    atReady: (o) => {
      expect(o!.status).toEqual({ ready: true, dataSecretName: 'controlplane-0' });
      expect(ownersOf(o)).toEqual(['Machine/controlplane-0']);
    },
    // Deleted with its Machine (garbage collection of an owned object).
    end: (o) => expect(o).toBeUndefined(),
  },
  // 001-kubeadmconfigtemplate.yaml: named controlplane-0, which nothing references: untouched.
  'KubeadmConfigTemplate metal3/controlplane-0': kept(),
  // 001-kubeadmcontrolplane.yaml: three control-plane machines (hosts role=control-plane), Ready;
  // scaled to zero by --scale-down.
  'KubeadmControlPlane metal3/m3cluster-controlplane': {
    atReady: (o) => expect((o!.spec as { replicas: number }).replicas).toBe(3),
    end: (o) => expect((o!.spec as { replicas: number }).replicas).toBe(0),
  },
  // 001-machinedeployment.yaml: one worker (host role=worker) through its MachineSet; scaled to zero.
  'MachineDeployment metal3/md-0': {
    atReady: (o) => expect((o!.spec as { replicas: number }).replicas).toBe(1),
    end: (o) => expect((o!.spec as { replicas: number }).replicas).toBe(0),
  },
  // 001-machine.yaml: a bare Machine with a preset legacy providerID (metal3://<uid> of a host that
  // does not exist here). Its Metal3Machine is provisioned fresh, so it gets the new format
  // (DESIGN §2, seed 000), and the Machine takes its infrastructure machine's ID as Cluster API's
  // Machine controller does: the preset one is replaced. Running with its Node; deleted on scale-down.
  'Machine metal3/controlplane-0': {
    atReady: (o) => {
      expect((o!.spec as { providerID?: string }).providerID).toBe(
        'metal3://metal3/node-selected-0/controlplane-0',
      );
      expect(o!.status).toMatchObject({
        phase: 'Running',
        nodeRef: { kind: 'Node', name: 'controlplane-0' },
      });
      expect((o!.spec as { bootstrap: { dataSecretName?: string } }).bootstrap.dataSecretName).toBe(
        'controlplane-0',
      );
    },
    end: (o) => expect(o).toBeUndefined(),
  },
  // 001-metal3machine.yaml: its selector (key1=value1, key2 in (abc, 123, value2)) picks the one host
  // labelled so; its own metaData Secret and its template's networkData go to the host.
  'Metal3Machine metal3/controlplane-0': readyMachine((m3m) => {
    expect(hostOf(m3m)).toBe('metal3/node-selected-0');
    expect((m3m.status as { metaData?: { name?: string } }).metaData?.name).toBe('controlplane-0-metadata-0');
    expect((m3m.status as { networkData?: { name?: string } }).networkData?.name).toBe(
      'controlplane-0-networkdata-0',
    );
  }),
  // 001-metal3machinetemplate.yaml: m3mt-0, which nothing references: untouched.
  'Metal3MachineTemplate metal3/m3mt-0': kept(),
  // 001-metal3datatemplate.yaml (namespace default; its ownerReference without uid resolved to the
  // completion's Metal3Cluster cluster-1). Only the standing-in Metal3Machine machine-1's claim
  // uses it: index 1 (index 0 is the seed Metal3Data nodepool-1-0's, which links to it through
  // templateReference old-template and names a claim machine-1 in namespace metal3 — another
  // claim). Kept as is by scale-down: machine-1 is no machine of the run.
  'Metal3DataTemplate default/nodepool-1': {
    atReady: (o) => {
      expect(ownersOf(o)).toEqual(['Metal3Cluster/cluster-1']);
      expect((o!.status as { indexes?: unknown }).indexes).toEqual({ '0': 'machine-1', '1': 'machine-1' });
      expect((o!.status as { dataNames?: unknown }).dataNames).toEqual({ 'machine-1': 'nodepool-1-1' });
    },
    end: (o) =>
      expect((o!.status as { indexes?: unknown }).indexes).toEqual({ '0': 'machine-1', '1': 'machine-1' }),
  },
  // 001-metal3data.yaml: the seed's rendered-data example (its status is the API server's to drop
  // at create). Its claim (metal3/machine-1) and template (metal3/test1-workers-template) do not
  // exist: it is never rendered, and nothing releases it.
  'Metal3Data default/nodepool-1-0': {
    atReady: (o) => {
      expect(o!.status ?? {}).not.toHaveProperty('ready', true);
      expect(ownersOf(o)).toEqual(['Metal3DataTemplate/nodepool-1']);
    },
    end: (o) => expect(o).toBeDefined(),
  },
  // 001-metal3dataclaim.yaml: the claim of machine-1 (its owner, resolved to the completion's
  // Metal3Machine): allocated index 1 of nodepool-1 (Metal3Data nodepool-1-1), which waits to be
  // rendered until machine-1 has a host — never, as no Machine owns machine-1.
  'Metal3DataClaim default/machine-1': kept((o) => {
    expect(ownersOf(o)).toEqual(['Metal3Machine/machine-1']);
    expect((o.status as { renderedData?: unknown }).renderedData).toEqual({
      name: 'nodepool-1-1',
      namespace: 'default',
    });
  }),
  // 004-clusterrole-example.yaml: an RBAC object, applied as is (checked on the cluster below).
  'ClusterRole /capi-foo-machines': { atReady: () => {}, end: () => {} },

  // completion.yaml
  'Metal3MachineTemplate metal3/m3cluster-controlplane': kept(),
  'Metal3MachineTemplate metal3/md-0': kept(),
  // Referenced by the MachineDeployment: its MachineSet's Machine gets a KubeadmConfig cloned from it.
  'KubeadmConfigTemplate metal3/md-0': kept(),
  'Metal3DataTemplate metal3/controlplane-metadata': {
    atReady: (o) => expect((o!.status as { indexes?: unknown }).indexes).toEqual({ '0': 'controlplane-0' }),
    end: (o) => expect((o!.status as { indexes?: unknown }).indexes ?? {}).toEqual({}),
  },
  'Secret metal3/controlplane-0-metadata-0': kept(),
  'IPPool default/pool-1': kept(),
  'IPPool default/pool6-1': kept(),
  // Stands in as the owner of nodepool-1: no Cluster owns it, so it never becomes ready.
  'Metal3Cluster default/cluster-1': kept((o) =>
    expect((o.status as { ready?: boolean } | undefined)?.ready).not.toBe(true),
  ),
  // Stands in as the owner of the claim machine-1: no Machine owns it, so selectHost waits for one
  // (the Cluster API contract) and it is none of the run's machines.
  'Metal3Machine default/machine-1': kept((o) => {
    expect(hostOf(o)).toBeUndefined();
    expect(conditions(o)).toContain('AssociateBMH=False WaitingForMetal3MachineOwnerRef');
  }),
  'Secret metal3/bmc-credentials': kept(),
  ...Object.fromEntries(
    ['node-cp-0', 'node-cp-1', 'node-cp-2', 'node-worker-0', 'node-selected-0'].map((h) => [
      `BareMetalHost metal3/${h}`,
      {
        atReady: (o: KubeObject | undefined) =>
          expect((o!.status as { provisioning: { state: string } }).provisioning.state).toBe('provisioned'),
        end: released,
      },
    ]),
  ),
};

describe('the seed documents, run end to end', () => {
  it('brings every machine Ready and releases cleanly (exit 0)', () => {
    expect(out).toContain(
      '29 objects applied (3 ownerReference uids filled in); 5 machines expected; clusters metal3/cluster',
    );
    expect(out).toContain('release check: clean');
    expect(code, out.slice(-3000)).toBe(0);
  });

  it('states the outcome of every applied object', () => {
    const keys = applied.map((o) => keyOf(o.kind!, o.metadata.namespace, o.metadata.name!)).sort();
    expect(keys).toEqual(Object.keys(OUTCOMES).sort());
  });

  it.each(Object.keys(OUTCOMES).filter((k) => !k.startsWith('ClusterRole')))('%s', (key) => {
    const [kind, path] = key.split(' ') as [string, string];
    const [ns, name] = path.split('/') as [string, string];
    OUTCOMES[key]!.atReady(get(dump.atReady.management, kind, ns || undefined, name));
    OUTCOMES[key]!.end(get(dump.management, kind, ns || undefined, name));
  });

  it('applied the ClusterRole of seed 004 as written', async () => {
    const res = await fetch(
      `${tc.server.url}/apis/rbac.authorization.k8s.io/v1/clusterroles/capi-foo-machines`,
    );
    const role = (await res.json()) as { metadata: { labels: unknown }; rules: unknown };
    const seed = parse(await readFile(join(SEEDS, '004-clusterrole-example.yaml'), 'utf8'));
    expect(role.metadata.labels).toEqual(seed.metadata.labels);
    expect(role.rules).toEqual(seed.rules);
  });

  it('gave every machine of the control plane and the deployment a KubeadmConfig, as they make them', () => {
    const configs = dump.atReady.management.filter((o) => o.kind === 'KubeadmConfig');
    const machines = dump.atReady.management.filter(
      (o) =>
        o.kind === 'Machine' && o.metadata.namespace === 'metal3' && o.metadata.name !== 'controlplane-0',
    );
    expect(machines).toHaveLength(4);
    const initial: string[] = [];
    for (const m of machines) {
      const ref = (m.spec as { bootstrap: { configRef?: { name?: string } } }).bootstrap.configRef;
      expect(ref?.name).toBe(m.metadata.name);
      const config = configs.find((c) => c.metadata.name === m.metadata.name)!;
      expect(config.status).toEqual({ ready: true, dataSecretName: m.metadata.name });
      const spec = config.spec as {
        initConfiguration?: unknown;
        joinConfiguration?: unknown;
        preKubeadmCommands?: unknown;
      };
      if (m.metadata.name!.startsWith('md-0-')) {
        // Cloned from KubeadmConfigTemplate md-0.
        expect(spec).toEqual({
          joinConfiguration: {
            nodeRegistration: {
              name: '{{ ds.meta_data.name }}',
              kubeletExtraArgs: { 'node-labels': 'metal3.io/uuid={{ ds.meta_data.uuid }}' },
            },
          },
        });
      } else if (spec.initConfiguration) initial.push(m.metadata.name!);
      else expect(spec.joinConfiguration).toBeDefined();
    }
    // One control-plane machine initialises the cluster, the others join it.
    expect(initial).toHaveLength(1);
  });

  it("made the machines' Nodes in the cluster's own workload API server, with their providerIDs", () => {
    expect(Object.keys(dump.atReady.workload)).toEqual(['metal3/cluster']);
    const nodes = dump.atReady.workload['metal3/cluster']!.filter((o) => o.kind === 'Node');
    const machines = dump.atReady.management.filter(
      (o) => o.kind === 'Machine' && o.metadata.namespace === 'metal3',
    );
    expect(machines).toHaveLength(5);
    for (const m of machines) {
      const id = (m.spec as { providerID?: string }).providerID;
      expect(
        nodes.filter((n) => (n.spec as { providerID?: string }).providerID === id),
        m.metadata.name,
      ).toHaveLength(1);
    }
    const secret = get(dump.atReady.management, 'Secret', 'metal3', 'cluster-kubeconfig');
    expect(ownersOf(secret)).toEqual(['KubeadmControlPlane/m3cluster-controlplane']);
  });

  it("left the other team's Machine in the cluster alone (scale-down removes only what the run applied)", async () => {
    const theirs = await tc.client.get(R.Machine, 'other-team', 'theirs-0');
    expect(theirs?.metadata.deletionTimestamp).toBeUndefined();
    expect(await tc.client.get(R.Metal3Machine, 'other-team', 'theirs-0')).toBeDefined();
  });

  it('refuses a fragment with a message naming its file, before anything starts', async () => {
    const bad = join(dir, 'fragment');
    await import('node:fs/promises').then((fs) => fs.mkdir(bad));
    await copyFile(join(SEEDS, FRAGMENTS[0]!), join(bad, FRAGMENTS[0]!));
    const r = await runMetal3fn(['dev', '--manifests', bad]);
    expect(r.out.trim()).toBe(
      `metal3fn dev: ${join(bad, FRAGMENTS[0]!)}: a document is not a Kubernetes object (it lacks apiVersion, kind or metadata.name)`,
    );
    expect(r.code).toBe(1);
  });
});
