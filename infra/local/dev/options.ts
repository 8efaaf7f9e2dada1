/**
 * `metal3fn dev`'s options, checked before anything starts (no server, queue or file is made for
 * a run that cannot go), each error in one form: `--<option> must be <rule>, not '<value>'`.
 */
import { existsSync } from 'node:fs';
import type { DevOptions } from './run.ts';

export type Values = Record<string, string | boolean | undefined>;

/** runDev's options as the command line gives them (the hooks and the output stream are code's). */
export type ParsedDevOptions = Omit<DevOptions, 'out' | 'hooks' | 'queuePrefix' | 'direct' | 'lambda'> & {
  direct: boolean;
  lambda: boolean;
};

export class OptionError extends Error {}

/** The one message form for a bad option value. */
export const optionError = (option: string, rule: string, value: unknown): OptionError =>
  new OptionError(`--${option} must be ${rule}, not '${String(value)}'`);

const WHOLE = /^\d+$/;

function whole(values: Values, option: string, min: number, fallback: number, minName = String(min)): number {
  const raw = values[option];
  if (raw === undefined) return fallback;
  const n = typeof raw === 'string' && WHOLE.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min) throw optionError(option, `a whole number ≥ ${minName}`, raw);
  return n;
}

function oneOf<T extends string>(
  values: Values,
  option: string,
  allowed: readonly T[],
  fallback?: T,
): T | undefined {
  const raw = values[option];
  if (raw === undefined) return fallback;
  if (!allowed.includes(raw as T)) throw optionError(option, allowed.join(' or '), raw);
  return raw as T;
}

const str = (values: Values, option: string): string | undefined => {
  const raw = values[option];
  if (raw === '') throw optionError(option, 'a non-empty value', raw);
  return raw as string | undefined;
};

/** Every check of the options; throws an OptionError with the first problem. */
export function parseDevOptions(values: Values): ParsedDevOptions {
  const manifests = str(values, 'manifests');
  if (manifests !== undefined) {
    for (const sizing of ['machines', 'hosts'])
      if (values[sizing] !== undefined)
        throw new OptionError(
          `--${sizing} sizes the built-in sample; with --manifests your manifests say how many machines and hosts there are`,
        );
    if (!existsSync(manifests)) throw optionError('manifests', 'an existing file or directory', manifests);
  }
  if (values.vmetal && manifests !== undefined)
    throw new OptionError(
      '--vmetal adds the built-in vMetal sample; with --manifests your manifests bring the vMetal objects (they run whenever present)',
    );
  const machines = whole(values, 'machines', 1, 5);
  const hosts =
    values.hosts === undefined ? undefined : whole(values, 'hosts', machines, 0, `--machines (${machines})`);
  const kubeconfig = str(values, 'kubeconfig');
  if (kubeconfig !== undefined && !existsSync(kubeconfig))
    throw optionError('kubeconfig', 'an existing kubeconfig file', kubeconfig);
  const sqsEndpoint = str(values, 'sqs-endpoint');
  if (sqsEndpoint !== undefined && !URL.canParse(sqsEndpoint))
    throw optionError('sqs-endpoint', 'a URL (http://host:port)', sqsEndpoint);
  const rbac = oneOf(values, 'rbac', ['observe', 'enforce'] as const);
  if (rbac && kubeconfig !== undefined)
    throw new OptionError('--rbac needs the embedded API servers; drop --kubeconfig');
  const runtime = oneOf(values, 'runtime', ['worker', 'lambda', 'direct'] as const, 'worker')!;
  if (values.direct && runtime !== 'worker' && runtime !== 'direct')
    throw new OptionError(`--direct is --runtime direct; drop it or --runtime ${runtime}`);
  const direct = Boolean(values.direct) || runtime === 'direct';
  const lambda = runtime === 'lambda';
  if (direct && sqsEndpoint !== undefined)
    throw new OptionError('--direct uses no queues; drop --sqs-endpoint');
  return {
    machines,
    hosts,
    manifests,
    kubeconfig,
    kubeconfigOut: str(values, 'kubeconfig-out'),
    sqsEndpoint,
    simulators: values.simulators as boolean | undefined,
    simDelayMs: whole(values, 'sim-delay', 0, 300),
    scaleDown: Boolean(values['scale-down']),
    dumpState: str(values, 'dump-state'),
    summaryJson: str(values, 'summary-json'),
    serve: Boolean(values.serve),
    timeoutSeconds: whole(values, 'timeout', 1, 120),
    concurrency: whole(values, 'concurrency', 1, 16),
    legacyProviderIds: oneOf(values, 'legacy-provider-ids', ['accept', 'refuse'] as const, 'accept')!,
    rbac,
    direct,
    lambda,
    vmetal: Boolean(values.vmetal),
  };
}
