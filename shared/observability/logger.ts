/**
 * Structured JSON logs, one line per entry. Secret contents never reach a log: values under keys
 * that look like secret payloads are redacted, and callers log references, never data.
 */
import { isRecord } from '../api/json.ts';
import { envValue } from '../runtimes/env.ts';
export type Level = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };
const REDACT_KEYS = /^(data|stringData|userData|metaData|networkData|token|password|value|authorization)$/i;

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

export interface LoggerOptions {
  level?: Level;
  /** Where lines go; defaults to stderr so stdout stays for command output. */
  write?: (line: string) => void;
  base?: Record<string, unknown>;
}

/** The keys of an object reference (SecretReference, ObjectReference, SecretKeySelector). */
const REF_KEYS = new Set([
  'name',
  'namespace',
  'kind',
  'apiVersion',
  'uid',
  'resourceVersion',
  'key',
  'fieldPath',
]);

/** An object reference: a `name` and nothing but reference keys with string values (not a data map). */
const isReference = (v: unknown): boolean =>
  v !== null &&
  typeof v === 'object' &&
  !Array.isArray(v) &&
  'name' in (v as object) &&
  Object.entries(v as object).every(
    ([k, x]) => REF_KEYS.has(k) && (typeof x === 'string' || x === undefined),
  );

/** Replaces secret-looking payloads; object references ({name, namespace}) pass through. */
export function redact(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return value;
  // Deeper than we look: nothing of it is printed (it could hold anything).
  if (depth > 6) return '[truncated]';
  if (Array.isArray(value)) return value.map((v: unknown) => redact(v, depth + 1));
  return isRecord(value) ? redactFields(value, depth) : value;
}

/** `redact` of a field map (a log line's fields). */
export function redactFields(fields: Record<string, unknown>, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) {
    out[k] = REDACT_KEYS.test(k) && !isReference(v) && v !== undefined ? '[redacted]' : redact(v, depth + 1);
  }
  return out;
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  // An invalid LOG_LEVEL was refused at start (shared/runtimes/env.ts); here it reads as unset.
  const min = ORDER[opts.level ?? envValue('LOG_LEVEL') ?? 'info'] ?? ORDER.info;
  const write = opts.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  const base = opts.base ?? {};
  const emit = (level: Level, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[level] < min) return;
    const entry = {
      ts: new Date().toISOString(),
      level,
      msg,
      ...base,
      ...(fields ? redactFields(fields) : {}),
    };
    write(JSON.stringify(entry));
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    // Child fields are redacted like any other (they are printed on every line of the child).
    child: (fields) => createLogger({ ...opts, base: { ...base, ...redactFields(fields) } }),
  };
}

export const silentLogger: Logger = createLogger({ write: () => {} });
