/**
 * Entry of the relay bundle (`dist/relay/index.mjs`, run by the relay Deployment): the same as
 * `metal3fn relay`, with the process's arguments.
 */
import { run } from './command.ts';

run(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`relay: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exitCode = 1;
  },
);
