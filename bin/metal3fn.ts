#!/usr/bin/env node
/**
 * metal3fn: the command line (DESIGN.md §4), every command: the production ones
 * (bin/cli/production.ts) and the local ones on embedded parts. bin/cli/main.ts dispatches.
 */
import { runCli } from './cli/main.ts';
import { PRODUCTION_COMMANDS } from './cli/production.ts';
import { filterSqliteExperimentalWarning } from './warnings.ts';

filterSqliteExperimentalWarning();

runCli({
  dev: {
    summary: 'embedded API servers + SQS + simulators + relay + workers, sample cluster, live progress',
    load: () => import('./commands/dev.ts'),
  },
  apiserver: {
    summary: 'the embedded Kubernetes API server alone',
    load: () => import('./commands/apiserver.ts'),
  },
  ...PRODUCTION_COMMANDS,
});
