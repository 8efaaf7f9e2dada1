/**
 * sprig v3.2.3 math functions (numeric.go): int64 arithmetic with Go's wrap-around, cast's
 * conversions, and the decimal (shopspring) float operations addf/subf/mulf/divf.
 */
import { goFunc } from '../builtins.ts';
import { GoError } from '../errors.ts';
import { sprint } from '../fmt.ts';
import { parseInt0 } from '../numbers.ts';
import { num, str } from '../reflect.ts';
import { formatFloat } from '../strconv.ts';
import { FLOAT64, type GoFunc, IFACE, INT, INT64, SLICE_IFACE, STRING, sliceOf } from '../types.ts';
import { goFloat, goInt, goInt64, type RV } from '../value.ts';
import { toFloat64, toInt, toInt64 } from './cast.ts';
import { crypto } from './crypto.ts';

const wrap = (n: bigint) => BigInt.asIntN(64, n);
const divZero = () => new GoError('runtime error: integer divide by zero');

/** A decimal as shopspring's NewFromFloat makes it: the shortest digits of the float. */
interface Dec {
  m: bigint;
  e: number;
}

function decFromFloat(f: number): Dec {
  if (!Number.isFinite(f)) throw new GoError(`Cannot create a Decimal from ${formatFloat(f, 'g', -1)}`);
  const s = formatFloat(Math.abs(f), 'e', -1);
  const [mant, exp] = s.split('e') as [string, string];
  const digits = mant.replace('.', '');
  const e = Number(exp) - (digits.length - 1);
  return { m: BigInt(digits) * (f < 0 ? -1n : 1n), e };
}

function align(a: Dec, b: Dec): [bigint, bigint, number] {
  const e = Math.min(a.e, b.e);
  return [a.m * 10n ** BigInt(a.e - e), b.m * 10n ** BigInt(b.e - e), e];
}

const decToFloat = (d: Dec) => Number(`${d.m}e${d.e}`);

function decDiv(a: Dec, b: Dec): Dec {
  if (b.m === 0n) throw new GoError('decimal division by 0');
  // DivRound(d2, 16): 16 decimal places, half away from zero.
  const prec = 16;
  // a/b = (a.m/b.m) * 10^(a.e-b.e); scale to 10^-prec.
  const shift = a.e - b.e + prec;
  let n = a.m;
  let d = b.m;
  if (shift >= 0) n *= 10n ** BigInt(shift);
  else d *= 10n ** BigInt(-shift);
  let q = n / d;
  const r = n % d;
  const twice = (r < 0n ? -r : r) * 2n;
  const ad = d < 0n ? -d : d;
  if (twice >= ad) q += n < 0n !== d < 0n ? -1n : 1n;
  return { m: q, e: -prec };
}

function decOp(a: RV, rest: RV[], op: (x: Dec, y: Dec) => Dec): number {
  let acc = decFromFloat(toFloat64(a));
  for (const x of rest) acc = op(acc, decFromFloat(toFloat64(x)));
  return decToFloat(acc);
}

const add = (x: Dec, y: Dec): Dec => {
  const [p, q, e] = align(x, y);
  return { m: p + q, e };
};
const sub = (x: Dec, y: Dec): Dec => {
  const [p, q, e] = align(x, y);
  return { m: p - q, e };
};
const mul = (x: Dec, y: Dec): Dec => ({ m: x.m * y.m, e: x.e + y.e });

function round(a: RV, p: bigint, rOpt: RV[]): number {
  const roundOn = rOpt.length > 0 ? (rOpt[0]!.v as number) : 0.5;
  const val = toFloat64(a);
  const pow = 10 ** Number(p);
  const digit = pow * val;
  const frac = digit - Math.trunc(digit);
  return (frac >= roundOn ? Math.ceil(digit) : Math.floor(digit)) / pow;
}

/** toDecimal: ParseInt(fmt.Sprint(v), 8, 64), 0 on error. */
function toDecimal(v: RV): bigint {
  const s = sprint([v]);
  if (!/^[+-]?[0-7]+$/.test(s)) return 0n;
  const r = parseInt0(s.replace(/^([+-]?)/, '$10o'));
  return r ?? 0n;
}

const I = IFACE;
const VI = SLICE_IFACE;

