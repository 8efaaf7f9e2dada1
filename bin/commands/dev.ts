/**
 * `metal3fn dev` (= `npm start`): see infra/local/dev/run.ts. Exit code 0 only when the run
 * reached its goal (every machine Ready, every NodeClaim Available; with --scale-down also a clean release); 2 for options
 * that cannot run (checked before anything starts), 1 for a run that failed.
 */
import { OptionError, parseDevOptions } from '../../infra/local/dev/options.ts';
import { parseCommandArgs } from '../../shared/runtimes/options.ts';

const HELP = `usage: metal3fn dev [options]

  --machines N          machines in the sample (a control plane of up to 3, the rest workers; default 5)
  --hosts N             BareMetalHosts (default machines + 3; some unhealthy or paused)
  --manifests PATH      apply these manifests (a file or a directory, in any order) instead of the
                        sample; every Cluster gets an embedded workload API server and its
                        <cluster>-kubeconfig Secret unless the manifests bring that Secret
  --vmetal              run the vMetal model beside the CAPM3 sample, on the same hosts: a NodeProvider
                        with two overlapping node types, two tenant clusters (p-alpha, p-beta) whose
                        NodeClaims the platform simulator makes, more hosts than claims, decoys
                        (infra/local/sample-vmetal/); every claim Available as well. With
                        --manifests, vMetal objects in them run without this flag
  --kubeconfig F        use this cluster instead of the embedded API server (no simulators unless --simulators)
  --kubeconfig-out F    write the embedded management API server's kubeconfig to F (kept after the run)
  --sqs-endpoint URL    use this SQS endpoint instead of the embedded SQS server
  --simulators          run the simulators even against real parts
  --sim-delay MS        simulated hardware time per host state change (default 300)
  --scale-down          after Ready, remove what this run applied (KubeadmControlPlanes,
                        MachineDeployments and unowned MachineSets to zero replicas, unowned Machines
                        deleted; tenant clusters' node counts to zero, NodeClaims applied deleted),
                        wait for the release and check it
  --dump-state F        write every object of the management and workload clusters as JSON at the end
  --summary-json F      write the summary as JSON
  --serve               keep running after Ready (prints the kubeconfig for kubectl; removed on exit)
  --timeout S           give up after S seconds (default 120)
  --concurrency N       messages processed at once by the worker (default 16)
  --direct              no queues: the relay calls the functions in this process, keeping the
                        queues' per-group order, coalescing, deduplication, requeues and retries
                        (a baseline for the pipeline's cost; nothing is durable)
  --runtime worker|lambda|direct  how the functions run (default worker: the queue worker);
                        lambda: the Lambda adapter behind an emulated SQS event source mapping per
                        queue with serverless.yml's batch size, concurrency, visibility timeout and
                        receive limit (the summary adds invocations, billed GB-s, cold starts and
                        queue waits); direct: as --direct
  --legacy-provider-ids accept|refuse   (default accept)
  --rbac observe|enforce  the functions, the relay and the workload kubeconfig get their own
                        identities on the embedded API servers: observe logs who did what,
                        enforce applies exactly the shipped roles (infra/deploy/common/rbac-*.yaml)
`;

export async function run(argv: string[]): Promise<number> {
  const values = parseCommandArgs(
    'dev',
    argv,
    {
      machines: { type: 'string' },
      hosts: { type: 'string' },
      manifests: { type: 'string' },
      kubeconfig: { type: 'string' },
      'kubeconfig-out': { type: 'string' },
      'sqs-endpoint': { type: 'string' },
      simulators: { type: 'boolean' },
      'sim-delay': { type: 'string' },
      'scale-down': { type: 'boolean' },
      'dump-state': { type: 'string' },
      'summary-json': { type: 'string' },
      serve: { type: 'boolean' },
      timeout: { type: 'string' },
      concurrency: { type: 'string' },
      'legacy-provider-ids': { type: 'string' },
      rbac: { type: 'string' },
      direct: { type: 'boolean' },
      runtime: { type: 'string' },
      vmetal: { type: 'boolean' },
    },
    HELP,
  );
  if (typeof values === 'number') return values;
  let options: ReturnType<typeof parseDevOptions>;
  try {
    options = parseDevOptions(values);
  } catch (e) {
    if (!(e instanceof OptionError)) throw e;
    process.stderr.write(`metal3fn dev: ${e.message}\n`);
    return 2;
  }
  try {
    const { runDev } = await import('../../infra/local/dev/run.ts');
    const result = await runDev(options);
    if (result.rbacLog) {
      const all = [...result.rbacLog.management, ...result.rbacLog.workload];
      const users = [...new Set(all.map((e) => e.user))].sort();
      const refused = all.filter((e) => e.status === 401 || e.status === 403);
      process.stdout.write(
        `\nrbac (${options.rbac}): ${users.map((u) => `${u} ${all.filter((e) => e.user === u).length}`).join(', ')} requests; ${refused.length} refused\n`,
      );
      for (const e of refused.slice(0, 20))
        process.stdout.write(`  ${e.user}: ${e.verb} ${e.resource} ${e.namespace ?? ''}/${e.name ?? ''}\n`);
    }
    process.stdout.write(`\n${result.ok ? 'OK' : 'FAILED'}: ${result.message}\n`);
    return result.ok ? 0 : 1;
  } catch (e) {
    process.stderr.write(`metal3fn dev: ${(e as Error).message}\n`);
    return 1;
  }
}
