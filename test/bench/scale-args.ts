/**
 * The fleet-scale bench's options (test/bench/scale.ts), checked before anything starts; pure, so
 * `npm run bench` can parse them without loading the bench.
 */

export interface ScaleOptions {
  machines: number;
  /** Spread the machines over this many clusters (default 1: dev's built-in sample). */
  clusters?: number;
  /** Then a vMetal-only run of this many NodeClaims (default none). */
  vmetalClaims?: number;
  /** dev's --timeout, per wait (default max(600, 2 s per machine or claim)). */
  timeoutSeconds?: number;
  /** More arguments for `metal3fn apiserver` (its history and heap flags), split on spaces. */
  apiServerArgs?: string[];
  /** More arguments for `metal3fn dev` (its worker's `--concurrency`, `--lambda`), split on spaces. */
  devArgs?: string[];
  /** Where to print progress (default stderr). */
  log?: (line: string) => void;
}

/** `--scale N [--clusters K] [--vmetal-claims C] [--timeout S] [--apiserver-args A] [--dev-args A]`, checked; undefined without --scale. */
export function parseScaleArgs(
  values: Record<string, string | boolean | undefined>,
): ScaleOptions | undefined {
  const whole = (option: string, min: number): number | undefined => {
    const raw = values[option];
    if (raw === undefined) return undefined;
    const n = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
    if (!Number.isSafeInteger(n) || n < min)
      throw new Error(`--${option} must be a whole number ≥ ${min}, not '${raw}'`);
    return n;
  };
  const machines = whole('scale', 1);
  if (machines === undefined) {
    for (const o of ['clusters', 'vmetal-claims', 'apiserver-args', 'dev-args'])
      if (values[o] !== undefined) throw new Error(`--${o} goes with --scale N`);
    return undefined;
  }
  const clusters = whole('clusters', 1) ?? 1;
  if (clusters > machines)
    throw new Error(`--clusters ${clusters} is more than --scale ${machines} machines`);
  const vmetalClaims = whole('vmetal-claims', 1);
  const timeoutSeconds = whole('timeout', 1);
  const words = (option: string, benchSets: string[]): string[] => {
    const raw = values[option];
    const out = typeof raw === 'string' ? raw.split(/\s+/).filter(Boolean) : [];
    const stray = out.find((a) => benchSets.includes(a));
    if (stray) throw new Error(`--${option}: ${stray} is set by the bench`);
    return out;
  };
  const apiServerArgs = words('apiserver-args', ['--port', '--crds', '--kubeconfig-out']);
  const devArgs = words('dev-args', [
    '--kubeconfig',
    '--simulators',
    '--machines',
    '--hosts',
    '--manifests',
    '--scale-down',
    '--timeout',
    '--summary-json',
  ]);
  return {
    machines,
    clusters,
    ...(vmetalClaims ? { vmetalClaims } : {}),
    ...(timeoutSeconds ? { timeoutSeconds } : {}),
    ...(apiServerArgs.length ? { apiServerArgs } : {}),
    ...(devArgs.length ? { devArgs } : {}),
  };
}

export const SCALE_ARG_OPTIONS = {
  scale: { type: 'string' },
  clusters: { type: 'string' },
  'vmetal-claims': { type: 'string' },
  timeout: { type: 'string' },
  'apiserver-args': { type: 'string' },
  'dev-args': { type: 'string' },
} as const;
