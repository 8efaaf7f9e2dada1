/**
 * `metal3fn dev`: the whole system on embedded defaults (or pointed at real parts), a sample
 * cluster built from the seeds, live progress until every machine is Ready on both sides (the
 * Metal3Machine and CAPI's Machine with its nodeRef), optionally a scale-down with a release
 * check, a state dump and a summary.
 */
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FUNCTIONS } from '../../../bin/function-table.ts';
import { FUNCTION_NAMES } from '../../../events/envelope.ts';
import { startRelay } from '../../../functions/relay/relay.ts';
import type { IPPoolSpec } from '../../../shared/api/index.ts';
import { envelopeOf, R } from '../../../shared/api/resources.ts';
import { KubeClient } from '../../../shared/kube/client.ts';
import { RequestStats, type RequestStatsSnapshot } from '../../../shared/kube/stats.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { createWorkloadClientCache, kubeconfigSecretName } from '../../../shared/kube/workload.ts';
import { createLogger, type Logger } from '../../../shared/observability/logger.ts';
import { ensureQueues } from '../../../shared/queue/ensure.ts';
import type { RoutedMessage } from '../../../shared/queue/message.ts';
import { scheduleRequeue } from '../../../shared/queue/requeue.ts';
import { createSqsClient } from '../../../shared/queue/sqs.ts';
import { buildContext } from '../../../shared/runtimes/context.ts';
import { DirectRunner } from '../../../shared/runtimes/direct.ts';
import type { FunctionTable } from '../../../shared/runtimes/dispatch.ts';
import { Worker } from '../../../shared/runtimes/worker.ts';
import { type ApiServerHandle, type RequestLogEntry, startApiServer } from '../apiserver/index.ts';
import { assetPath } from '../assets.ts';
import { applyObjects, ensureNamespace, installCrds, loadManifests } from '../manifests.ts';
import { createSampleHosts, startBmoSimulator } from '../sim/bmo.ts';
import { startCapiSimulator } from '../sim/capi.ts';
import { startKubeletSimulator } from '../sim/kubelet.ts';
import { startLocalSqs } from '../sqs.ts';
import { growPoolFor, type HostPlan, planHosts, sampleSize } from './hosts.ts';
import { listEverything, type StateDump } from './objects.ts';
import { type MachineTimeline, ProgressObserver } from './observer.ts';
import { conditionsLine } from './phase.ts';
import {
  applyRbacFile,
  FUNCTIONS_TOKEN,
  FUNCTIONS_USER,
  managementRbac,
  RBAC_FILES,
  type RbacMode,
  RELAY_TOKEN,
  RELAY_USER,
  WORKLOAD_TOKEN,
  WORKLOAD_USER,
  workloadRbac,
} from './rbac.ts';
import { checkRelease, type ReleaseFinding } from './release-check.ts';
import { formatSummary, type RunSummary, summarize } from './summary.ts';
import { startProgressView } from './view.ts';

export interface DevOptions {
  machines: number;
  hosts?: number | undefined;
  manifests?: string | undefined;
  kubeconfig?: string | undefined;
  sqsEndpoint?: string | undefined;
  scaleDown: boolean;
  dumpState?: string | undefined;
  summaryJson?: string | undefined;
  serve: boolean;
  simDelayMs: number;
  /** Simulators run with real parts only when asked. */
  simulators?: boolean | undefined;
  timeoutSeconds: number;
  concurrency: number;
  legacyProviderIds: 'accept' | 'refuse';
  out?: NodeJS.WriteStream;
  hooks?: DevHooks;
  /** Queue prefix (default `dev<pid>-`). */
  queuePrefix?: string;
  /**
   * RBAC on the embedded API servers (see ./rbac.ts): the functions, the relay and the workload
   * kubeconfig get their own identities; `observe` lets them do anything and logs who did what,
   * `enforce` gives them exactly the shipped roles. Embedded servers only.
   */
  rbac?: RbacMode | undefined;
  /**
   * No queues: the relay calls the functions in this process (shared/runtimes/direct.ts), with the
   * queues' per-group order, coalescing, deduplication, requeue-after and retries. The benchmark's
   * baseline for the pipeline's cost; not durable.
   */
  direct?: boolean | undefined;
}

/**
 * Hooks for the chaos suite and the benchmarks: they compose the same system as `npm start` and
 * bend it (faults, duplicates, crashes) without a second copy of the wiring.
 */
