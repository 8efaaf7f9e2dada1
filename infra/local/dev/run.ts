/**
 * `metal3fn dev`: the whole system on embedded defaults (or pointed at real parts), the sample
 * cluster built from the seeds or the user's manifests, live progress until every machine of the
 * run is Ready on both sides (the Metal3Machine and CAPI's Machine with its nodeRef), optionally a
 * scale-down of what the run applied with a release check, a state dump and a summary.
 *
 * Every Cluster gets an embedded workload API server and its `<cluster>-kubeconfig` Secret from the
 * Cluster API simulator once its infrastructure is ready (infra/local/workload/), unless the
 * manifests bring that Secret. Nothing is left on disk when the run ends: the kubeconfig files of
 * `--serve` live in a temporary folder removed on exit; `--kubeconfig-out F` writes one to keep.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
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
import { createWorkloadClientCache } from '../../../shared/kube/workload.ts';
import { createLogger, type Logger } from '../../../shared/observability/logger.ts';
import { ensureQueues } from '../../../shared/queue/ensure.ts';
import type { RoutedMessage } from '../../../shared/queue/message.ts';
import { scheduleRequeue } from '../../../shared/queue/requeue.ts';
import { createSqsClient } from '../../../shared/queue/sqs.ts';
import { buildContext } from '../../../shared/runtimes/context.ts';
import { DirectRunner } from '../../../shared/runtimes/direct.ts';
import type { FunctionTable } from '../../../shared/runtimes/dispatch.ts';
import { envValue } from '../../../shared/runtimes/env.ts';
import { Worker } from '../../../shared/runtimes/worker.ts';
import { type ApiServerHandle, type RequestLogEntry, startApiServer } from '../apiserver/index.ts';
import { assetPath } from '../assets.ts';
import { type LambdaSettings, loadLambdaSettings, uniformQueueSetting } from '../lambda-settings.ts';
import { applyManifests, ensureNamespace, installCrds, loadManifests } from '../manifests.ts';
import { createSampleHosts, startBmoSimulator } from '../sim/bmo.ts';
import { startCapiSimulator } from '../sim/capi.ts';
import { startKubeletSimulator } from '../sim/kubelet.ts';
import { startPlatformSimulator } from '../sim/platform.ts';
import { startLocalSqs } from '../sqs.ts';
import { type EmbeddedCluster, EmbeddedClusters } from '../workload/embedded.ts';
import { embeddedControlPlane, simulatorWorkloadClients } from '../workload/provider.ts';
import { ConflictAccount } from './conflicts.ts';
import { growPoolFor, type HostPlan, planHosts, sampleSize } from './hosts.ts';
import { type LambdaRuntime, startLambdaRuntime } from './lambda-runtime.ts';
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
import { checkRelease, type ReleaseFinding, type ReleaseScope } from './release-check.ts';
import {
  clustersOf,
  clustersWithOwnKubeconfig,
  expectedMachines,
  foreignHosts,
  scaleDownPlan,
} from './run-objects.ts';
import { formatSummary, type RunSummary, summarize } from './summary.ts';
import { TimelineTally } from './tally.ts';
import { startProgressView } from './view.ts';
import {
  createVmetalSampleHosts,
  expectedClaims,
  isVmetalObject,
  planVmetalHosts,
  runClaimPredicate,
  SAMPLE_VMETAL_DIR,
  vmetalScaleDown,
  vmetalScaleDownPlan,
} from './vmetal.ts';

export interface DevOptions {
  machines: number;
  hosts?: number | undefined;
  manifests?: string | undefined;
  kubeconfig?: string | undefined;
  /** Write the embedded management API server's kubeconfig here (kept after the run). */
  kubeconfigOut?: string | undefined;
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
  /**
   * The vMetal model beside the CAPM3 sample (infra/local/sample-vmetal/: a provider with two
   * overlapping node types, two tenant clusters, more hosts than claims, decoys). With
   * `--manifests`, vMetal objects in the manifests are run whether or not this is set.
   */
  vmetal?: boolean | undefined;
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
  /**
   * The functions as on AWS Lambda: the Lambda adapter behind an emulated SQS event source mapping
   * per function queue, with serverless.yml's batch size, maximum concurrency, visibility timeout
   * and receive limit (./lambda-runtime.ts); the summary carries invocations, billed GB-seconds,
   * cold starts and the queue-wait split.
   */
  lambda?: boolean | undefined;
  /** The relay's periodic re-list (default the relay's own, 600 s): the benchmarks shorten it. */
  relayResyncMs?: number | undefined;
}

