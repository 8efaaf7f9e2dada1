/**
 * `metal3fn dev --direct` (the queue-less baseline the benchmark compares the pipeline with) as a
 * user runs it: the CLI in a child process, no SQS at all, every machine Ready on its own host,
 * then a scale-down whose release check is clean.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { runMetal3fn } from '../helpers/cli.ts';

it('runs the whole system without queues and releases everything', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'metal3fn-direct-'));
  const summaryFile = join(dir, 'summary.json');
  const { code, out } = await runMetal3fn([
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
  const { code, out } = await runMetal3fn(['dev', '--direct', '--sqs-endpoint', 'http://127.0.0.1:9']);
  expect(code).toBe(2);
  expect(out).toContain('--direct uses no queues');
});
