/**
 * Generates the shipped RBAC from what the code actually calls (`npm run gen:rbac`):
 * runs representative scenarios of the whole system (runDev, as `npm start` runs it) with RBAC in
 * `observe` mode, where the functions, the relay and the workload kubeconfig have their own
 * identities and the API servers' request logs say who did what; keeps the union of
 * (apiGroup, resource[/subresource], verb) per identity; writes
 *   infra/deploy/rbac-observed.json            the observation (which scenario needed what)
 *   infra/deploy/common/rbac-functions.yaml    ClusterRole + binding of the functions
 *   infra/deploy/common/rbac-relay.yaml        ClusterRole + binding of the relay
 *   infra/deploy/workload-rbac.yaml            Nodes in each workload cluster
 * and, from the routing table alone (pure: no scenario involved, scripts/rbac/routing-role.ts),
 *   infra/knative/apiserversource/rbac-functions-routing.yaml
 *                                              the gets and lists routing by lookup needs (no relay)
 * `--check`: exit 1 when a committed file differs from what the COMMITTED observation (and the
 * routing table) renders to (no scenarios run). `--from-observation`: re-render from the committed
 * observation only.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { parseEnvelope } from '../events/envelope.ts';
import { reconcileIPClaimMessage } from '../functions/allocate-index/core.ts';
import type { ApiServerHandle } from '../infra/local/apiserver/index.ts';
import { FUNCTIONS_TOKEN, FUNCTIONS_USER, RELAY_USER } from '../infra/local/dev/rbac.ts';
import { type DevOptions, runDev } from '../infra/local/dev/run.ts';
import { PENDING_PAGE } from '../shared/allocation/registry.ts';
import { recordOf } from '../shared/api/json.ts';
import { apiVersionOf, R, type Resource } from '../shared/api/resources.ts';
import { CAPI_PAUSED_ANNOTATION } from '../shared/api/wellknown.ts';
import { KubeClient } from '../shared/kube/client.ts';
import type { KubeObject } from '../shared/kube/types.ts';
import { buildContext } from '../shared/runtimes/context.ts';
import { ROUTING_ROLE_FILE, renderRoutingRoleFile } from './rbac/routing-role.ts';
import {
  emptyObservation,
  IDENTITIES,
  type Observation,
  ROLE_FILES,
  recordScenario,
  renderObservation,
  renderRoleFile,
  type ScenarioInfo,
} from './rbac/rules.ts';

const ROOT = new URL('../', import.meta.url).pathname;
export const OBSERVATION_FILE = 'infra/deploy/rbac-observed.json';
const NS = 'metal3';

interface Scenario extends ScenarioInfo {
  options: Partial<DevOptions>;
}

/** More IPClaims than a page of waiting claims (ADR 012), so a replayed one ranks by the registry. */
const BURST_CLAIMS = PENDING_PAGE + 2;
let burstServer: ApiServerHandle | undefined;

