#!/usr/bin/env node
/**
 * metal3fn: the command line (DESIGN.md §4). Each command lives in bin/commands/<name>.ts and
 * exports `run(argv): Promise<number>`; it is imported only when asked for, so one command's
 * dependencies never slow another's start.
 */
import { filterSqliteExperimentalWarning } from './warnings.ts';

filterSqliteExperimentalWarning();

const COMMANDS: Record<string, string> = {
  dev: 'dev.ts',
  apiserver: 'apiserver.ts',
  relay: 'relay.ts',
  worker: 'worker.ts',
  replay: 'replay.ts',
  render: 'render.ts',
  'migrate-provider-ids': 'migrate-provider-ids.ts',
  http: 'http.ts',
};

const USAGE = `usage: metal3fn <command> [options]

commands:
  dev                    embedded API servers + SQS + simulators + relay + workers, sample cluster, live progress
  apiserver              the embedded Kubernetes API server alone
  relay                  watch the cluster(s) and send key messages to the function queues
  worker                 long-poll the queues and run the functions
  http                   serve the functions over HTTP (CloudEvents, for Knative)
  replay                 run one function on one key, on a saved event, or drain a DLQ back
  render                 offline preview of metaData and networkData for a template
  migrate-provider-ids   plan (and with --apply roll) machines off legacy metal3://<uid> IDs

run 'metal3fn <command> --help' for a command's options`;

async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  if (!cmd || cmd === '--help' || cmd === '-h' || cmd === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return cmd ? 0 : 2;
  }
  const file = COMMANDS[cmd];
  if (!file) {
    process.stderr.write(`metal3fn: unknown command '${cmd}'\n\n${USAGE}\n`);
    return 2;
  }
  const mod = (await import(`./commands/${file}`)) as { run(argv: string[]): Promise<number> };
  return mod.run(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`metal3fn: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
