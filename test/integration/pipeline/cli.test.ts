/**
 * The commands as a user runs them (a child process on Node 22): replay of a key and of a saved
 * event against the embedded API server, DLQ redrive against the SQS server, and a worker that
 * stops cleanly on SIGTERM.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelopeOf, R } from '../../../shared/api/resources.ts';
import { ensureQueues, type QueueUrls } from '../../../shared/queue/ensure.ts';
import { startTestCluster, type TestCluster } from '../../helpers/cluster.ts';
import { envelope } from '../../helpers/messages.ts';
import { startSqs } from '../../helpers/sqs.ts';

const ROOT = new URL('../../../', import.meta.url).pathname;
let cluster: TestCluster;
let local: Awaited<ReturnType<typeof startSqs>>;
let queues: QueueUrls;
let dir: string;
let kubeconfig: string;

function metal3fn(
  args: string[],
  opts: { signalOn?: string; signalDelayMs?: number } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin/metal3fn.ts'), ...args], {
      cwd: ROOT,
      env: { ...process.env, AWS_ENDPOINT_URL_SQS: '', LOG_LEVEL: 'info' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    let signalled = false;
    child.stderr.on('data', (d) => {
      stderr += d;
      if (opts.signalOn && !signalled && stderr.includes(opts.signalOn)) {
        signalled = true;
        setTimeout(() => child.kill('SIGTERM'), opts.signalDelayMs ?? 500);
      }
    });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

beforeAll(async () => {
  cluster = await startTestCluster();
  local = await startSqs();
  queues = await ensureQueues(local.sqs, { prefix: 'cli-' });
  dir = await mkdtemp(join(tmpdir(), 'metal3fn-cli-'));
  kubeconfig = join(dir, 'kubeconfig');
  await writeFile(kubeconfig, cluster.kubeconfig);
});
afterAll(async () => {
  local?.sqs.destroy();
  await local?.stop();
  await cluster?.stop();
});

describe('metal3fn CLI (pipeline commands)', () => {
  it('prints help for each command', async () => {
    for (const cmd of ['relay', 'worker', 'http', 'replay']) {
      const r = await metal3fn([cmd, '--help']);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`metal3fn ${cmd}`);
    }
    expect((await metal3fn(['worker', '--bogus'])).code).toBe(2);
  });

  it('replays one key in-process and prints the outcome', async () => {
    await cluster.client.create(R.Metal3Cluster, {
      metadata: { name: 'c-replay', namespace: 'metal3' },
      spec: {},
    });
    const r = await metal3fn([
      'replay',
      'reconcileCluster',
      'metal3/c-replay',
      '--kubeconfig',
      kubeconfig,
      '--no-events',
    ]);
    const results = JSON.parse(r.stdout) as { function: string; key: string; outcome: string }[];
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ function: 'reconcileCluster', key: 'metal3/c-replay' });
    expect(['done', 'requeue', 'terminal', 'retry']).toContain(results[0]!.outcome);
  });

  it('replays a saved watch event through the routing table', async () => {
    const file = join(dir, 'event.json');
    await writeFile(
      file,
      JSON.stringify({
        type: 'MODIFIED',
        object: {
          apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
          kind: 'Metal3Cluster',
          metadata: { name: 'c-replay', namespace: 'metal3' },
          spec: {},
        },
      }),
    );
    const r = await metal3fn(['replay', '--event', file, '--kubeconfig', kubeconfig, '--no-events']);
    const results = JSON.parse(r.stdout) as { function: string; key: string }[];
    expect(results.map((x) => `${x.function} ${x.key}`)).toEqual(['reconcileCluster metal3/c-replay']);
    const bad = await metal3fn(['replay', '--event', file, 'noSuchFunction']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('unknown function');
  });

  it('moves DLQ messages back with --from-dlq', async () => {
    const body = JSON.stringify(envelope({ function: 'renderData', kind: 'Metal3Data', name: 'd-dead' }));
    await local.sqs.send(
      new SendMessageCommand({
        QueueUrl: queues.dlq.renderData,
        MessageBody: body,
        MessageGroupId: 'g',
        MessageDeduplicationId: 'd-dead',
      }),
    );
    const r = await metal3fn([
      'replay',
      '--from-dlq',
      'renderData',
      '--sqs-endpoint',
      local.endpoint,
      '--queue-prefix',
      'cli-',
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ function: 'renderData', method: 'copy', moved: 1 });
    const back = await local.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queues.main.renderData, WaitTimeSeconds: 1 }),
    );
    expect(back.Messages?.[0]?.Body).toBe(body);
  });

  it('runs a worker that stops cleanly on SIGTERM', async () => {
    const r = await metal3fn(
      [
        'worker',
        '--functions',
        'reconcileCluster',
        '--sqs-endpoint',
        local.endpoint,
        '--queue-prefix',
        'cli-',
        '--wait',
        '1',
        '--kubeconfig',
        kubeconfig,
      ],
      { signalOn: 'worker started', signalDelayMs: 1_500 },
    );
    expect(r.stderr).toContain('worker stopped');
    expect(r.code).toBe(0);
  });

  it('runs the relay: the objects of the cluster reach their queues, and it stops on SIGTERM', async () => {
    await cluster.client.create(envelopeOf(R.Metal3Machine), {
      metadata: { name: 'm-cli', namespace: 'metal3' },
      spec: {},
    });
    const run = metal3fn(
      [
        'relay',
        '--kubeconfig',
        kubeconfig,
        '--sqs-endpoint',
        local.endpoint,
        '--queue-prefix',
        'cli-',
        '--no-workload',
      ],
      { signalOn: 'relay synced', signalDelayMs: 2_000 },
    );
    const names: string[] = [];
    const end = Date.now() + 15_000;
    while (!names.includes('m-cli') && Date.now() < end) {
      const r = await local.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queues.main.selectHost,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
        }),
      );
      for (const m of r.Messages ?? []) names.push(JSON.parse(m.Body!).name);
    }
    expect(names).toContain('m-cli');
    const r = await run;
    expect(r.stderr).toContain('relay stopped');
    expect(r.code).toBe(0);
  });

  it('serves HTTP until SIGTERM', async () => {
    let port = 0;
    const child = spawn(
      process.execPath,
      [
        join(ROOT, 'bin/metal3fn.ts'),
        'http',
        '--port',
        '0',
        '--allow-unauthenticated',
        '--kubeconfig',
        kubeconfig,
      ],
      {
        cwd: ROOT,
        env: { ...process.env, LOG_LEVEL: 'info' },
      },
    );
    let stderr = '';
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    await new Promise<void>((resolve) => {
      child.stderr.on('data', (d) => {
        stderr += d;
        const m = /"msg":"listening".*?"port":(\d+)/.exec(stderr);
        if (m && !port) {
          port = Number(m[1]);
          resolve();
        }
      });
    });
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