/** The base scenario first: it is what test/integration/rbac/ runs under enforcement. */
export const SCENARIOS: Scenario[] = [
  {
    name: 'sample-scale-down',
    description: 'the sample (3 control plane + 2 workers) to Ready, then scale-down to zero and release',
    options: { machines: 5 },
  },
  {
    name: 'node-reuse-user-data-failure',
    description:
      'nodeReuse: true on both Metal3MachineTemplates (control plane keeps automatedCleaningMode metadata: a repeated Warning Event), the workers with a user-supplied metaData Secret, Metal3DataTemplates without the cluster label (allocateIndex adds it), and two IPClaims on a pool of one address (the second fails: a terminal error with an Event; then both are deleted and released); Ready, then scale-down',
    options: {
      machines: 4,
      hooks: {
        async onSample(objects: KubeObject[], admin: KubeClient) {
          for (const o of objects) {
            // A data template created without the cluster label: allocateIndex labels it (with its
            // finalizer and owner, one update).
            if (o.kind === 'Metal3DataTemplate') delete o.metadata.labels?.['cluster.x-k8s.io/cluster-name'];
            if (o.kind !== 'Metal3MachineTemplate') continue;
            const spec = o.spec as { nodeReuse?: boolean; template: { spec: Record<string, unknown> } };
            spec.nodeReuse = true;
            if (o.metadata.name === 'md-0') spec.template.spec.metaData = { name: 'md-0-user-metadata' };
          }
          await admin.create(R.Secret, {
            metadata: { name: 'md-0-user-metadata', namespace: NS },
            type: 'Opaque',
            data: { metaData: Buffer.from('local-hostname: user-supplied\n').toString('base64') },
          });
          // A pool of one address and two claims: the second fails (exhausted) with an Event.
          await admin.create(R.IPPool, {
            metadata: { name: 'rbac-probe-pool', namespace: NS },
            spec: {
              namePrefix: 'rbac-probe-pool',
              pools: [{ start: '10.99.0.1', end: '10.99.0.1' }],
              prefix: 24,
            },
          });
          for (const name of ['rbac-probe-a', 'rbac-probe-b'])
            await admin.create(R.IPClaim, {
              metadata: { name, namespace: NS },
              spec: { pool: { name: 'rbac-probe-pool' } },
            });
          // Once the failure is recorded, the user deletes both claims: the release runs (the
          // address goes), and the scale-down's release check finds nothing left behind.
          void deleteIPClaimsWhen(admin, ['rbac-probe-a', 'rbac-probe-b'], ([, b]) =>
            Boolean(ipClaimStatus(b)?.errorMessage),
          );
        },
      },
    },
  },
  {
    name: 'replay-in-a-burst',
    description: `an operator replays allocateIndex (no FIFO group: as replay and the HTTP runtime deliver) for one of ${BURST_CLAIMS} IPClaims waiting on one pool, more than a page: the page of waiting claims, the join to the pool's registry (ADR 012); then the claims are deleted and released; Ready, then scale-down`,
    options: {
      machines: 3,
      hooks: {
        onServers(management) {
          burstServer = management;
        },
        async onSample(_objects: KubeObject[], admin: KubeClient) {
          await admin.create(R.IPPool, {
            metadata: { name: 'rbac-burst-pool', namespace: NS },
            spec: {
              namePrefix: 'rbac-burst-pool',
              pools: [{ start: '10.98.0.1', end: '10.98.0.100' }],
              prefix: 24,
            },
          });
          for (let i = 0; i < BURST_CLAIMS; i++)
            await admin.create(R.IPClaim, {
              metadata: { name: `rbac-burst-${i}`, namespace: NS },
              spec: { pool: { name: 'rbac-burst-pool' } },
            });
          const functions = KubeClient.fromString(burstServer!.kubeconfig({ token: FUNCTIONS_TOKEN }));
          const replayed = await reconcileIPClaimMessage(
            buildContext({ client: functions, component: 'replay' }),
            parseEnvelope({
              function: 'allocateIndex',
              apiVersion: apiVersionOf(R.IPClaim),
              kind: 'IPClaim',
              namespace: NS,
              name: `rbac-burst-${BURST_CLAIMS - 1}`,
              reason: 'replay',
            }),
          );
          if (replayed.kind !== 'done') throw new Error(`replay in a burst: ${JSON.stringify(replayed)}`);
          void deleteIPClaimsWhen(
            admin,
            Array.from({ length: BURST_CLAIMS }, (_, i) => `rbac-burst-${i}`),
            (claims) => claims.every((c) => ipClaimStatus(c)?.address),
          );
        },
      },
    },
  },
  {
    name: 'drifted-maps',
    description:
      'an admin pauses a Metal3DataTemplate and an IPPool once they hold entries, writes an entry of a claim that does not exist into their status maps, and unpauses them (as after a restore): allocateIndex rebuilds both maps from their Metal3Data and IPAddresses (a read-modify-write of /status, which a release whose tested patch is refused also takes: ADR 035); Ready, then scale-down',
    options: {
      machines: 3,
      hooks: {
        onSample(_objects: KubeObject[], admin: KubeClient) {
          void driftMapsWhenHeld(admin);
        },
      },
    },
  },
  {
    name: 'vmetal-scale-down',
    description:
      'dev --vmetal: the vMetal sample (a NodeProvider with two overlapping node types, two tenant clusters whose NodeClaims the platform simulator makes, vMetal hosts and decoys) beside a 3-machine CAPM3 sample on the same hosts; every claim Available and every machine Ready, then scale-down and release',
    options: {
      machines: 3,
      vmetal: true,
      hooks: {
        async onSample(_objects: KubeObject[], admin: KubeClient) {
          // A second provider whose second node type is removed once both exist: selectHost
          // deletes the NodeType no claim uses (its hosts' namespace has none: both stay Pending).
          await admin.create(R.NodeProvider, {
            metadata: { name: 'rbac-probe' },
            spec: {
              metal3: {
                clusterRef: { cluster: 'local', namespace: 'rbac-probe' },
                nodeTypes: [{ name: 'rbac-probe-a' }, { name: 'rbac-probe-b' }],
              },
            },
          });
          void removeNodeTypeWhen(admin, 'rbac-probe', 'rbac-probe-b');
        },
      },
    },
  },
];

