/**
 * `metal3fn dev --direct` (the queue-less baseline the benchmark compares the pipeline with) as a
 * user runs it: the CLI in a child process, no SQS at all, every machine Ready on its own host,
 * then a scale-down whose release check is clean.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';

const root = new URL('../../', import.meta.url).pathname;

function runCli(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    let out = '';
    const child = spawn(process.execPath, ['bin/metal3fn.ts', ...args], {
      cwd: root,
      env: { ...process.env, CI: 'true' },
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

it('runs the whole system without queues and releases everything', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'metal3fn-direct-'));
  const summaryFile = join(dir, 'summary.json');
  const { code, out } = await runCli([
    'dev',
    '--direct',
    '--machines',
    '3',
    '--sim-delay',
    '50',
    '--scale-down',
    '--summary-json',
    summaryFile,
    '--timeout',
    '90',
  ]);
  expect(out).toMatch(/SQS: +none/);
  expect(out).toContain('release check: clean');
  expect(code).toBe(0);
  const summary = JSON.parse(await readFile(summaryFile, 'utf8')) as Record<string, number>;
  expect(summary).toMatchObject({ machines: 3, ready: 3, hostsUsed: 3, deadLettered: 0 });
}, 150_000);

it('refuses --direct with --sqs-endpoint', async () => {
  const { code, out } = await runCli(['dev', '--direct', '--sqs-endpoint', 'http://127.0.0.1:9']);
  expect(code).toBe(2);
  expect(out).toContain('--direct uses no queues');
});