export interface DevHooks {
  /** The embedded API servers, once started (fault injection, request logs). */
  onServers?(
    management: ApiServerHandle | undefined,
    workload: ApiServerHandle | undefined,
  ): void | Promise<void>;
  /** Wraps the function table the workers run (e.g. crash between two writes). */
  wrapFunctions?(fns: FunctionTable): FunctionTable;
  /**
   * Sees each batch of routed messages; `resend` sends one again later through the requeue queue
   * (a duplicate that may arrive out of order).
   */
  onRelayMessages?(msgs: RoutedMessage[], resend: (m: RoutedMessage, delaySeconds: number) => void): void;
  /** Called on every observed change, with the admin client (continuous invariant checks). */
  onProgress?(observer: ProgressObserver, admin: KubeClient): void;
  /** Sees (and may change) the sample's objects before they are applied; may create more with admin. */
  onSample?(objects: KubeObject[], admin: KubeClient): void | Promise<void>;
}

export interface DevResult {
  /** Per-machine phase timelines (ms since epoch), for benchmarks and diagnosis. */
  timelines?: MachineTimeline[];
  ok: boolean;
  /** The product's API requests by verb and resource (the functions and the relay). */
  requests?: RequestStatsSnapshot;
  summary?: RunSummary;
  release?: ReleaseFinding[];
  message: string;
  /**
   * With `rbac`: every request of the product's identities (the functions and the relay on the
   * management cluster, the workload kubeconfig's identity on the workload cluster), unbounded.
   */
  rbacLog?: { management: RequestLogEntry[]; workload: RequestLogEntry[] };
}

const SAMPLE_DIR = assetPath('infra/local/sample');
const NAMESPACE = 'metal3';
const CLUSTER = 'cluster';

type Stoppable = { stop(): unknown };

