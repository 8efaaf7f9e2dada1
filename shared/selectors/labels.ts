/**
 * Host selector compilation and evaluation (pure). A Metal3Machine's `hostSelector` becomes:
 * - a server-side labelSelector string (matchLabels, plus whatever the caller adds), and
 * - requirements evaluated client-side (matchExpressions: every operator of seed 001, case-insensitive,
 *   plus In/NotIn/Exists/DoesNotExist).
 * An invalid selector is a TerminalError (bad user input, recorded on the object, never retried).
 */
import { type CanonicalOperator, canonicalOperator, type HostSelector } from '../api/hostselector.ts';
import { TerminalError } from '../reconcile/errors.ts';

export interface Requirement {
  key: string;
  op: CanonicalOperator;
  values: string[];
}

export interface CompiledSelector {
  /** matchLabels as `key=value` pairs (pushed to the server). */
  matchLabels: Record<string, string>;
  /** matchExpressions (evaluated client-side). */
  requirements: Requirement[];
}

export class InvalidSelectorError extends TerminalError {
  constructor(message: string) {
    super('InvalidConfiguration', `invalid hostSelector: ${message}`);
  }
}

// Kubernetes label key: optional DNS-1123 subdomain prefix (<=253) + "/" + name (<=63).
const LABEL_NAME = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const INTEGER = /^[+-]?\d+$/;

/** Why a label key is invalid, or undefined when it is valid. */
export function labelKeyProblem(key: string): string | undefined {
  const slash = key.indexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (
    prefix !== undefined &&
    (prefix.length === 0 || prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix))
  ) {
    return `label key "${key}": prefix must be a DNS-1123 subdomain`;
  }
  if (name.length === 0 || name.length > 63 || !LABEL_NAME.test(name)) {
    return `label key "${key}": name must be 1-63 alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric`;
  }
  return undefined;
}

/** Why a label value is invalid, or undefined when it is valid. */
export function labelValueProblem(value: string): string | undefined {
  if (value.length > 63 || !LABEL_VALUE.test(value)) {
    return `label value "${value}": must be at most 63 alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric`;
  }
  return undefined;
}

/** Validates one expression (operator spelling and the operator's value-count rule) and normalises it. */
export function parseRequirement(
  expr: { key: string; operator: string; values?: string[] | undefined },
  at = 0,
): Requirement {
  const where = `matchExpressions[${at}]`;
  const keyProblem = labelKeyProblem(expr.key ?? '');
  if (keyProblem) throw new InvalidSelectorError(`${where}.key: ${keyProblem}`);
  const op = canonicalOperator(String(expr.operator ?? ''));
  if (op === undefined) {
    throw new InvalidSelectorError(
      `${where}.operator: unknown operator "${expr.operator}" (use one of !, =, ==, in, !=, notin, exists, gt, lt, or In, NotIn, Exists, DoesNotExist)`,
    );
  }
  const values = expr.values ?? [];
  const count = (ok: boolean, rule: string) => {
    if (!ok)
      throw new InvalidSelectorError(
        `${where}.values: operator "${expr.operator}" ${rule}, got ${values.length}`,
      );
  };
  switch (op) {
    case '=':
    case '!=':
      count(values.length === 1, 'needs exactly one value');
      break;
    case 'in':
    case 'notin':
      count(values.length >= 1, 'needs at least one value');
      break;
    case 'exists':
    case 'doesnotexist':
      count(values.length === 0, 'takes no values');
      break;
    case 'gt':
    case 'lt':
      count(values.length === 1, 'needs exactly one integer value');
      if (!INTEGER.test(values[0]!)) {
        throw new InvalidSelectorError(
          `${where}.values[0]: operator "${expr.operator}" needs an integer, got "${values[0]}"`,
        );
      }
      return { key: expr.key, op, values };
  }
  for (const [i, v] of values.entries()) {
    const p = labelValueProblem(v);
    if (p) throw new InvalidSelectorError(`${where}.values[${i}]: ${p}`);
  }
  return { key: expr.key, op, values };
}

/** Compiles a hostSelector; throws InvalidSelectorError (terminal) on bad input. */
export function compileHostSelector(sel: HostSelector | undefined | null): CompiledSelector {
  const matchLabels: Record<string, string> = {};
  for (const [k, v] of Object.entries(sel?.matchLabels ?? {})) {
    const kp = labelKeyProblem(k);
    if (kp) throw new InvalidSelectorError(`matchLabels: ${kp}`);
    if (typeof v !== 'string') throw new InvalidSelectorError(`matchLabels["${k}"]: value must be a string`);
    const vp = labelValueProblem(v);
    if (vp) throw new InvalidSelectorError(`matchLabels["${k}"]: ${vp}`);
    matchLabels[k] = v;
  }
  const requirements = (sel?.matchExpressions ?? []).map((e, i) => parseRequirement(e, i));
  return { matchLabels, requirements };
}

/** Evaluates one requirement against a label map (k8s semantics: `!=`/`notin` match a missing key). */
export function matchesRequirement(labels: Record<string, string> | undefined, req: Requirement): boolean {
  const has = labels !== undefined && Object.hasOwn(labels, req.key);
  const value = has ? labels![req.key]! : undefined;
  switch (req.op) {
    case 'exists':
      return has;
    case 'doesnotexist':
      return !has;
    case '=':
    case 'in':
      return has && req.values.includes(value!);
    case '!=':
    case 'notin':
      return !has || !req.values.includes(value!);
    case 'gt':
    case 'lt': {
      if (!has || !INTEGER.test(value!)) return false;
      const a = BigInt(value!);
      const b = BigInt(req.values[0]!);
      return req.op === 'gt' ? a > b : a < b;
    }
  }
}

/** Whether a label map satisfies every matchLabel and every requirement. */
export function matchesSelector(labels: Record<string, string> | undefined, sel: CompiledSelector): boolean {
  for (const [k, v] of Object.entries(sel.matchLabels)) if (labels?.[k] !== v) return false;
  return sel.requirements.every((r) => matchesRequirement(labels, r));
}

/** Whether the selector mentions a label key (in matchLabels or any expression). */
export function selectorMentions(sel: CompiledSelector, key: string): boolean {
  return Object.hasOwn(sel.matchLabels, key) || sel.requirements.some((r) => r.key === key);
}

/**
 * The server-side labelSelector string: matchLabels as `k=v`, plus `extra` terms (already in
 * selector syntax, e.g. `!key` or `key=value`). Keys and values were validated at compile time.
 */
export function serverLabelSelector(matchLabels: Record<string, string>, extra: string[] = []): string {
  const terms = Object.entries(matchLabels)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`);
  return [...terms, ...extra].join(',');
}
