#!/usr/bin/env node
/**
 * metal3fn for production: the container image's entry (`npm run image`, docs/adr/015). The same
 * command line as bin/metal3fn.ts without the local commands (dev, apiserver), so its bundle holds
 * no embedded API server, SQS server or simulators.
 */
import { runCli } from './cli/main.ts';
import { PRODUCTION_COMMANDS } from './cli/production.ts';

runCli(PRODUCTION_COMMANDS);
