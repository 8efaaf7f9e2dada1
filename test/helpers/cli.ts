/** `metal3fn` from the checkout in a child process, as a user runs it: exit code and its output. */
import { spawn } from 'node:child_process';

const root = new URL('../../', import.meta.url).pathname;

/** Like runMetal3fn, with stdout and stderr apart (for commands whose stdout must be exact). */
export function runMetal3fnSplit(
  args: string[],
  opts: { env?: Record<string, string> } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    const child = spawn(process.execPath, ['bin/metal3fn.ts', ...args], {
      cwd: root,
      env: { ...process.env, CI: 'true', ...opts.env },
    });
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * Runs `node bin/metal3fn.ts <args>` in the repository; `out` is stdout and stderr as they came.
 * `env` is added to this process's environment (e.g. a TMPDIR of its own).
 */
export function runMetal3fn(
  args: string[],
  opts: { env?: Record<string, string> } = {},
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    let out = '';
    const child = spawn(process.execPath, ['bin/metal3fn.ts', ...args], {
      cwd: root,
      env: { ...process.env, CI: 'true', ...opts.env },
    });
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    child.on('exit', (code) => resolve({ code, out }));
  });
}