/**
 * Deletes the IPClaims `names` (their release runs, so the scale-down's release check finds nothing
 * of them) once `ready` says their claims got where the scenario wanted, or after 60 s.
 */
async function deleteIPClaimsWhen(
  admin: KubeClient,
  names: string[],
  ready: (claims: (KubeObject | undefined)[]) => boolean,
): Promise<void> {
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    const claims = await Promise.all(names.map((n) => admin.get(R.IPClaim, NS, n).catch(() => undefined)));
    if (ready(claims)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  for (const n of names) await admin.delete(R.IPClaim, NS, n).catch(() => undefined);
}

/**
 * Pauses the first Metal3DataTemplate and the first IPPool that hold entries (or gives up after
 * 60 s), adds an entry of a claim that does not exist to their status maps, and unpauses them:
 * their status is not routed (allocateIndex's own bookkeeping), their unpausing is, and the
 * reconcile that follows rebuilds the maps, so the release check still finds them clean.
 */
async function driftMapsWhenHeld(admin: KubeClient): Promise<void> {
  const drifts: [Resource<KubeObject>, Record<string, unknown>][] = [
    [
      R.Metal3DataTemplate,
      { indexes: { '9999': 'rbac-drift' }, dataNames: { 'rbac-drift': 'rbac-drift-data' } },
    ],
    [R.IPPool, { indexes: { 'rbac-drift': '192.0.2.1' } }],
  ];
  const held = (o: KubeObject) => Object.keys(recordOf(recordOf(o.status).indexes)).length > 0;
  for (const [resource, status] of drifts) {
    const until = Date.now() + 60_000;
    let target: KubeObject | undefined;
    while (Date.now() < until && !target) {
      target = (await admin.list(resource, NS)).items.find(held);
      if (!target) await new Promise((r) => setTimeout(r, 100));
    }
    if (!target) continue;
    const name = target.metadata.name!;
    const pause = (v: string | null) =>
      admin.patch(resource, NS, name, { metadata: { annotations: { [CAPI_PAUSED_ANNOTATION]: v } } });
    await pause('');
    await admin.patch(resource, NS, name, { status }, 'merge', { status: true });
    await pause(null);
  }
}

/** Drops `type` from the provider's `nodeTypes[]` once its NodeType exists (or after 60 s). */
async function removeNodeTypeWhen(admin: KubeClient, provider: string, type: string): Promise<void> {
  const until = Date.now() + 60_000;
  while (Date.now() < until && !(await admin.get(R.NodeType, undefined, type).catch(() => undefined)))
    await new Promise((r) => setTimeout(r, 100));
  const p = await admin.get(R.NodeProvider, undefined, provider);
  const types = p?.spec.metal3?.nodeTypes?.filter((t) => t.name !== type) ?? [];
  await admin.patch(R.NodeProvider, undefined, provider, { spec: { metal3: { nodeTypes: types } } });
}

const ipClaimStatus = (c: KubeObject | undefined) =>
  c?.status as { address?: unknown; errorMessage?: string } | undefined;

const quiet = new Writable({ write: (_c, _e, cb) => cb() }) as unknown as NodeJS.WriteStream;

/** The runDev options of a scenario (the enforce test runs the base scenario with these). */
export function scenarioOptions(s: Scenario): DevOptions {
  return {
    machines: 3,
    scaleDown: true,
    serve: false,
    simDelayMs: 20,
    timeoutSeconds: 90,
    concurrency: 8,
    legacyProviderIds: 'accept',
    out: quiet,
    queuePrefix: `rbac${process.pid}${s.name.replace(/[^a-z0-9]/gi, '').slice(0, 12)}-`,
    ...s.options,
  };
}

export async function observeScenarios(
  scenarios: Scenario[] = SCENARIOS,
  say: (l: string) => void = () => {},
): Promise<Observation> {
  const obs = emptyObservation(scenarios.map(({ name, description }) => ({ name, description })));
  for (const s of scenarios) {
    const started = Date.now();
    const result = await runDev({ ...scenarioOptions(s), rbac: 'observe' });
    if (!result.rbacLog || !result.ok)
      throw new Error(`scenario ${s.name}: ${result.message} ${JSON.stringify(result.release ?? [])}`);
    const log = result.rbacLog;
    recordScenario(
      obs,
      'functions',
      s.name,
      log.management.filter((e) => e.user === FUNCTIONS_USER),
    );
    recordScenario(
      obs,
      'relay',
      s.name,
      log.management.filter((e) => e.user === RELAY_USER),
    );
    recordScenario(obs, 'workload', s.name, log.workload);
    say(
      `${s.name}: ${result.message}; ${log.management.length} management + ${log.workload.length} workload requests in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  }
  return obs;
}

/**
 * Repository-relative path -> text, for an observation; with the routing-by-lookup role, which
 * depends on the routing table only.
 */
export function renderRbacFiles(obs: Observation): Map<string, string> {
  const files = new Map<string, string>();
  for (const id of IDENTITIES) files.set(ROLE_FILES[id], renderRoleFile(id, obs));
  files.set(OBSERVATION_FILE, renderObservation(obs));
  files.set(ROUTING_ROLE_FILE, renderRoutingRoleFile());
  return files;
}

export function readObservation(): Observation {
  return JSON.parse(readFileSync(`${ROOT}${OBSERVATION_FILE}`, 'utf8')) as Observation;
}

async function main(argv: string[]): Promise<number> {
  const check = argv.includes('--check');
  const fromObservation = check || argv.includes('--from-observation');
  const obs = fromObservation
    ? readObservation()
    : await observeScenarios(SCENARIOS, (l) => process.stdout.write(`${l}\n`));
  let differ = 0;
  for (const [path, text] of renderRbacFiles(obs)) {
    let current = '';
    try {
      current = readFileSync(`${ROOT}${path}`, 'utf8');
    } catch {}
    if (current === text) continue;
    differ++;
    if (check) process.stdout.write(`differs: ${path}\n`);
    else {
      writeFileSync(`${ROOT}${path}`, text);
      process.stdout.write(`wrote ${path}\n`);
    }
  }
  if (!check && differ === 0) process.stdout.write('RBAC files unchanged\n');
  return check && differ > 0 ? 1 : 0;
}

if (process.argv[1] && new URL(import.meta.url).pathname === process.argv[1]) {
  process.exitCode = await main(process.argv.slice(2));
}