/**
 * Hooks for the chaos suite and the benchmarks: they compose the same system as `npm start` and
 * bend it (faults, duplicates, crashes) without a second copy of the wiring.
 */
export interface DevHooks {
  /** The embedded management API server, once started (fault injection, request logs). */
  onServers?(management: ApiServerHandle | undefined): void | Promise<void>;
  /** Each embedded workload cluster, once its API server started and before anyone uses it. */
  onWorkloadCluster?(cluster: EmbeddedCluster): void | Promise<void>;
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
   * management cluster, the workload kubeconfig's identity on the workload clusters), unbounded.
   */
  rbacLog?: { management: RequestLogEntry[]; workload: RequestLogEntry[] };
}

const SAMPLE_DIR = assetPath('infra/local/sample');
/** The sample's namespace; a user's manifests without one go to `default`, as with kubectl. */
const SAMPLE_NAMESPACE = 'metal3';
const MANIFESTS_NAMESPACE = 'default';

type Stoppable = { stop(): unknown };

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;

export async function runDev(o: DevOptions): Promise<DevResult> {
  const out = o.out ?? process.stdout;
  const say = (line: string) => out.write(`${line}\n`);
  const log: Logger = createLogger({ level: envValue('LOG_LEVEL') ?? 'warn' });
  const started = Date.now();
  const cleanup: Stoppable[] = [];
  const stopAll = async () => {
    for (const c of cleanup.reverse()) await c.stop();
  };
  if (o.rbac && o.kubeconfig) throw new Error('rbac needs the embedded API servers (no --kubeconfig)');
  if (o.lambda && o.direct) throw new Error('lambda and direct are two runtimes: choose one');
  // The manifests first: a run that cannot apply them starts nothing.
  const defaultNamespace = o.manifests ? MANIFESTS_NAMESPACE : SAMPLE_NAMESPACE;
  const objects = [
    ...(await loadManifests(o.manifests ?? SAMPLE_DIR)),
    ...(o.vmetal && !o.manifests ? await loadManifests(SAMPLE_VMETAL_DIR) : []),
  ];
  // vMetal objects (ours, or the platform simulator's tenant declarations): claims to follow.
  const vmetalRun = objects.some(isVmetalObject);
  const size = o.manifests ? undefined : sampleSize(o.machines, o.hosts);

  try {
    // 1. Kubernetes: the embedded management API server, or a real cluster.
    let mgmtServer: ApiServerHandle | undefined;
    const rbacLog = { management: [] as RequestLogEntry[], workload: [] as RequestLogEntry[] };
    if (!o.kubeconfig) {
      mgmtServer = await startApiServer({
        faults: Boolean(o.hooks?.onServers),
        ...(o.rbac ? { rbac: managementRbac(o.rbac) } : {}),
      });
      cleanup.push(mgmtServer);
      if (o.rbac) keepLog(mgmtServer, new Set([FUNCTIONS_USER, RELAY_USER]), rbacLog.management);
    }
    const productStats = new RequestStats();
    // The functions and the relay each have their own client (their own identity under rbac).
    const productClient = (token: string) => {
      const opts = { stats: productStats, fieldManager: 'metal3-functions' };
      return mgmtServer
        ? KubeClient.fromString(mgmtServer.kubeconfig(o.rbac ? { token } : {}), opts)
        : KubeClient.fromFile(o.kubeconfig!, opts);
    };
    const product = productClient(FUNCTIONS_TOKEN);
    const relayClient = productClient(RELAY_TOKEN);
    const admin = mgmtServer
      ? KubeClient.fromString(mgmtServer.kubeconfig(), { fieldManager: 'metal3fn-dev' })
      : KubeClient.fromFile(o.kubeconfig!, { fieldManager: 'metal3fn-dev' });
    if (mgmtServer) await installCrds(admin);
    if (o.rbac === 'enforce') {
      await applyRbacFile(admin, RBAC_FILES.functions);
      await applyRbacFile(admin, RBAC_FILES.relay);
    }
    if (!o.manifests) await ensureNamespace(admin, SAMPLE_NAMESPACE);
    await o.hooks?.onServers?.(mgmtServer);
    say(`management API: ${mgmtServer ? `${mgmtServer.url} (embedded)` : o.kubeconfig}`);

    // 2. The workload clusters: one embedded API server per Cluster, started by the CAPI simulator.
    const simulate = o.simulators ?? !o.kubeconfig;
    // vMetal tenant clusters serve https: a kubeadm join pins their CA and finds cluster-info.
    const tenantKeys = new Set<string>();
    const workloads = new EmbeddedClusters({
      serverOptions: (ns, name) => ({
        faults: Boolean(o.hooks?.onWorkloadCluster),
        ...(o.rbac ? { rbac: workloadRbac(o.rbac) } : {}),
        ...(tenantKeys.has(`${ns}/${name}`) ? { tls: true } : {}),
      }),
      prepare: async (c) => {
        if (o.rbac === 'enforce') await applyRbacFile(c.admin, RBAC_FILES.workload);
        if (o.rbac) keepLog(c.server, new Set([WORKLOAD_USER]), rbacLog.workload);
        await o.hooks?.onWorkloadCluster?.(c);
      },
    });
    cleanup.push({ stop: () => workloads.stopAll() });
    workloads.onStarted((c) => say(`workload API:   ${c.server.url} (embedded, cluster ${c.key})`));

    // 3. SQS: the queues (FIFO per function + DLQs + the requeue queue); none when direct.
    const lambdaSettings = o.lambda ? await loadLambdaSettings() : undefined;
    const queueing = o.direct ? undefined : await startQueues(o, cleanup, lambdaSettings);
    say(
      queueing
        ? `SQS:            ${queueing.endpoint}${lambdaSettings ? ' (functions on emulated Lambda)' : ''}`
        : 'SQS:            none (direct: functions run in the relay)',
    );

    // 4. Simulators of the controllers we do not replace.
    const context = buildContext({
      client: product,
      log,
      config: { legacyProviderIds: o.legacyProviderIds },
      component: 'metal3-functions',
    });
    if (simulate) {
      // The simulators reach the workload clusters with their own clients: their requests are not the product's.
      const workloadOf = simulatorWorkloadClients(admin, workloads);
      const ownSecrets = clustersWithOwnKubeconfig(objects, defaultNamespace);
      cleanup.push(
        startBmoSimulator({
          client: admin,
          delays: { provisioningMs: o.simDelayMs, deprovisioningMs: o.simDelayMs },
          log,
        }),
      );
      cleanup.push(
        startCapiSimulator({
          client: admin,
          workloadClient: workloadOf,
          controlPlane: embeddedControlPlane(workloads, {
            token: o.rbac ? WORKLOAD_TOKEN : undefined,
            external: (ns, name) => ownSecrets.has(`${ns}/${name}`),
          }),
          log,
        }),
      );
      if (vmetalRun) {
        const controlPlane = embeddedControlPlane(workloads, {
          token: o.rbac ? WORKLOAD_TOKEN : undefined,
          external: (ns, name) => ownSecrets.has(`${ns}/${name}`),
        });
        cleanup.push(
          startPlatformSimulator({
            client: admin,
            controlPlane: {
              kubeconfig: (ns, name) => {
                tenantKeys.add(`${ns}/${name}`);
                return controlPlane.kubeconfig(ns, name);
              },
              release: controlPlane.release,
            },
            log,
          }),
        );
      }
      cleanup.push(
        startKubeletSimulator({
          management: admin,
          workloadClient: workloadOf,
          delayMs: Math.round(o.simDelayMs / 2),
          log,
        }),
      );
    }

    // 5. The product: the relay and workers for every function (or the functions in the relay).
    const conflicts = new ConflictAccount();
    cleanup.push({ stop: conflicts.observe(productStats) });
    const fns = conflicts.wrap(o.hooks?.wrapFunctions ? o.hooks.wrapFunctions(FUNCTIONS) : FUNCTIONS);
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
      ...(o.relayResyncMs
        ? { watch: { resyncMs: o.relayResyncMs }, workloadWatch: { resyncMs: o.relayResyncMs } }
        : {}),
      ...(onRelayMessages ? { onMessages: (msgs: RoutedMessage[]) => onRelayMessages(msgs, resend) } : {}),
    });
    cleanup.push(relay);
    let lambda: LambdaRuntime | undefined;
    if (queueing && lambdaSettings) {
      lambda = await startLambdaRuntime({
        sqs: queueing.sqs,
        newSqsClient: () => createSqsClient({ endpoint: queueing.serverEndpoint }),
        queues: queueing.queues,
        prefix: queueing.prefix,
        fns,
        settings: lambdaSettings,
        // A new instance builds its own client and context, as a Lambda's cold start does.
        newContext: (fn) =>
          buildContext({
            client: productClient(FUNCTIONS_TOKEN),
            log,
            config: { legacyProviderIds: o.legacyProviderIds },
            component: fn,
          }),
        log,
      });
      cleanup.push(lambda);
    }
    const worker =
      queueing && !lambda
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

    // 6. The sample (or the user's manifests) and the hosts.
    if (size) {
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
      if (simulate && o.vmetal) await createVmetalSampleHosts(admin, SAMPLE_NAMESPACE);
    }
    await o.hooks?.onSample?.(objects, admin);
    // Hosts someone else holds: before the run as they are, after it exactly so (release check).
    const hostsBefore = (await admin.list(R.BareMetalHost)).items;
    const { applied, ownerUidsFilled } = await applyManifests(admin, objects, defaultNamespace);
    const appliedUids = new Set(applied.map((a) => a.metadata.uid!).filter(Boolean));
    const foreign = [
      ...foreignHosts(hostsBefore, applied),
      ...foreignHosts(
        applied.filter((a) => a.kind === 'BareMetalHost'),
        applied,
      ),
    ];
    const appliedAt = Date.now();
    const expected = size ? size.controlPlane + size.workers : expectedMachines(applied);
    const claimsExpected = vmetalRun ? expectedClaims(applied) : 0;
    const claimsNote = vmetalRun ? `, ${plural(claimsExpected, 'NodeClaim')}` : '';
    say(
      size
        ? `sample:         ${expected} machines${claimsNote}, ${size.hosts + (o.vmetal && simulate ? planVmetalHosts().length : 0)} hosts\n`
        : `manifests:      ${applied.length} objects applied${ownerUidsFilled ? ` (${ownerUidsFilled} ownerReference uids filled in)` : ''}; ${expected} machines${claimsNote} expected; clusters ${clustersOf(applied).sort().join(', ') || 'none'}${foreign.length ? `; ${plural(foreign.length, 'host')} held by others left alone` : ''}\n`,
    );

    // 7. Progress until every machine of the run is Ready (both sides) or the time runs out.
    const isRunClaim = runClaimPredicate(applied);
    const observer = new ProgressObserver(admin, {
      applied: appliedUids,
      ...(vmetalRun ? { claims: { isRunClaim } } : {}),
    });
    cleanup.push(observer);
    cleanup.push({ stop: workloads.onStarted((c) => observer.addWorkload(c.key, c.admin)) });
    const view = startProgressView(observer, started, out);
    const onProgress = o.hooks?.onProgress;
    if (onProgress) observer.onChange(() => onProgress(observer, admin));
    // Live timelines (not deleting) by model and readiness.
    const readiness = new TimelineTally(observer, (key) => {
      const t = observer.timelines.get(key);
      if (!t || t.phase === 'deleting') return undefined;
      return `${t.model === 'vmetal' ? 'claim' : 'machine'} ${t.phase === 'Ready' ? 'ready' : 'not ready'}`;
    });
    const allReady = (changed?: ReadonlySet<string>) => {
      if (changed) readiness.update(changed);
      const count = (c: string) => readiness.count(c);
      const machines = count('machine ready') + count('machine not ready');
      const claims = count('claim ready') + count('claim not ready');
      return (
        machines >= (claimsExpected > 0 ? expected : Math.max(1, expected)) &&
        claims >= claimsExpected &&
        count('machine not ready') + count('claim not ready') === 0
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
      retries: worker?.stats.retried ?? direct?.runStats.retried ?? lambda?.outcomes.retry ?? 0,
      deadLettered: worker
        ? worker.stats.malformed + worker.stats.deadLettered
        : (direct?.runStats.deadLettered ?? lambda?.outcomes['dead-letter'] ?? 0),
    });
    if (lambda) summary.lambda = lambda.figures(summary.ready);
    const coalesced = worker?.stats.coalesced ?? lambda?.outcomes.coalesced;
    if (coalesced !== undefined) summary.coalesced = coalesced;
    summary.relayRelists = relay.relists();
    summary.relayResyncs = relay.resyncs();
    summary.conflictsBy = conflicts.byKey();
    summary.refusedBy = conflicts.refusedByKey();
    const atReadyMark = lambda?.mark();
    // Written now and again at the end: a long run stopped during its scale-down keeps its figures.
    if (o.summaryJson) await writeSummaryJson(o.summaryJson, summary, { phase: 'ready' });

    if (!reached) {
      const tls = [...observer.timelines.values()];
      say(
        `\nNot every machine reached Ready in time (${tls.filter((t) => t.phase === 'Ready').length} of ${expected + claimsExpected}). Stuck:`,
      );
      for (const tl of tls) {
        if (tl.phase === 'Ready') continue;
        const objs = observer.objectsOf(tl.key);
        say(
          `  ${tl.key} (${tl.phase}): ${conditionsLine(objs.m3m ?? objs.claim)}${objs.host ? `; host ${tl.host}: ${conditionsLine(objs.host)}` : ''}`,
        );
      }
      const claimTls = tls.filter((t) => t.model === 'vmetal').length;
      if (tls.length - claimTls < expected)
        say(`  ${expected - (tls.length - claimTls)} machines not created yet`);
      if (claimTls < claimsExpected) say(`  ${claimsExpected - claimTls} NodeClaims not created yet`);
    }

    const snapshot = async (): Promise<StateDump> => {
      const dump: StateDump = { management: await listEverything(admin), workload: {} };
      for (const c of workloads.list()) dump.workload[c.key] = await listEverything(c.admin);
      return dump;
    };
    // With --scale-down the end state is (ideally) empty of the run's machines; the state at Ready
    // is kept beside it, and is what the release check follows ownership through.
    const atReady = (o.dumpState || o.scaleDown) && reached ? await snapshot() : undefined;

    // 8. Scale-down of what this run applied, and the release check.
    let release: ReleaseFinding[] | undefined;
    if (reached && o.scaleDown) {
      const plan = scaleDownPlan(applied);
      const vplan = vmetalScaleDownPlan(applied);
      const tenants = vplan.tenants.map((t) => `tenant ${t.namespace}/${t.name}`);
      say(
        `\nscale-down: ${[...plan.scale.map((s) => `${s.kind} ${s.namespace}/${s.name}`), ...tenants].join(', ') || 'nothing'} to 0; deleting ${[...plan.remove.map((m) => `Machine ${m.namespace}/${m.name}`), ...vplan.claims.map((c) => `NodeClaim ${c.namespace}/${c.name}`)].join(', ') || 'no Machine'} …`,
      );
      await scaleDown(admin, plan);
      await vmetalScaleDown(admin, vplan);
      // The run's timelines whose object is still there (a refreshed key may be no timeline of the run's).
      const standing = new TimelineTally(observer, (key) =>
        observer.timelines.has(key) && observer.exists(key) ? 'exists' : undefined,
      );
      const gone = await waitFor(
        observer,
        (changed) => {
          if (changed) standing.update(changed);
          return standing.count('exists') === 0;
        },
        o.timeoutSeconds * 1000,
      );
      // The release cascade (claim -> Metal3Data -> IPClaims -> addresses, Secrets; hosts
      // deprovisioning) runs on after the last Metal3Machine is gone: re-check until it is clean
      // or the time runs out, so only what stays behind is reported.
      const scope: ReleaseScope = {
        applied: appliedUids,
        atReady: atReady!.management,
        foreignHosts: foreign,
        isRunClaim,
        hostsBefore,
      };
      const settleUntil = Date.now() + o.timeoutSeconds * 1000;
      release = checkRelease(await listEverything(admin), scope);
      while (release.length > 0 && Date.now() < settleUntil) {
        await new Promise((r) => setTimeout(r, 250));
        release = checkRelease(await listEverything(admin), scope);
      }
      if (!gone)
        release.unshift({
          object: vmetalRun ? 'Metal3Machines and NodeClaims' : 'Metal3Machines',
          problem: 'not all deleted in time',
        });
      say(
        release.length === 0
          ? `release check: clean (no Metal3Data, data Secrets, IP claims or addresses of the run's machines${vmetalRun ? ' and NodeClaims' : ''} left; every host they held available, no consumerRef, no finalizer stuck${vmetalRun ? ', network annotations as before' : ''}${foreign.length ? `; ${plural(foreign.length, 'host')} held by others unchanged` : ''})`
          : 'release check FAILED:',
      );
      for (const f of release) say(`  ${f.object}: ${f.problem}`);
      // What the release cost on Lambda, per machine released (the other half of a machine's churn).
      if (lambda && atReadyMark) summary.lambdaRelease = lambda.figures(summary.ready, atReadyMark);
    }

    if (o.dumpState) {
      const dump = { ...(await snapshot()), ...(atReady && o.scaleDown ? { atReady } : {}) };
      await writeFile(o.dumpState, `${JSON.stringify(dump, null, 2)}\n`);
    }
    say(`\nsummary\n${formatSummary(summary)}`);
    if (o.summaryJson) {
      await writeSummaryJson(o.summaryJson, summary, {
        phase: 'end',
        ...(release ? { releaseFindings: release } : {}),
        // relayRelists is taken at Ready; these include the scale-down, when watchers fall behind.
        relayRelistsWholeRun: relay.relists(),
        relayWatchesWholeRun: relay.watches(),
        // Where the requests went (`<verb> <resource>`), for the fleet bench's split by resource.
        requestsByResource: Object.fromEntries(productStats.byResource),
      });
    }

    const ok = reached && (release === undefined || release.length === 0);
    if (mgmtServer && o.kubeconfigOut) {
      await mgmtServer.writeKubeconfig(o.kubeconfigOut);
      say(`kubeconfig:     ${o.kubeconfigOut} (management API; kept)`);
    }
    if (o.serve && ok) {
      await serve(o, say, mgmtServer, workloads, cleanup);
      // What the functions did while the fleet stood Ready (the relay's resyncs): the steady cost.
      if (lambda && atReadyMark && !o.scaleDown)
        summary.lambdaServing = lambda.figures(summary.ready, atReadyMark);
    }
    return {
      ok,
      summary,
      requests: productStats.snapshot(),
      timelines: [...observer.timelines.values()],
      ...(release ? { release } : {}),
      ...(o.rbac ? { rbacLog } : {}),
      message: ok
        ? `every machine Ready${claimsExpected > 0 ? ' and every NodeClaim Available' : ''}`
        : reached
          ? 'release check failed'
          : `machines not Ready within ${o.timeoutSeconds}s`,
    };
  } finally {
    await stopAll();
  }
}

