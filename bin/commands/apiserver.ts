/**
 * `metal3fn apiserver`: the embedded Kubernetes API server alone, on 127.0.0.1, until SIGINT or
 * SIGTERM. Prints the URL and the path of a kubeconfig kubectl can use.
 */
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { loadCrdFiles } from '../../infra/local/apiserver/crds.ts';
import { startApiServer } from '../../infra/local/apiserver/index.ts';
import { R } from '../../shared/api/resources.ts';
import { KubeClient } from '../../shared/kube/client.ts';
import { parseQuantity } from '../../shared/vmetal/quantity.ts';

const USAGE = `usage: metal3fn apiserver [--port N] [--host H] [--data FILE] [--kubeconfig-out FILE] [--crds] [--tls]
                          [--history-bytes Q] [--history-size N] [--compaction-interval D]
                          [--heap-growth-percent N]

  --port N              listen port (default 6443; 0 picks a free one)
  --host H              listen address (default 127.0.0.1)
  --data FILE           keep state in this SQLite file (survives restarts and kill -9)
  --kubeconfig-out F    where to write the kubeconfig (default $TMPDIR/metal3fn/kubeconfig-<port>)
  --crds                create the project's CRDs (infra/crds, infra/local/crds) at start
  --tls                 serve https with a self-signed certificate (needs openssl); the kubeconfig carries its CA

The history window (watch resumes, continue tokens and Exact lists; older ones get 410 Expired),
sized as a real server's watch cache and etcd compaction are:
  --history-bytes Q     most estimated bytes its versions hold, a quantity (default 256Mi)
  --history-size N      most events it holds (default 100000)
  --compaction-interval D
                        how often it is compacted, a Go duration; it spans one to two (default 5m, 0 = never)

  --heap-growth-percent N
                        after a full garbage collection the heap may grow by N % of what is live before
                        the next one, as Go's GOGC does for a real apiserver (default 20; 100 is GOGC's
                        default; 0 = V8's own heuristics, which let it grow 3-4x during a burst of large writes)`;

/**
 * The heap target is 1.2× what the last collection left live (GOGC=20). Above what it targets,
 * the heap's resident size carries what a collection does not return at once: pages it leaves
 * fragmented and the pages V8 keeps pooled after it (~250-500 MB at the 10,000-machine end state,
 * docs/benchmarks.md "Map writes"). At 20 % that end state peaked at 958 MiB against 1,127 at 50
 * %, for ~10 % more of the server's CPU, after the writes of large objects stopped allocating
 * four-fifths of what they did (ADR 036; 50 since ADR 032, 100 before).
 */
export const DEFAULT_HEAP_GROWTH_PERCENT = 20;

/** `--heap-growth-percent`: a whole number of percent, 0 for V8's heuristics; throws on a bad value. */
export function heapGrowthPercent(v: string | undefined): number {
  if (v === undefined) return DEFAULT_HEAP_GROWTH_PERCENT;
  const n = Number(v);
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(n))
    throw new Error(`invalid --heap-growth-percent ${v}: a whole number of percent (0 = V8's heuristics)`);
  return n;
}

/** Go's duration syntax (shared/gotemplate/gotime.ts), loaded only when a flag needs it. */
export type DurationParser = (text: string) => bigint;

/**
 * The history window's sizing from the flags; throws with the flag's name on a bad value.
 * `parseDuration` reads --compaction-interval (the template engine is never loaded at start).
 */
