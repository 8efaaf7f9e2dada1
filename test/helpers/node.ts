/** A Node script in a child process, run from the repository root: exit code and its output. */
import { spawn } from 'node:child_process';

const root = new URL('../../', import.meta.url).pathname;

/** `node <args>` with this Node (22); `out` is stdout and stderr as they came. */
export function runNode(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: root, env });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    child.on('exit', (code) => resolve({ code, out }));
  });
}
