/**
 * Host claim benchmark: N machines claim hosts among M with W concurrent workers calling the
 * selectHost core in-process against the embedded API server (no faults).
 *
 *   node test/bench/host-claim.ts [--machines 200] [--hosts 10000] [--workers 16]
 *
 * Reports claim conflicts per machine (409s on BareMetalHost writes; goal <= 0.1), all conflicts,
 * API requests per association (requests the cores made / machines), list requests and the
 * number of objects they returned per association, and throughput.
 */
import { parseArgs } from 'node:util';
import { createSampleHosts } from '../../infra/local/sim/bmo-hosts.ts';
import { R } from '../../shared/api/resources.ts';
import { KubeClient } from '../../shared/kube/client.ts';
import { KubeApiError } from '../../shared/kube/errors.ts';
import { startTestCluster } from '../helpers/cluster.ts';
import { createCluster, createMachinePair, makeCtx, NS, selectHost } from '../helpers/hosts.ts';
import { runWorkers } from '../helpers/workers.ts';

export interface HostClaimBenchOptions {
  machines?: number;
  hosts?: number;
  workers?: number;
}

export async function benchHostClaim(opts: HostClaimBenchOptions = {}): Promise<Record<string, number>> {
  const machines = opts.machines ?? 200;
  const hosts = opts.hosts ?? 10_000;
  const workers = opts.workers ?? 16;
  const tc = await startTestCluster();
  try {
    const setupStart = performance.now();
    await createCluster(tc.client);
    await createSampleHosts(tc.client, NS, hosts, { bmcSecrets: false, concurrency: 32 });
    const names = Array.from({ length: machines }, (_, i) => `bench-${String(i).padStart(4, '0')}`);
    await runWorkers(names, 32, async (n) => void (await createMachinePair(tc.client, n)));
    const setupSeconds = (performance.now() - setupStart) / 1000;

    const client = KubeClient.fromString(tc.kubeconfig);
    const ctx = makeCtx(client);
    tc.server.log.reset();
    let todo = names;
    let passes = 0;
    let retries = 0;
    const started = performance.now();
    for (let round = 0; todo.length > 0 && round < 50; round++) {
      const again: string[] = [];
      await runWorkers(todo, workers, async (n) => {
        passes++;
        try {
          const r = await selectHost(ctx, n);
          if (r.kind === 'requeue') again.push(n);
          else if (r.kind === 'terminal') throw new Error(`${n}: ${r.message}`);
        } catch (e) {
          if (!(e instanceof KubeApiError) || !e.transient) throw e;
          retries++;
          again.push(n);
        }
      });
      todo = again;
    }
    const seconds = (performance.now() - started) / 1000;
    if (todo.length > 0) throw new Error(`${todo.length} machines not associated`);

    const entries = tc.server.log.entries;
    const claimConflicts = entries.filter((e) => e.status === 409 && e.resource === 'baremetalhosts').length;
    const m3ms = (await tc.client.list(R.Metal3Machine, NS)).items;
    const associated = m3ms.filter((m) => m.metadata.annotations?.['metal3.io/BareMetalHost']).length;
    const snap = client.stats.snapshot();
    const hostsRead = entries.filter((e) => e.verb === 'list' && e.resource === 'baremetalhosts').length;
    return {
      machines,
      hosts,
      workers,
      associated,
      seconds: round3(seconds),
      associationsPerSecond: round3(associated / seconds),
      claimConflictsPerMachine: round3(claimConflicts / machines),
      conflictsPerMachine: round3(snap.conflicts / machines),
      requestsPerAssociation: round3(snap.requests / associated),
      writesPerAssociation: round3(snap.writes / associated),
      hostListRequestsPerAssociation: round3(hostsRead / associated),
      // Objects the cores' lists returned (ADR 022: a page of candidates, not the fleet).
      objectsListedPerAssociation: round3(snap.listedItems / associated),
      passesPerMachine: round3(passes / machines),
      transientRetries: retries,
      setupSeconds: round3(setupSeconds),
    };
  } finally {
    await tc.stop();
  }
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;

if (import.meta.main) {
  const { values } = parseArgs({
    options: { machines: { type: 'string' }, hosts: { type: 'string' }, workers: { type: 'string' } },
  });
  const result = await benchHostClaim({
    machines: values.machines ? Number(values.machines) : undefined,
    hosts: values.hosts ? Number(values.hosts) : undefined,
    workers: values.workers ? Number(values.workers) : undefined,
  });
  console.log(JSON.stringify(result, null, 2));
  console.log(
    `claim conflicts per machine: ${result.claimConflictsPerMachine} (goal <= 0.1); API requests per association: ${result.requestsPerAssociation}`,
  );
}
