/**
 * Kubernetes resource quantities (`4`, `500m`, `16Gi`, `1.5e3`), parsed exactly (as a fraction of
 * BigInts: no float rounding), to compare a NodeType's `resources` with a host's inventory.
 * Grammar: k8s.io/apimachinery resource.Quantity: a signed decimal number, then a binary-SI
 * suffix (Ki..Ei), a decimal-SI suffix (n, u, m, "", k, M, G, T, P, E) or a decimal exponent.
 */

/** An exact value: `num / den`, `den` > 0. */
export interface Quantity {
  readonly num: bigint;
  readonly den: bigint;
}

const FORM = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$/;
const BINARY: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
/** Exponents beyond this are refused (Kubernetes caps quantities far below 10^±100 anyway). */
const MAX_EXPONENT = 100;

/** The quantity, or undefined when `text` is not one. */
export function parseQuantity(text: string): Quantity | undefined {
  if (typeof text !== 'string') return undefined;
  const m = FORM.exec(text.trim() === text ? text : '');
  if (!m) return undefined;
  const [, sign = '', number = '', suffix = ''] = m;
  const [whole = '', fraction = ''] = number.split('.');
  let num = BigInt(`${whole || '0'}${fraction}`) * (sign === '-' ? -1n : 1n);
  let den = 10n ** BigInt(fraction.length);
  let exp10 = 0;
  if (suffix in BINARY) num *= 1n << BigInt(BINARY[suffix]!);
  else if (suffix in DECIMAL) exp10 = DECIMAL[suffix]!;
  else if (suffix !== '') exp10 = Number(suffix.slice(1));
  if (Math.abs(exp10) > MAX_EXPONENT) return undefined;
  if (exp10 > 0) num *= 10n ** BigInt(exp10);
  else if (exp10 < 0) den *= 10n ** BigInt(-exp10);
  return { num, den };
}

/** -1, 0 or 1 as `a` is less than, equal to or greater than `b`. */
export function compareQuantity(a: Quantity, b: Quantity): number {
  const l = a.num * b.den;
  const r = b.num * a.den;
  return l < r ? -1 : l > r ? 1 : 0;
}

/** An integer as a quantity (a count of CPUs, a number of bytes). */
export const quantityOf = (n: bigint | number): Quantity => ({ num: BigInt(n), den: 1n });