export async function runDev(o: DevOptions): Promise<DevResult> {
  const out = o.out ?? process.stdout;
  const say = (line: string) => out.write(`${line}\n`);
  const log: Logger = createLogger({ level: (process.env.LOG_LEVEL as 'debug' | undefined) ?? 'warn' });
  const started = Date.now();
  const cleanup: Stoppable[] = [];
  const stopAll = async () => {
    for (const c of cleanup.reverse()) await c.stop();
  };

  try {
    // 1. Kubernetes: the embedded management and workload API servers, or a real cluster.
    let mgmtServer: ApiServerHandle | undefined;
    let mgmtKubeconfig = o.kubeconfig;
    if (o.rbac && o.kubeconfig) throw new Error('rbac needs the embedded API servers (no --kubeconfig)');
    const rbacLog = { management: [] as RequestLogEntry[], workload: [] as RequestLogEntry[] };
    if (!mgmtKubeconfig) {
      mgmtServer = await startApiServer({
        faults: Boolean(o.hooks?.onServers),
        ...(o.rbac ? { rbac: managementRbac(o.rbac) } : {}),
      });
      cleanup.push(mgmtServer);
      if (o.rbac) keepLog(mgmtServer, new Set([FUNCTIONS_USER, RELAY_USER]), rbacLog.management);
      mgmtKubeconfig = join(tmpdir(), `metal3fn-dev-${process.pid}-management.kubeconfig`);
      await mgmtServer.writeKubeconfig(mgmtKubeconfig);
    }
    const productStats = new RequestStats();
    // The functions and the relay each have their own client (their own identity under rbac).
    const productClient = (token: string) =>
      mgmtServer && o.rbac
        ? KubeClient.fromString(mgmtServer.kubeconfig({ token }), {
            stats: productStats,
            fieldManager: 'metal3-functions',
          })
        : KubeClient.fromFile(mgmtKubeconfig!, { stats: productStats, fieldManager: 'metal3-functions' });
    const product = productClient(FUNCTIONS_TOKEN);
    const relayClient = productClient(RELAY_TOKEN);
    const admin = KubeClient.fromFile(mgmtKubeconfig, { fieldManager: 'metal3fn-dev' });
    if (mgmtServer) await installCrds(admin);
    if (o.rbac === 'enforce') {
      await applyRbacFile(admin, RBAC_FILES.functions);
      await applyRbacFile(admin, RBAC_FILES.relay);
    }
    await ensureNamespace(admin, NAMESPACE);

    const simulate = o.simulators ?? !o.kubeconfig;
    let workloadServer: ApiServerHandle | undefined;
    let workloadAdmin: KubeClient | undefined;
    if (simulate) {
      workloadServer = await startApiServer({
        faults: Boolean(o.hooks?.onServers),
        ...(o.rbac ? { rbac: workloadRbac(o.rbac) } : {}),
      });
      cleanup.push(workloadServer);
      if (o.rbac) keepLog(workloadServer, new Set([WORKLOAD_USER]), rbacLog.workload);
      workloadAdmin = KubeClient.fromString(workloadServer.kubeconfig());
      if (o.rbac === 'enforce') await applyRbacFile(workloadAdmin, RBAC_FILES.workload);
      // The product reaches the workload cluster with the kubeconfig in the Secret.
      const productWorkloadKubeconfig = workloadServer.kubeconfig(o.rbac ? { token: WORKLOAD_TOKEN } : {});
      await admin.create(R.Secret, {
        metadata: {
          name: kubeconfigSecretName(CLUSTER),
          namespace: NAMESPACE,
          labels: { 'cluster.x-k8s.io/cluster-name': CLUSTER },
        },
        type: 'cluster.x-k8s.io/secret',
        data: { value: Buffer.from(productWorkloadKubeconfig).toString('base64') },
      });
    }
    await o.hooks?.onServers?.(mgmtServer, workloadServer);
    say(`management API: ${mgmtServer ? `${mgmtServer.url} (embedded)` : o.kubeconfig}`);
    if (workloadServer)
      say(`workload API:   ${workloadServer.url} (embedded, cluster ${NAMESPACE}/${CLUSTER})`);
    say(`kubeconfig:     ${mgmtKubeconfig}`);

    // 2. SQS: the queues (FIFO per function + DLQs + the requeue queue); none when direct.
    const queueing = o.direct ? undefined : await startQueues(o, cleanup);
    say(
      queueing
        ? `SQS:            ${queueing.endpoint}`
        : 'SQS:            none (direct: functions run in the relay)',
    );

    // 3. Simulators of the controllers we do not replace.
    // The simulators reach the workload cluster through their own cache: their requests are not the product's.
    const simWorkloadAdmin = workloadAdmin;
    const simWorkloads = createWorkloadClientCache(
      admin,
      simWorkloadAdmin ? { clientFactory: () => simWorkloadAdmin } : {},
    );
    const workloadOf = (namespace: string, name: string) => simWorkloads.get(namespace, name);
    const context = buildContext({
      client: product,
      log,
      config: { legacyProviderIds: o.legacyProviderIds },
      component: 'metal3-functions',
    });
    if (simulate) {
      cleanup.push(
        startBmoSimulator({
          client: admin,
          delays: { provisioningMs: o.simDelayMs, deprovisioningMs: o.simDelayMs },
          log,
        }),
      );
      cleanup.push(startCapiSimulator({ client: admin, workloadClient: workloadOf, log }));
      cleanup.push(
        startKubeletSimulator({
          management: admin,
          workloadClient: workloadOf,
          delayMs: Math.round(o.simDelayMs / 2),
          log,
        }),
      );
    }

    // 4. The product: the relay and workers for every function (or the functions in the relay).
    const fns = o.hooks?.wrapFunctions ? o.hooks.wrapFunctions(FUNCTIONS) : FUNCTIONS;
    const direct = o.direct ? new DirectRunner({ fns, context, concurrency: o.concurrency, log }) : undefined;
    const resend = (m: RoutedMessage, delaySeconds: number) => {
      if (direct) return direct.enqueueLater(m, delaySeconds * 1000);
      const { sqs, queues } = queueing!;
      void scheduleRequeue(sqs, queues.requeue, m.msg, m.group, delaySeconds).catch((e: unknown) =>
        log.warn('resend failed', { error: (e as Error).message }),
      );
    };
    const onRelayMessages = o.hooks?.onRelayMessages;
    const relay = await startRelay({
      client: relayClient,
      ...(direct ? { sink: direct } : { sqs: queueing!.sqs, queues: queueing!.queues }),
      log,
      workloads: createWorkloadClientCache(relayClient),
      ...(onRelayMessages ? { onMessages: (msgs: RoutedMessage[]) => onRelayMessages(msgs, resend) } : {}),
    });
    cleanup.push(relay);
    const worker = queueing
      ? new Worker({
          sqs: queueing.sqs,
          fns,
          context,
          queues: queueing.queues,
          functions: FUNCTION_NAMES,
          concurrency: o.concurrency,
          waitTimeSeconds: 1,
          log,
        }).start()
      : undefined;
    if (worker) cleanup.push({ stop: () => worker.stop() });

    // 5. The sample (or the user's manifests) and the hosts.
    const size = sampleSize(o.machines, o.hosts);
    const objects = await loadManifests(o.manifests ?? SAMPLE_DIR);
    if (!o.manifests) {
      for (const obj of objects) {
        const spec = obj.spec as { replicas?: number } | undefined;
        if (obj.kind === 'KubeadmControlPlane' && spec) spec.replicas = size.controlPlane;
        if (obj.kind === 'MachineDeployment' && spec) spec.replicas = size.workers;
        // Every machine takes an address of each pool: a sample run larger than the pool gets more ranges.
        if (obj.kind === 'IPPool' && obj.spec) {
          const poolSpec = obj.spec as IPPoolSpec;
          poolSpec.pools = growPoolFor(poolSpec, size.controlPlane + size.workers).pools;
        }
      }
      if (simulate) await createPlannedHosts(admin, planHosts(size));
    }
    await o.hooks?.onSample?.(objects, admin);
    await applyObjects(admin, objects, NAMESPACE);
    const appliedAt = Date.now();
    const expected = o.manifests ? undefined : size.controlPlane + size.workers;
    say(`sample:         ${expected ?? 'your'} machines, ${o.manifests ? 'your' : size.hosts} hosts\n`);

    // 6. Progress until every machine is Ready (both sides) or the time runs out.
    const observer = new ProgressObserver(admin, workloadAdmin);
    cleanup.push(observer);
    const view = startProgressView(observer, started, out);
    const onProgress = o.hooks?.onProgress;
    if (onProgress) observer.onChange(() => onProgress(observer, admin));
    const allReady = () => {
      const tls = [...observer.timelines.values()].filter((t) => t.phase !== 'deleting');
      return (
        tls.length > 0 &&
        (expected === undefined || tls.length >= expected) &&
        tls.every((t) => t.phase === 'Ready')
      );
    };
    const reached = await waitFor(observer, allReady, o.timeoutSeconds * 1000);
    view.stop();
    const readyAt = Date.now();

    const summary = summarize({
      timelines: [...observer.timelines.values()],
      hosts: observer.hostCount(),
      wallMs: readyAt - started,
      convergeMs: readyAt - appliedAt,
      requests: productStats.requests,
      listedItems: productStats.listedItems,
      listedByResource: Object.fromEntries(productStats.listedByResource),
      writes: productStats.writes,
      eventWrites: [...productStats.byResource]
        .filter(([k]) => k.endsWith(' events') && !k.startsWith('get ') && !k.startsWith('list '))
        .reduce((n, [, v]) => n + v, 0),
      conflicts: productStats.conflicts,
      retries: worker?.stats.retried ?? direct?.runStats.retried ?? 0,
      deadLettered: worker
        ? worker.stats.malformed + worker.stats.deadLettered
        : (direct?.runStats.deadLettered ?? 0),
    });

    if (!reached) {
      say('\nNot every machine reached Ready in time. Stuck:');
      for (const tl of observer.timelines.values()) {
        if (tl.phase === 'Ready') continue;
        const objs = observer.objectsOf(tl.key);
        say(
          `  ${tl.key} (${tl.phase}): ${conditionsLine(objs.m3m)}${objs.host ? `; host ${tl.host}: ${conditionsLine(objs.host)}` : ''}`,
        );
      }
    }

    const snapshot = async (): Promise<StateDump> => {
      const dump: StateDump = { management: await listEverything(admin), workload: {} };
      if (workloadAdmin) dump.workload[`${NAMESPACE}/${CLUSTER}`] = await listEverything(workloadAdmin);
      return dump;
    };
    // With --scale-down the end state is (ideally) empty; the state at Ready is kept beside it.
    const atReady = o.dumpState && o.scaleDown && reached ? await snapshot() : undefined;

    // 7. Scale-down and the release check.
    let release: ReleaseFinding[] | undefined;
    if (reached && o.scaleDown) {
      say('\nscale-down: deleting every machine …');
      await scaleToZero(admin, objects);
      const gone = await waitFor(
        observer,
        () => [...observer.timelines.values()].every((t) => !observer.objectsOf(t.key).m3m),
        o.timeoutSeconds * 1000,
      );
      // The release cascade (claim -> Metal3Data -> IPClaims -> addresses, Secrets; hosts
      // deprovisioning) runs on after the last Metal3Machine is gone: re-check until it is clean
      // or the time runs out, so only what stays behind is reported.
      const settleUntil = Date.now() + o.timeoutSeconds * 1000;
      release = checkRelease(await listEverything(admin));
      while (release.length > 0 && Date.now() < settleUntil) {
        await new Promise((r) => setTimeout(r, 250));
        release = checkRelease(await listEverything(admin));
      }
      if (!gone) release.unshift({ object: 'Metal3Machines', problem: 'not all deleted in time' });
      say(
        release.length === 0
          ? 'release check: clean (no Metal3Data, data Secrets, IP claims or addresses left; every host available, no consumerRef, no finalizer stuck)'
          : 'release check FAILED:',
      );
      for (const f of release) say(`  ${f.object}: ${f.problem}`);
    }

    if (o.dumpState) {
      const dump = { ...(await snapshot()), ...(atReady ? { atReady } : {}) };
      await writeFile(o.dumpState, `${JSON.stringify(dump, null, 2)}\n`);
    }
    say(`\nsummary\n${formatSummary(summary)}`);
    if (o.summaryJson) {
      await writeFile(
        o.summaryJson,
        `${JSON.stringify({ ...summary, ...(release ? { releaseFindings: release } : {}) }, null, 2)}\n`,
      );
    }

    const ok = reached && (release === undefined || release.length === 0);
    if (o.serve && ok) {
      say(
        `\nserving; try: KUBECONFIG=${mgmtKubeconfig} kubectl get m3m,bmh -n ${NAMESPACE}   (Ctrl-C to stop)`,
      );
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
    }
    return {
      ok,
      summary,
      requests: productStats.snapshot(),
      timelines: [...observer.timelines.values()],
      ...(release ? { release } : {}),
      ...(o.rbac ? { rbacLog } : {}),
      message: ok
        ? 'every machine Ready'
        : reached
          ? 'release check failed'
          : `machines not Ready within ${o.timeoutSeconds}s`,
    };
  } finally {
    await stopAll();
  }
}

