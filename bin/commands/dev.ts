/**
 * `metal3fn dev` (= `npm start`): see infra/local/dev/run.ts. Exit code 0 only when the run
 * reached its goal (every machine Ready; with --scale-down also a clean release).
 */
import { parseLegacyProviderIds } from '../../shared/runtimes/context.ts';
import { parseCommandArgs } from '../../shared/runtimes/options.ts';

const HELP = `usage: metal3fn dev [options]

  --machines N          machines in the sample (a control plane of up to 3, the rest workers; default 5)
  --hosts N             BareMetalHosts (default machines + 3; some unhealthy or paused)
  --manifests DIR       apply these manifests instead of the sample (Machines are glued by the CAPI simulator)
  --kubeconfig F        use this cluster instead of the embedded API server (no simulators unless --simulators)
  --sqs-endpoint URL    use this SQS endpoint instead of the embedded SQS server
  --simulators          run the simulators even against real parts
  --sim-delay MS        simulated hardware time per host state change (default 300)
  --scale-down          after Ready, delete every machine and verify the release
  --dump-state F        write every object of both clusters as JSON at the end
  --summary-json F      write the summary as JSON
  --serve               keep running after Ready (print the kubeconfig for kubectl)
  --timeout S           give up after S seconds (default 120)
  --concurrency N       messages processed at once by the worker (default 16)
  --direct              no queues: the relay calls the functions in this process, keeping the
                        queues' per-group order, coalescing, deduplication, requeues and retries
                        (a baseline for the pipeline's cost; nothing is durable)
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
    },
    HELP,
  );
  if (typeof values === 'number') return values;
  const int = (name: string, fallback: number): number => {
    const raw = values[name];
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 0)
      throw new Error(`--${name} must be a non-negative integer, not '${raw}'`);
    return n;
  };
  const rbac = values.rbac as string | undefined;
  if (rbac !== undefined && rbac !== 'observe' && rbac !== 'enforce') {
    process.stderr.write(`metal3fn dev: --rbac must be observe or enforce, not '${rbac}'\n`);
    return 2;
  }
  if (values.direct && values['sqs-endpoint'] !== undefined) {
    process.stderr.write('metal3fn dev: --direct uses no queues; drop --sqs-endpoint\n');
    return 2;
  }
  try {
    const { runDev } = await import('../../infra/local/dev/run.ts');
    const result = await runDev({
      machines: int('machines', 5),
      hosts: values.hosts === undefined ? undefined : int('hosts', 0),
      manifests: values.manifests as string | undefined,
      kubeconfig: values.kubeconfig as string | undefined,
      sqsEndpoint: values['sqs-endpoint'] as string | undefined,
      simulators: values.simulators as boolean | undefined,
      simDelayMs: int('sim-delay', 300),
      scaleDown: Boolean(values['scale-down']),
      dumpState: values['dump-state'] as string | undefined,
      summaryJson: values['summary-json'] as string | undefined,
      serve: Boolean(values.serve),
      timeoutSeconds: int('timeout', 120),
      concurrency: int('concurrency', 16),
      legacyProviderIds: parseLegacyProviderIds(
        (values['legacy-provider-ids'] as string | undefined) ?? 'accept',
      ),
      rbac,
      direct: Boolean(values.direct),
    });
    if (result.rbacLog) {
      const all = [...result.rbacLog.management, ...result.rbacLog.workload];
      const users = [...new Set(all.map((e) => e.user))].sort();
      const refused = all.filter((e) => e.status === 401 || e.status === 403);
      process.stdout.write(
        `\nrbac (${rbac}): ${users.map((u) => `${u} ${all.filter((e) => e.user === u).length}`).join(', ')} requests; ${refused.length} refused\n`,
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