export function historyOptions(
  v: {
    'history-bytes'?: string | undefined;
    'history-size'?: string | undefined;
    'compaction-interval'?: string | undefined;
  },
  parseDuration?: DurationParser,
): { historyBytes?: number; historySize?: number; compactionIntervalMs?: number } {
  const out: { historyBytes?: number; historySize?: number; compactionIntervalMs?: number } = {};
  if (v['history-bytes'] !== undefined) {
    const q = parseQuantity(v['history-bytes']);
    const n = q && q.num > 0n ? Number(q.num / q.den) : 0;
    if (!q || !(n >= 1) || !Number.isSafeInteger(n))
      throw new Error(
        `invalid --history-bytes ${v['history-bytes']}: a positive quantity of bytes (e.g. 64Mi)`,
      );
    out.historyBytes = n;
  }
  if (v['history-size'] !== undefined) {
    const n = Number(v['history-size']);
    if (!/^\d+$/.test(v['history-size']) || !Number.isSafeInteger(n) || n < 1)
      throw new Error(`invalid --history-size ${v['history-size']}: a positive number of events`);
    out.historySize = n;
  }
  if (v['compaction-interval'] !== undefined) {
    let ns: bigint;
    try {
      if (!parseDuration) throw new Error('no duration parser');
      ns = parseDuration(v['compaction-interval']);
    } catch {
      ns = -1n;
    }
    if (ns < 0n)
      throw new Error(
        `invalid --compaction-interval ${v['compaction-interval']}: a duration such as 5m or 90s (0 = never)`,
      );
    out.compactionIntervalMs = Number(ns / 1_000_000n);
  }
  return out;
}

export async function run(argv: string[]): Promise<number> {
  let args: ReturnType<typeof parseOpts>;
  let history: ReturnType<typeof historyOptions>;
  let growth: number;
  try {
    args = parseOpts(argv);
    const durations =
      args['compaction-interval'] === undefined
        ? undefined
        : (await import('../../shared/gotemplate/gotime.ts')).parseDuration;
    history = historyOptions(args, durations);
    growth = heapGrowthPercent(args['heap-growth-percent']);
  } catch (e) {
    process.stderr.write(`metal3fn apiserver: ${(e as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (args.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const port = args.port === undefined ? 6443 : Number(args.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`metal3fn apiserver: invalid --port ${args.port}\n`);
    return 2;
  }
  // This process is the server alone: its collector is set here, not in startApiServer (which
  // also runs inside dev and the tests). V8 reads the flag at each collection.
  if (growth > 0) setFlagsFromString(`--heap-growing-percent=${growth}`);
  const server = await startApiServer({
    port,
    host: args.host ?? '127.0.0.1',
    dataFile: args.data ? resolve(args.data) : undefined,
    tls: args.tls ?? false,
    ...history,
  });
  const kubeconfigPath = resolve(
    args['kubeconfig-out'] ?? join(tmpdir(), 'metal3fn', `kubeconfig-${server.port}`),
  );
  mkdirSync(dirname(kubeconfigPath), { recursive: true });
  await server.writeKubeconfig(kubeconfigPath);
  if (args.crds) {
    const client = KubeClient.fromString(server.kubeconfig());
    let n = 0;
    for (const crd of loadCrdFiles()) {
      if (!(await client.get(R.CustomResourceDefinition, undefined, crd.metadata.name))) {
        await client.create(R.CustomResourceDefinition, crd);
        n++;
      }
    }
    process.stdout.write(`created ${n} CRDs\n`);
  }
  process.stdout.write(
    `API server listening on ${server.url}\nkubeconfig: ${kubeconfigPath}\n  export KUBECONFIG=${kubeconfigPath}\n`,
  );
  // What `kubeadm join --discovery-token-ca-cert-hash` needs (TLS only: without it there is no CA).
  if (server.auth.ca) process.stdout.write(`CA cert hash: ${server.auth.caCertHash()}\n`);
  await new Promise<void>((done) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      done();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await server.stop();
  process.stdout.write('API server stopped\n');
  return 0;
}

function parseOpts(argv: string[]) {
  return parseArgs({
    args: argv,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      data: { type: 'string' },
      'kubeconfig-out': { type: 'string' },
      crds: { type: 'boolean' },
      tls: { type: 'boolean' },
      'history-bytes': { type: 'string' },
      'history-size': { type: 'string' },
      'compaction-interval': { type: 'string' },
      'heap-growth-percent': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  }).values;
}
