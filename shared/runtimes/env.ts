/**
 * Every environment variable the product reads, each with the one parser for it (docs/adr/026).
 * Unset keeps the default; a set value that does not parse stops the runtime at start with one
 * error naming every bad variable, its value (never a secret's) and what is accepted. Every
 * runtime checks it before it does anything: the Lambda entries when their module loads (the
 * function's INIT fails), the `metal3fn` commands (http, worker, relay, replay, dev, ...) right
 * after their options (shared/runtimes/options.ts), and buildContext through productConfigFromEnv.
 *
 * Read by the AWS SDK and Lambda themselves, not here: AWS_REGION, AWS_DEFAULT_REGION and the
 * credential variables. Local and build tooling only: SQS_TEST_BACKEND, CI, BUILD_METAFILE,
 * SOURCE_DATE_EPOCH.
 */

/** The parsed value, or undefined when the text is not accepted. */
type Parse<T> = (raw: string) => T | undefined;

interface EnvSpec<T> {
  /** What is accepted, as the error says it. */
  accepts: string;
  parse: Parse<T>;
  /** An empty value means unset: the deploy templates pass '' for "none" (serverless.yml). */
  emptyIsUnset?: boolean;
  /** Holds a credential: its value is never printed. */
  secret?: boolean;
  /** An older name, read when this one is unset. */
  alias?: string;
}

const spec = <T>(s: EnvSpec<T>): EnvSpec<T> => s;

const whole =
  (min: number, max = Number.MAX_SAFE_INTEGER): Parse<number> =>
  (raw) => {
    if (!/^\d+$/.test(raw)) return undefined;
    const n = Number(raw);
    return n >= min && n <= max ? n : undefined;
  };

const oneOf =
  <T extends string>(values: readonly T[], opts: { anyCase?: boolean } = {}): Parse<T> =>
  (raw) =>
    values.find((v) => (opts.anyCase ? v === raw.toLowerCase() : v === raw));

const text: Parse<string> = (raw) => raw;

const httpUrl: Parse<string> = (raw) => {
  try {
    const u = new URL(raw);
    return u.protocol === 'http:' || u.protocol === 'https:' ? raw : undefined;
  } catch {
    return undefined;
  }
};

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
const POWERTOOLS_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'critical', 'silent'] as const;

export const ENV = {
  // Every runtime.
  LOG_LEVEL: spec({
    accepts: LOG_LEVELS.join(', ') + ' (any case)',
    parse: oneOf(LOG_LEVELS, { anyCase: true }),
  }),
  LEGACY_PROVIDER_IDS: spec({
    accepts: 'accept or refuse',
    parse: oneOf(['accept', 'refuse'] as const),
    alias: 'METAL3FN_LEGACY_PROVIDER_IDS',
  }),
  CAPM3_FAST_TRACK: spec({ accepts: 'true or false', parse: oneOf(['true', 'false'] as const) }),
  SAFETY_REQUEUE_SECONDS: spec({ accepts: 'a whole number of seconds ≥ 1', parse: whole(1) }),
  SHARED_READ_MAX_AGE_MS: spec({ accepts: 'a whole number of milliseconds ≥ 0', parse: whole(0) }),
  // Under an hour a token could expire between rendering and the node's first boot.
  VMETAL_JOIN_TOKEN_TTL_SECONDS: spec({ accepts: 'a whole number of seconds ≥ 3600', parse: whole(3600) }),
  METAL3FN_KUBECONFIG: spec({
    accepts: 'a kubeconfig (YAML, JSON or base64 of it)',
    parse: text,
    emptyIsUnset: true,
    secret: true,
  }),
  // Queues (worker, relay, replay, Lambda).
  QUEUE_PREFIX: spec({
    accepts: "letters, digits, '-' and '_' (at most 40)",
    parse: (raw) => (/^[A-Za-z0-9_-]{0,40}$/.test(raw) ? raw : undefined),
  }),
  AWS_ENDPOINT_URL_SQS: spec({ accepts: 'an http(s) URL', parse: httpUrl, emptyIsUnset: true }),
  AWS_ENDPOINT_URL: spec({ accepts: 'an http(s) URL', parse: httpUrl, emptyIsUnset: true }),
  // Lambda.
  REQUEUE_QUEUE_URL: spec({ accepts: 'an http(s) URL (the requeue queue)', parse: httpUrl }),
  // SQS allows a redrive maxReceiveCount of 1 to 1000.
  MAX_RECEIVE_COUNT: spec({ accepts: 'a whole number from 1 to 1000', parse: whole(1, 1000) }),
  METAL3FN_KUBECONFIG_SECRET: spec({
    accepts: 'a Secrets Manager secret name or ARN',
    parse: text,
    emptyIsUnset: true,
  }),
  METAL3FN_KUBECONFIG_PARAMETER: spec({ accepts: 'an SSM parameter name', parse: text, emptyIsUnset: true }),
  METAL3FN_KUBECONFIG_MAX_AGE: spec({ accepts: 'a whole number of seconds ≥ 1', parse: whole(1) }),
  POWERTOOLS_LOG_LEVEL: spec({
    accepts: POWERTOOLS_LEVELS.join(', ') + ' (any case)',
    parse: oneOf(POWERTOOLS_LEVELS, { anyCase: true }),
    emptyIsUnset: true,
  }),
  POWERTOOLS_SERVICE_NAME: spec({ accepts: 'a name', parse: text, emptyIsUnset: true }),
  POWERTOOLS_METRICS_NAMESPACE: spec({ accepts: 'a CloudWatch namespace', parse: text, emptyIsUnset: true }),
  // HTTP (Knative).
  PORT: spec({ accepts: 'a port number from 0 to 65535', parse: whole(0, 65535) }),
  METAL3FN_HTTP_TOKENS: spec({
    accepts: 'bearer tokens, comma-separated',
    parse: (raw) =>
      raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    emptyIsUnset: true,
    secret: true,
  }),
  METAL3FN_HMAC_SECRET: spec({ accepts: 'a shared secret', parse: text, emptyIsUnset: true, secret: true }),
} as const;