/** `--summary-json`: the summary and what is added to it; `phase` says whether the run had ended. */
async function writeSummaryJson(
  file: string,
  summary: RunSummary,
  more: { phase: 'ready' | 'end' } & Record<string, unknown>,
): Promise<void> {
  await writeFile(file, `${JSON.stringify({ ...summary, ...more }, null, 2)}\n`);
}

/**
 * Keeps serving until SIGINT/SIGTERM, with kubeconfig files for kubectl in a temporary folder that
 * goes when the run ends (with the servers they point at).
 */
async function serve(
  o: DevOptions,
  say: (line: string) => void,
  mgmtServer: ApiServerHandle | undefined,
  workloads: EmbeddedClusters,
  cleanup: Stoppable[],
): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'metal3fn-dev-'));
  cleanup.push({ stop: () => rm(dir, { recursive: true, force: true }) });
  const management = o.kubeconfigOut ?? (mgmtServer ? join(dir, 'management.kubeconfig') : o.kubeconfig);
  if (mgmtServer && !o.kubeconfigOut) await mgmtServer.writeKubeconfig(management!);
  say(`\nserving; try:  KUBECONFIG=${management} kubectl get clusters,machines,m3m,bmh -A`);
  for (const c of workloads.list()) {
    const file = join(dir, `workload-${c.namespace}-${c.name}.kubeconfig`);
    await c.server.writeKubeconfig(file);
    say(`  workload ${c.key}:  KUBECONFIG=${file} kubectl get nodes`);
  }
  say('(Ctrl-C to stop; these kubeconfig files go with the run)');
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
}

