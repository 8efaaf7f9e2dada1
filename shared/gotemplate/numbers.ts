/**
 * Number literals of templates as parse.newNumber reads them (strconv.ParseInt/ParseUint with
 * base 0, ParseFloat, imaginary and complex forms, character constants), with Go's errors.
 */
import type { NumberNode } from './nodes.ts';
import { unquoteChar } from './strconv.ts';

const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;
const U64_MAX = 2n ** 64n - 1n;

/** Go's underscoreOK: underscores only between digits or after a base prefix. */
function underscoreOK(s: string): boolean {
  let saw = '^';
  let i = 0;
  if (s.length >= 1 && (s[0] === '-' || s[0] === '+')) s = s.slice(1);
  let hex = false;
  if (s.length >= 2 && s[0] === '0' && 'bBoOxX'.includes(s[1]!)) {
    i = 2;
    saw = '0';
    hex = s[1] === 'x' || s[1] === 'X';
  }
  for (; i < s.length; i++) {
    const c = s[i]!;
    if ((c >= '0' && c <= '9') || (hex && /[a-fA-F]/.test(c))) {
      saw = '0';
      continue;
    }
    if (c === '_') {
      if (saw !== '0') return false;
      saw = '_';
      continue;
    }
    if (saw === '_') return false;
    saw = '!';
  }
  return saw !== '_';
}

/** strconv.ParseUint(s, 0, 64): the value or null (syntax or range error). */
export function parseUint0(s: string): bigint | null {
  if (s.length === 0) return null;
  let base = 10;
  let body = s;
  if (s[0] === '0') {
    if (s.length >= 3 && (s[1] === 'x' || s[1] === 'X')) {
      base = 16;
      body = s.slice(2);
    } else if (s.length >= 3 && (s[1] === 'b' || s[1] === 'B')) {
      base = 2;
      body = s.slice(2);
    } else if (s.length >= 3 && (s[1] === 'o' || s[1] === 'O')) {
      base = 8;
      body = s.slice(2);
    } else {
      base = 8;
      body = s.slice(1);
      if (body === '') return 0n;
    }
  }
  if (s.includes('_')) {
    if (!underscoreOK(s)) return null;
    body = body.replace(/_/g, '');
  }
  if (body === '') return null;
  const digits = '0123456789abcdef'.slice(0, base);
  let v = 0n;
  for (const ch of body.toLowerCase()) {
    const d = digits.indexOf(ch);
    if (d < 0) return null;
    v = v * BigInt(base) + BigInt(d);
  }
  return v > U64_MAX ? null : v;
}

/** strconv.ParseInt(s, 0, 64). */
export function parseInt0(s: string): bigint | null {
  let neg = false;
  let body = s;
  if (s[0] === '+' || s[0] === '-') {
    neg = s[0] === '-';
    body = s.slice(1);
  }
  const u = parseUint0(body);
  if (u === null) return null;
  const v = neg ? -u : u;
  return v < I64_MIN || v > I64_MAX ? null : v;
}

/** strconv.ParseFloat(s, 64): the value or null (syntax or range error). */
export function parseFloat64(s: string): number | null {
  let t = s;
  if (t.includes('_')) {
    if (!underscoreOK(t)) return null;
    t = t.replace(/_/g, '');
  }
  let sign = 1;
  let body = t;
  if (body[0] === '+' || body[0] === '-') {
    sign = body[0] === '-' ? -1 : 1;
    body = body.slice(1);
  }
  let v: number;
  const hex = /^0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?[pP]([+-]?\d+)$/.exec(body);
  if (hex) {
    const [, int = '', frac = '', exp] = hex;
    if (int === '' && frac === '') return null;
    const mant = BigInt(`0x${int}${frac}` === '0x' ? '0' : `0x${int}${frac}`);
    v = Number(mant) * 2 ** (Number(exp) - 4 * frac.length);
  } else {
    if (!/^(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(body)) return null;
    v = Number(body);
  }
  if (!Number.isFinite(v)) return null;
  return sign * v;
}

type NumberFields = Omit<NumberNode, 'type' | 'pos' | 'tree'>;

function fromFloat(n: NumberFields) {
  const f = n.float64;
  if (Number.isInteger(f) && f >= -(2 ** 63) && f < 2 ** 63) {
    n.isInt = true;
    n.int64 = BigInt(f);
  }
  if (Number.isInteger(f) && f >= 0 && f < 2 ** 64) {
    n.isUint = true;
    n.uint64 = BigInt(f);
  }
}

function simplifyComplex(n: NumberFields) {
  n.isFloat = n.complex.im === 0;
  if (n.isFloat) {
    n.float64 = n.complex.re;
    fromFloat(n);
  }
}

/** parse.newNumber: the fields of a NumberNode, or throws Go's error text. */
export function parseNumber(text: string, kind: 'number' | 'char' | 'complex'): NumberFields {
  const n: NumberFields = {
    isInt: false,
    isUint: false,
    isFloat: false,
    isComplex: false,
    int64: 0n,
    uint64: 0n,
    float64: 0,
    complex: { re: 0, im: 0 },
    text,
  };
  if (kind === 'char') {
    const [ch, next] = unquoteChar(text, 1, "'");
    if (text.slice(next) !== "'") throw new Error(`malformed character constant: ${text}`);
    const r = ch.codePointAt(0)!;
    n.int64 = BigInt(r);
    n.isInt = true;
    n.uint64 = BigInt(r);
    n.isUint = true;
    n.float64 = r;
    n.isFloat = true;
    return n;
  }
  if (kind === 'complex') {
    const m = /^([+-]?[^+-]+(?:[eEpP][+-][^+-]*)?)([+-].*)i$/.exec(text);
    const re = m ? parseFloat64(m[1]!) : null;
    const im = m ? parseFloat64(m[2]!) : null;
    if (re === null || im === null) throw new Error('expected integer');
    n.isComplex = true;
    n.complex = { re, im };
    simplifyComplex(n);
    return n;
  }
  if (text.endsWith('i')) {
    const f = parseFloat64(text.slice(0, -1));
    if (f !== null) {
      n.isComplex = true;
      n.complex = { re: 0, im: f };
      simplifyComplex(n);
      return n;
    }
  }
  const u = parseUint0(text);
  if (u !== null) {
    n.isUint = true;
    n.uint64 = u;
  }
  const i = parseInt0(text);
  if (i !== null) {
    n.isInt = true;
    n.int64 = i;
    if (i === 0n) {
      n.isUint = true;
      n.uint64 = u ?? 0n;
    }
  }
  if (n.isInt) {
    n.isFloat = true;
    n.float64 = Number(n.int64);
  } else if (n.isUint) {
    n.isFloat = true;
    n.float64 = Number(n.uint64);
  } else {
    const f = parseFloat64(text);
    if (f !== null) {
      if (!/[.eEpP]/.test(text)) throw new Error(`integer overflow: ${JSON.stringify(text)}`);
      n.isFloat = true;
      n.float64 = f;
      if (!n.isInt && Number.isInteger(f) && f >= -(2 ** 63) && f < 2 ** 63) {
        n.isInt = true;
        n.int64 = BigInt(f);
      }
      if (!n.isUint && Number.isInteger(f) && f >= 0 && f < 2 ** 64) {
        n.isUint = true;
        n.uint64 = BigInt(f);
      }
    }
  }
  if (!n.isInt && !n.isUint && !n.isFloat) throw new Error(`illegal number syntax: ${JSON.stringify(text)}`);
  return n;
}