export type EnvName = keyof typeof ENV;
type ValueOf<N extends EnvName> = (typeof ENV)[N] extends EnvSpec<infer T> ? T : never;
/** The parsed environment: a variable left unset is absent. */
export type EnvValues = { [N in EnvName]?: ValueOf<N> };

type Env = Readonly<Record<string, string | undefined>>;

/** The table typed by name, so that `TABLE[name]` of a generic name keeps its value type. */
const TABLE: { [N in EnvName]: EnvSpec<ValueOf<N>> } = ENV;
const isEnvName = (n: string): n is EnvName => Object.hasOwn(ENV, n);
const NAMES: readonly EnvName[] = Object.keys(ENV).filter(isEnvName);

/** The configuration a runtime was started with is not usable: every problem, one per line. */
export class EnvConfigError extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(
      `invalid configuration in the environment (unset a variable to use its default):\n${problems
        .map((p) => `  ${p}`)
        .join('\n')}`,
    );
    this.name = 'EnvConfigError';
    this.problems = problems;
  }
}

/** The raw text of a variable (or of its alias), undefined when unset. */
function rawOf(name: EnvName, env: Env): { name: string; raw: string } | undefined {
  const s: EnvSpec<unknown> = TABLE[name];
  for (const n of s.alias ? [name, s.alias] : [name]) {
    const raw = env[n];
    if (raw === undefined || (raw === '' && s.emptyIsUnset)) continue;
    return { name: n, raw };
  }
  return undefined;
}

type Checked<N extends EnvName> =
  | { ok: true; value: ValueOf<N> | undefined }
  | { ok: false; problem: string };

function check<N extends EnvName>(name: N, env: Env): Checked<N> {
  const found = rawOf(name, env);
  if (!found) return { ok: true, value: undefined };
  const s = TABLE[name];
  const value = s.parse(found.raw);
  if (value !== undefined) return { ok: true, value };
  const shown = s.secret ? '(value not shown)' : `='${found.raw}'`;
  return { ok: false, problem: `${found.name}${s.secret ? ' ' : ''}${shown}: expected ${s.accepts}` };
}

/** Every variable of the table, parsed; throws EnvConfigError naming all that are set but invalid. */
export function readEnv(env: Env = process.env): EnvValues {
  const out: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const name of NAMES) {
    const c = check(name, env);
    if (!c.ok) problems.push(c.problem);
    else if (c.value !== undefined) out[name] = c.value;
  }
  if (problems.length > 0) throw new EnvConfigError(problems);
  return out as EnvValues;
}

/**
 * One variable, for code that runs after the start-up check (so an invalid value was refused
 * already) and must not throw itself, e.g. the logger: undefined when unset or invalid.
 */
export function envValue<N extends EnvName>(name: N, env: Env = process.env): ValueOf<N> | undefined {
  const c = check(name, env);
  return c.ok ? c.value : undefined;
}