/** The local (or given) SQS server and the queues: FIFO per function + DLQs + the requeue queue. */
async function startQueues(o: DevOptions, cleanup: Stoppable[], lambda?: LambdaSettings) {
  const server = await startLocalSqs({ endpoint: o.sqsEndpoint });
  cleanup.push(server);
  const sqs = createSqsClient({ endpoint: server.endpoint });
  const prefix = o.queuePrefix ?? `dev${process.pid}-`;
  // On Lambda the queues are serverless.yml's (visibility timeout, receive limit).
  const queues = await ensureQueues(sqs, {
    prefix,
    ...(lambda
      ? {
          visibilityTimeoutSeconds: uniformQueueSetting(lambda, FUNCTION_NAMES, 'visibilityTimeoutSeconds'),
          maxReceiveCount: uniformQueueSetting(lambda, FUNCTION_NAMES, 'maxReceiveCount'),
        }
      : {}),
  });
  return {
    sqs,
    queues,
    prefix,
    serverEndpoint: server.endpoint,
    endpoint: `${server.endpoint} (${server.backend}${server.fauxqs === 'plain' ? ', SQS_FAUXQS=plain' : ''})`,
  };
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

/** Until `done` holds (asked again with the timelines each turn refreshed) or the time runs out. */
function waitFor(
  observer: ProgressObserver,
  done: (changed?: ReadonlySet<string>) => boolean,
  timeoutMs: number,
): Promise<boolean> {
  return new Promise((resolve) => {
    if (done()) return resolve(true);
    const timer = setTimeout(() => finish(false), timeoutMs);
    const off = observer.onChange((changed) => {
      if (done(changed)) finish(true);
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
  const hosts = await createSampleHosts(client, SAMPLE_NAMESPACE, plans.length, {
    prefix: 'node',
    labels: (i) => byIndex.get(i)?.labels ?? {},
  });
  await Promise.all(
    hosts.map(async (h, i) => {
      const annotations = plans[i]?.annotations ?? {};
      if (Object.keys(annotations).length)
        await client.patch(R.BareMetalHost, SAMPLE_NAMESPACE, h.metadata.name!, {
          metadata: { annotations },
        });
    }),
  );
}

/** Scale-down as a user would, of what the run applied only: replicas to zero, own Machines deleted. */
async function scaleDown(client: KubeClient, plan: ReturnType<typeof scaleDownPlan>): Promise<void> {
  for (const s of plan.scale)
    await client.patch(envelopeOf(R[s.kind]), s.namespace, s.name, { spec: { replicas: 0 } });
  for (const m of plan.remove) await client.delete(R.Machine, m.namespace, m.name);
}
