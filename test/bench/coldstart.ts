/**
 * Cold start of each Lambda bundle: a fresh Node process that loads the bundle and handles one SQS
 * event (a key whose object does not exist: one GET, then done), timed against a bare `node -e 0`
 * in the same run. Needs `npm run build` first. Goal: ratio <= 1.5x.
 *
 * The floor under that goal is measured too: a fresh process that does the same GET with nothing
 * but Node's own HTTP modules (`coldStartFloorMs`, and each start over it).
 *
 * Fairness: every sample is a fresh process, spawned the same way; bare, floor and bundle runs
 * alternate (bare, floor, fn1, fn2, ..., bare, floor, fn1, ...) so a change in machine load hits
 * all sides alike, and each figure is the median of its runs. No compile cache is used
 * (NODE_COMPILE_CACHE is removed from the children's environment): a Lambda cold start has none.
 */

import { spawn } from 'node:child_process';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { MAIN_KIND } from '../../bin/commands/replay.ts';
import type { FunctionName } from '../../events/envelope.ts';
import { apiVersionOf, R } from '../../shared/api/resources.ts';
import { startTestCluster } from '../helpers/cluster.ts';
import { sqsEventFor } from '../helpers/sqs-event.ts';
import { median } from './median.ts';

const root = new URL('../../', import.meta.url).pathname;

/** Async spawn: the embedded API server answering the child lives in this process's event loop. */
function timeNode(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, args, { env });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('exit', (code) => {
      const ms = performance.now() - t0;
      if (code !== 0)
        reject(new Error(`${args.join(' ').slice(0, 80)} exited ${code}: ${stderr.slice(0, 500)}`));
      else resolvePromise(ms);
    });
  });
}

/** Runs each case `runs` times, round-robin; returns the median of each. */
async function interleavedMedians(runs: number, cases: (() => Promise<number>)[]): Promise<number[]> {
  const xs: number[][] = cases.map(() => []);
  for (let i = 0; i < runs; i++) for (const [j, f] of cases.entries()) xs[j]!.push(await f());
  return xs.map(median);
}

/** Bytes a start of the bundle loads (its index.mjs and the chunks it imports statically). */
async function startBytes(lambdaDir: string, fn: string): Promise<number> {
  try {
    const sizes = JSON.parse(await readFile(join(lambdaDir, '..', 'sizes.json'), 'utf8'));
    const s = sizes[`lambda/${fn}`];
    if (typeof s?.startBytes === 'number') return s.startBytes;
  } catch {}
  return (await stat(join(lambdaDir, fn, 'index.mjs'))).size;
}

/** What renderData's start GETs: its main kind, default/absent as sqsEventFor names it. */
const absentKind = R[MAIN_KIND.renderData];
const ABSENT_PATH = `/apis/${apiVersionOf(absentKind)}/namespaces/default/${absentKind.plural}/absent`;

/**
 * The floor under any Lambda start: Node, its HTTPS client, and one GET of the same absent object
 * over TLS (the server's CA, the kubeconfig's bearer token), as any client of a real, TLS-only
 * kube-apiserver must do. No Kubernetes client, schema or handler. CommonJS, as the bundles reach
 * built-ins through require (scripts/build.ts, builtinsViaRequire); anything but the 404 a bundle
 * gets fails it.
 */
function floorScript(url: string, token: string, ca: string): string {
  const options = JSON.stringify({ headers: { authorization: `Bearer ${token}` }, ca });
  return `require('node:https').get(${JSON.stringify(url)}, ${options}, (res) => {
  res.resume();
  if (res.statusCode !== 404) { console.error('floor GET: HTTP ' + res.statusCode); process.exitCode = 3; }
});`;
}

/** The CA a kubeconfig of the embedded server carries (certificate-authority-data). */
function caOf(kubeconfig: string): string {
  const b64 = /certificate-authority-data: (\S+)/.exec(kubeconfig)?.[1];
  if (!b64) throw new Error('the cold-start server must serve https (its kubeconfig has no CA)');
  return Buffer.from(b64, 'base64').toString('utf8');
}

const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;

export async function benchColdStart(runs = 9): Promise<Record<string, number>> {
  const lambdaDir = join(root, 'dist/lambda');
  const fns = (await readdir(lambdaDir)).filter((f) => f !== 'requeueForwarder');
  // As a real management cluster is: https only, with our CRDs (an absent object is then a
  // NotFound of a known resource, not of an unknown one).
  const cluster = await startTestCluster({ tls: true });
  const server = cluster.server;
  const kubeconfig = join(tmpdir(), `metal3fn-coldstart-${process.pid}.kubeconfig`);
  await server.writeKubeconfig(kubeconfig);
  const { NODE_COMPILE_CACHE: _cache, ...parentEnv } = process.env;
  const env = {
    ...parentEnv,
    KUBECONFIG: kubeconfig,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'x',
    AWS_SECRET_ACCESS_KEY: 'x',
    LOG_LEVEL: 'error',
  };
  const results: Record<string, number> = {};
  try {
    // The kubeconfig above names this server and this token (its default).
    const floor = floorScript(server.url + ABSENT_PATH, server.adminToken, caOf(cluster.kubeconfig));
    const cases = [
      () => timeNode(['-e', '0'], env),
      () => timeNode(['-e', floor], env),
      ...fns.map((fn) => {
        const bundle = join(lambdaDir, fn, 'index.mjs');
        const script = `const m = await import(${JSON.stringify(bundle)}); const r = await m.handler(${JSON.stringify(sqsEventFor(fn as FunctionName, 'absent'))}); if (r.batchItemFailures.length) { console.error(JSON.stringify(r)); process.exit(3); }`;
        return () => timeNode(['--input-type=module', '-e', script], env);
      }),
    ];
    const [bare, floorMs, ...ms] = await interleavedMedians(runs, cases);
    // The floor and renderData's starts asked for the same object (or the floor measures another GET).
    const absentGets = server.log.entries.filter((e) => e.verb === 'get' && e.path === ABSENT_PATH);
    if (fns.includes('renderData') && absentGets.length !== 2 * runs)
      throw new Error(`the floor did not GET ${ABSENT_PATH} as renderData's start does`);
    results.bareNodeMs = Math.round(bare!);
    results.coldStartFloorMs = Math.round(floorMs!);
    results.coldStartFloorRatio = ratio(floorMs!, bare!);
    let biggest = 0;
    for (const [i, fn] of fns.entries()) {
      biggest = Math.max(biggest, await startBytes(lambdaDir, fn));
      results[`coldStartMs.${fn}`] = Math.round(ms[i]!);
      results[`coldStartRatio.${fn}`] = ratio(ms[i]!, bare!);
    }
    const worst = Math.max(...ms);
    results.coldStartRatioMax = ratio(worst, bare!);
    /** How far the slowest start is above the floor: what our code and its libraries add. */
    results.coldStartOverFloorRatioMax = ratio(worst, floorMs!);
    /** The most code a start loads (entry and static chunks; lazy chunks load on first use). */
    results.bundleBytesMax = biggest;
  } finally {
    await server.stop();
  }
  return results;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const r = await benchColdStart();
  for (const [k, v] of Object.entries(r)) process.stdout.write(`${k.padEnd(40)} ${v}\n`);
  if (process.argv[2]) await writeFile(process.argv[2], JSON.stringify(r, null, 2));
}
