/**
 * What a user on Lambda sees (issue 21): the whole system (runDev) with the functions behind the
 * emulated SQS event source mappings (infra/local/lambda-esm.ts, serverless.yml's settings).
 *
 *   node test/bench/lambda.ts [--machines 200] [--chaos] [--resync-machines 20] [--json FILE]
 *
 * 1. `--machines` machines over 1.5× hosts to Ready, then scaled down with the release check:
 *    converge time, added latency, invocations, billed GB-s and cold starts per Ready machine, our
 *    processing time vs time waiting in queues, SQS requests; and the same for the release.
 * 2. `--resync-machines` machines stand Ready while the relay resyncs every 15 s for 60 s: the
 *    messages a resync sends per Ready machine. On AWS the relay's resync (10 h, ADR 023) is past the FIFO
 *    queues' 5-minute deduplication window, so each of them becomes a record to run; here the short
 *    period keeps them inside it (deduplicated), so the count of messages is the figure.
 *
 * `--chaos` runs part 1 through the chaos suite's faults instead (test/chaos/run.ts).
 */
import { writeFile } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { runDev } from '../../infra/local/dev/run.ts';
import { runChaos } from '../chaos/run.ts';

const sink = new Writable({ write: (_c, _e, cb) => cb() }) as unknown as NodeJS.WriteStream;
const base = {
  simDelayMs: 50,
  concurrency: 32,
  legacyProviderIds: 'accept' as const,
  out: sink,
  lambda: true,
};

async function churn(machines: number) {
  const r = await runDev({
    ...base,
    machines,
    hosts: Math.ceil(machines * 1.5),
    scaleDown: true,
    serve: false,
    timeoutSeconds: Math.max(300, machines * 3),
  });
  if (!r.ok || !r.summary) throw new Error(`${machines} machines on Lambda: ${r.message}`);
  const s = r.summary;
  return {
    machines,
    convergeSeconds: s.convergeSeconds,
    addedLatencyP50Ms: s.addedLatencyP50Ms,
    addedLatencyP99Ms: s.addedLatencyP99Ms,
    requestsPerMachine: s.requestsPerMachine,
    retries: s.retries,
    lambda: s.lambda,
    release: s.lambdaRelease,
  };
}

async function resyncMessages(machines: number, resyncSeconds = 15, windowSeconds = 60) {
  let readyAt: number | undefined;
  let messagesAfterReady = 0;
  const r = await runDev({
    ...base,
    machines,
    scaleDown: false,
    serve: true,
    timeoutSeconds: 300,
    relayResyncMs: resyncSeconds * 1000,
    hooks: {
      onRelayMessages(msgs) {
        if (readyAt !== undefined) messagesAfterReady += msgs.length;
      },
      onProgress(observer) {
        const tls = [...observer.timelines.values()];
        if (readyAt !== undefined || tls.length < machines || !tls.every((t) => t.phase === 'Ready')) return;
        readyAt = Date.now();
        // runDev serves until SIGINT: end the window then (only runDev's own listener is there).
        setTimeout(() => {
          const stop = setInterval(() => {
            if (process.listenerCount('SIGINT') === 0) return;
            clearInterval(stop);
            process.emit('SIGINT');
          }, 100);
        }, windowSeconds * 1000);
      },
    },
  });
  if (!r.ok || !r.summary) throw new Error(`resync run: ${r.message}`);
  const resyncs = windowSeconds / resyncSeconds;
  return {
    machines,
    resyncSeconds,
    windowSeconds,
    relayMessagesPerMachinePerResync: Math.round((messagesAfterReady / machines / resyncs) * 100) / 100,
    // Deduplicated here (inside the 5-minute window): what still ran.
    lambdaServing: r.summary.lambdaServing,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      machines: { type: 'string' },
      'resync-machines': { type: 'string' },
      chaos: { type: 'boolean' },
      json: { type: 'string' },
    },
  });
  const machines = Number(values.machines ?? 200);
  const out: Record<string, unknown> = { date: new Date().toISOString() };
  if (values.chaos) {
    const report = await runChaos({ machines, seed: 1, lambda: true });
    const { logs: _l, logSamples: _s, ...rest } = report;
    out.chaos = rest;
  } else out.churn = await churn(machines);
  const resyncMachines = Number(values['resync-machines'] ?? 20);
  if (resyncMachines > 0) out.resync = await resyncMessages(resyncMachines);
  const text = `${JSON.stringify(out, null, 2)}\n`;
  process.stdout.write(text);
  if (values.json) await writeFile(values.json, text);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