export const NUMERIC_FUNCS: Record<string, GoFunc> = {
  atoi: goFunc([STRING], INT, ([a]) => {
    // strconv.Atoi: errors give 0, except out of range, which gives the clamped value.
    const s = str(a);
    if (!/^[+-]?\d+$/.test(s)) return goInt(0);
    const v = BigInt(s);
    const max = 2n ** 63n - 1n;
    return goInt(v > max ? max : v < -max - 1n ? -max - 1n : v);
  }),
  int64: goFunc([I], INT64, ([a]) => goInt64(toInt64(a))),
  int: goFunc([I], INT, ([a]) => goInt(toInt(a))),
  float64: goFunc([I], FLOAT64, ([a]) => goFloat(toFloat64(a))),
  toDecimal: goFunc([I], INT64, ([a]) => goInt64(toDecimal(a))),
  add1: goFunc([I], INT64, ([a]) => goInt64(wrap(toInt64(a) + 1n))),
  add: goFunc([VI], INT64, (xs: RV[]) => goInt64(xs.reduce((acc, x) => wrap(acc + toInt64(x)), 0n)), {
    variadic: true,
  }),
  sub: goFunc([I, I], INT64, ([a, b]) => goInt64(wrap(toInt64(a) - toInt64(b)))),
  div: goFunc([I, I], INT64, ([a, b]) => {
    const d = toInt64(b);
    if (d === 0n) throw divZero();
    return goInt64(wrap(toInt64(a) / d));
  }),
  mod: goFunc([I, I], INT64, ([a, b]) => {
    const d = toInt64(b);
    if (d === 0n) throw divZero();
    return goInt64(wrap(toInt64(a) % d));
  }),
  mul: goFunc(
    [I, VI],
    INT64,
    ([a, ...v]) => goInt64(v.reduce((acc: bigint, x: RV) => wrap(acc * toInt64(x)), toInt64(a))),
    {
      variadic: true,
    },
  ),
  randInt: goFunc([INT, INT], INT, ([a, b]) => {
    const lo = num(a);
    const n = num(b) - lo;
    if (n <= 0) throw new GoError('invalid argument to Intn');
    return goInt(crypto().randomInt(n) + lo);
  }),
  add1f: goFunc([I], FLOAT64, ([a]) => goFloat(decOp(a, [goInt(1)], add))),
  addf: goFunc([VI], FLOAT64, (xs: RV[]) => goFloat(decOp(goFloat(0), xs, add)), { variadic: true }),
  subf: goFunc([I, VI], FLOAT64, ([a, ...v]) => goFloat(decOp(a, v, sub)), { variadic: true }),
  mulf: goFunc([I, VI], FLOAT64, ([a, ...v]) => goFloat(decOp(a, v, mul)), { variadic: true }),
  divf: goFunc([I, VI], FLOAT64, ([a, ...v]) => goFloat(decOp(a, v, decDiv)), { variadic: true }),
  biggest: goFunc(
    [I, VI],
    INT64,
    ([a, ...v]) => goInt64(v.reduce((m: bigint, x: RV) => (toInt64(x) > m ? toInt64(x) : m), toInt64(a))),
    {
      variadic: true,
    },
  ),
  max: goFunc(
    [I, VI],
    INT64,
    ([a, ...v]) => goInt64(v.reduce((m: bigint, x: RV) => (toInt64(x) > m ? toInt64(x) : m), toInt64(a))),
    {
      variadic: true,
    },
  ),
  min: goFunc(
    [I, VI],
    INT64,
    ([a, ...v]) => goInt64(v.reduce((m: bigint, x: RV) => (toInt64(x) < m ? toInt64(x) : m), toInt64(a))),
    {
      variadic: true,
    },
  ),
  maxf: goFunc(
    [I, VI],
    FLOAT64,
    ([a, ...v]) => goFloat(v.reduce((m: number, x: RV) => goMax(m, toFloat64(x)), toFloat64(a))),
    {
      variadic: true,
    },
  ),
  minf: goFunc(
    [I, VI],
    FLOAT64,
    ([a, ...v]) => goFloat(v.reduce((m: number, x: RV) => goMin(m, toFloat64(x)), toFloat64(a))),
    {
      variadic: true,
    },
  ),
  ceil: goFunc([I], FLOAT64, ([a]) => goFloat(Math.ceil(toFloat64(a)))),
  floor: goFunc([I], FLOAT64, ([a]) => goFloat(Math.floor(toFloat64(a)))),
  round: goFunc([I, INT, sliceOf(FLOAT64)], FLOAT64, ([a, p, ...r]) => goFloat(round(a, p.v, r)), {
    variadic: true,
  }),
};

/** math.Max / math.Min: an infinity of the right sign wins even over NaN (JS lets NaN win). */
function goMax(x: number, y: number): number {
  if (x === Infinity || y === Infinity) return Infinity;
  return Math.max(x, y);
}
function goMin(x: number, y: number): number {
  if (x === -Infinity || y === -Infinity) return -Infinity;
  return Math.min(x, y);
}