/** The local (or given) SQS server and the queues: FIFO per function + DLQs + the requeue queue. */
async function startQueues(o: DevOptions, cleanup: Stoppable[]) {
  const server = await startLocalSqs({ endpoint: o.sqsEndpoint });
  cleanup.push(server);
  const sqs = createSqsClient({ endpoint: server.endpoint });
  const queues = await ensureQueues(sqs, { prefix: o.queuePrefix ?? `dev${process.pid}-` });
  return { sqs, queues, endpoint: `${server.endpoint} (${server.backend})` };
}

/** Keeps every request of `users` (the server's own log is a bounded ring). */
function keepLog(server: ApiServerHandle, users: Set<string>, into: RequestLogEntry[]): void {
  const log = server.log;
  const record = log.record.bind(log);
  log.record = (e) => {
    record(e);
    if (users.has(e.user)) into.push(e);
  };
}

function waitFor(observer: ProgressObserver, done: () => boolean, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    if (done()) return resolve(true);
    const timer = setTimeout(() => finish(false), timeoutMs);
    const off = observer.onChange(() => {
      if (done()) finish(true);
    });
    function finish(v: boolean) {
      clearTimeout(timer);
      off();
      resolve(v);
    }
  });
}

/** The sample's hosts: created registered and available, then annotated as planned. */
async function createPlannedHosts(client: KubeClient, plans: HostPlan[]): Promise<void> {
  const byIndex = new Map(plans.map((p, i) => [i, p]));
  const hosts = await createSampleHosts(client, NAMESPACE, plans.length, {
    prefix: 'node',
    labels: (i) => byIndex.get(i)?.labels ?? {},
  });
  await Promise.all(
    hosts.map(async (h, i) => {
      const annotations = plans[i]?.annotations ?? {};
      if (Object.keys(annotations).length)
        await client.patch(R.BareMetalHost, NAMESPACE, h.metadata.name!, { metadata: { annotations } });
    }),
  );
}

/** Scale-down as a user would: replicas to zero on the control plane and the machine deployments. */
async function scaleToZero(
  client: KubeClient,
  objects: { kind?: string; metadata: { name?: string; namespace?: string } }[],
): Promise<void> {
  for (const obj of objects) {
    const t =
      obj.kind === 'KubeadmControlPlane'
        ? R.KubeadmControlPlane
        : obj.kind === 'MachineDeployment'
          ? R.MachineDeployment
          : undefined;
    if (!t) continue;
    await client.patch(envelopeOf(t), obj.metadata.namespace ?? NAMESPACE, obj.metadata.name!, {
      spec: { replicas: 0 },
    });
  }
}
