/**
 * Go's strconv as fmt and the template engine use it: float formatting (shortest and fixed
 * precision, ties to even on the exact binary value), string quoting, unquoting of template
 * literals, and Go's notion of a printable rune.
 */

/** Decimal digits of a float: value = 0.d1d2d3… × 10^dp (no leading or trailing zeros in d). */
export interface Digits {
  d: string;
  dp: number;
}

function trimDigits(d: string, dp: number): Digits {
  let end = d.length;
  while (end > 0 && d[end - 1] === '0') end--;
  let start = 0;
  while (start < end && d[start] === '0') {
    start++;
    dp--;
  }
  if (start === end) return { d: '', dp: 0 };
  return { d: d.slice(start, end), dp };
}

/** The shortest digits that read back as x (Ryu's answer; JS's Number-to-String gives the same). */
export function shortestDigits(x: number): Digits {
  if (x === 0) return { d: '', dp: 0 };
  const [mant, exp] = Math.abs(x).toExponential().split('e') as [string, string];
  return trimDigits(mant.replace('.', ''), Number(exp) + 1);
}

/** Every decimal digit of the binary value of x (exact). */
export function exactDigits(x: number): Digits {
  if (x === 0) return { d: '', dp: 0 };
  const buf = new DataView(new ArrayBuffer(8));
  buf.setFloat64(0, Math.abs(x));
  const bits = buf.getBigUint64(0);
  const bexp = Number((bits >> 52n) & 0x7ffn);
  let mant = bits & ((1n << 52n) - 1n);
  let e2: number;
  if (bexp === 0) e2 = -1074;
  else {
    mant |= 1n << 52n;
    e2 = bexp - 1075;
  }
  if (e2 >= 0) {
    const s = (mant << BigInt(e2)).toString();
    return trimDigits(s, s.length);
  }
  const s = (mant * 5n ** BigInt(-e2)).toString();
  return trimDigits(s, s.length + e2);
}

/** Round to nd digits, ties to even (strconv's decimal.Round). */
export function roundDigits(x: Digits, nd: number): Digits {
  if (nd < 0) return { d: '', dp: 0 };
  if (nd >= x.d.length) return x;
  const c = x.d.charCodeAt(nd) - 48;
  let up: boolean;
  if (c === 5 && nd + 1 === x.d.length) up = nd > 0 && (x.d.charCodeAt(nd - 1) - 48) % 2 === 1;
  else up = c >= 5;
  if (!up) return trimDigits(x.d.slice(0, nd), x.dp);
  const ds = x.d.slice(0, nd).split('');
  let i = nd - 1;
  while (i >= 0 && ds[i] === '9') i--;
  if (i < 0) return { d: '1', dp: x.dp + 1 };
  ds[i] = String.fromCharCode(ds[i]!.charCodeAt(0) + 1);
  return trimDigits(ds.slice(0, i + 1).join(''), x.dp);
}

function fmtE(ds: Digits, prec: number, e: string): string {
  let s = ds.d.length === 0 ? '0' : ds.d[0]!;
  if (prec > 0) {
    s += '.';
    for (let i = 1; i <= prec; i++) s += i < ds.d.length ? ds.d[i] : '0';
  }
  const exp = ds.d.length === 0 ? 0 : ds.dp - 1;
  const a = Math.abs(exp);
  return `${s}${e}${exp < 0 ? '-' : '+'}${a < 10 ? '0' : ''}${a}`;
}

function fmtF(ds: Digits, prec: number): string {
  let s = '';
  if (ds.dp > 0) {
    s = ds.d.slice(0, ds.dp);
    if (ds.d.length < ds.dp) s += '0'.repeat(ds.dp - ds.d.length);
  } else s = '0';
  if (prec > 0) {
    s += '.';
    for (let i = 1; i <= prec; i++) {
      const j = ds.dp + i - 1;
      s += j >= 0 && j < ds.d.length ? ds.d[j] : '0';
    }
  }
  return s;
}

/**
 * strconv.FormatFloat(x, fmt, prec, 64) for fmt in e E f F g G; prec < 0 = shortest. Infinities
 * and NaN as Go writes them (+Inf, -Inf, NaN).
 */
export function formatFloat(x: number, fmt: string, prec: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? '+Inf' : '-Inf';
  const neg = x < 0 || Object.is(x, -0);
  const sign = neg ? '-' : '';
  const shortest = prec < 0;
  let ds: Digits;
  const lower = fmt.toLowerCase();
  if (shortest) {
    ds = shortestDigits(x);
    if (lower === 'e') prec = Math.max(ds.d.length - 1, 0);
    else if (lower === 'f') prec = Math.max(ds.d.length - ds.dp, 0);
    else prec = ds.d.length;
  } else {
    const exact = exactDigits(x);
    if (lower === 'e') ds = roundDigits(exact, prec + 1);
    else if (lower === 'f') ds = roundDigits(exact, exact.dp + prec);
    else {
      if (prec === 0) prec = 1;
      ds = roundDigits(exact, prec);
    }
  }
  const e = fmt === 'E' || fmt === 'G' ? 'E' : 'e';
  if (lower === 'e') return sign + fmtE(ds, prec, e);
  if (lower === 'f') return sign + fmtF(ds, prec);
  let eprec = prec;
  if (eprec > ds.d.length && ds.d.length >= ds.dp) eprec = ds.d.length;
  if (shortest) eprec = 6;
  const exp = ds.dp - 1;
  if (exp < -4 || exp >= eprec) {
    if (prec > ds.d.length) prec = ds.d.length;
    return sign + fmtE(ds, prec - 1, e);
  }
  if (prec > ds.dp) prec = ds.d.length;
  return sign + fmtF(ds, Math.max(prec - ds.dp, 0));
}

const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;
const GRAPHIC_SPACE = /^\p{Zs}$/u;

/** unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
export function isPrint(cp: number): boolean {
  if (cp < 0x80) return cp >= 0x20 && cp < 0x7f;
  return PRINTABLE.test(String.fromCodePoint(cp));
}

/** unicode.IsGraphic: IsPrint plus the other Zs spaces. */
export function isGraphic(cp: number): boolean {
  return isPrint(cp) || GRAPHIC_SPACE.test(String.fromCodePoint(cp));
}

const hex2 = (n: number) => n.toString(16).padStart(2, '0');

/** strconv.Quote / QuoteToASCII / QuoteRune with the given quote character. */
export function quoteWith(s: string, quote: '"' | "'", asciiOnly: boolean, graphicOnly = false): string {
  let out = quote;
  for (const ch of s) {
    const r = ch.codePointAt(0)!;
    if (r === quote.charCodeAt(0) || r === 0x5c) {
      out += `\\${ch}`;
      continue;
    }
    if (asciiOnly ? r < 0x80 && isPrint(r) : graphicOnly ? isGraphic(r) : isPrint(r)) {
      out += ch;
      continue;
    }
    switch (r) {
      case 7:
        out += '\\a';
        break;
      case 8:
        out += '\\b';
        break;
      case 12:
        out += '\\f';
        break;
      case 10:
        out += '\\n';
        break;
      case 13:
        out += '\\r';
        break;
      case 9:
        out += '\\t';
        break;
      case 11:
        out += '\\v';
        break;
      default:
        if (r < 0x20 || r === 0x7f) out += `\\x${hex2(r)}`;
        else if (r >= 0xd800 && r <= 0xdfff) out += '\\ufffd';
        else if (r < 0x10000) out += `\\u${r.toString(16).padStart(4, '0')}`;
        else out += `\\U${r.toString(16).padStart(8, '0')}`;
    }
  }
  return out + quote;
}

export const quote = (s: string) => quoteWith(s, '"', false);

/** strconv.CanBackquote. */
export function canBackquote(s: string): boolean {
  for (const ch of s) {
    const r = ch.codePointAt(0)!;
    if (r === 0xfeff) return false;
    if ((r < 0x20 && r !== 9) || r === 0x60 || r === 0x7f) return false;
  }
  return true;
}

/** strconv.Unquote for template string, raw string and character literals. */
export function unquote(lit: string): string {
  const q = lit[0];
  if (lit.length < 2 || lit[lit.length - 1] !== q) throw new Error('invalid syntax');
  const body = lit.slice(1, -1);
  if (q === '`') {
    if (body.includes('`')) throw new Error('invalid syntax');
    return body.replace(/\r/g, '');
  }
  if (q !== '"' && q !== "'") throw new Error('invalid syntax');
  let out = '';
  let i = 0;
  while (i < body.length) {
    const [s, next] = unquoteChar(body, i, q);
    out += s;
    i = next;
  }
  if (q === "'" && [...out].length !== 1) throw new Error('invalid syntax');
  return out;
}

const SIMPLE: Record<string, string> = {
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
};

/** strconv.UnquoteChar: one (possibly escaped) character at s[i]; returns it and the next index. */
export function unquoteChar(s: string, i: number, q: string): [string, number] {
  const c = s[i]!;
  if (c === q && (q === "'" || q === '"')) throw new Error('invalid syntax');
  if (c !== '\\') {
    const cp = s.codePointAt(i)!;
    return [String.fromCodePoint(cp), i + (cp > 0xffff ? 2 : 1)];
  }
  const e = s[i + 1];
  if (e === undefined) throw new Error('invalid syntax');
  if (e in SIMPLE) return [SIMPLE[e]!, i + 2];
  if (e === q) return [q, i + 2];
  const hexLen = e === 'x' ? 2 : e === 'u' ? 4 : e === 'U' ? 8 : 0;
  if (hexLen > 0) {
    const h = s.slice(i + 2, i + 2 + hexLen);
    if (h.length < hexLen || !/^[0-9a-fA-F]+$/.test(h)) throw new Error('invalid syntax');
    const v = Number.parseInt(h, 16);
    if (e === 'x') {
      // A \x escape is one byte; above 0x7f it is not a character on its own.
      if (v >= 0x80) throw new UnsupportedByteError();
      return [String.fromCharCode(v), i + 2 + hexLen];
    }
    if (v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) throw new Error('invalid syntax');
    return [String.fromCodePoint(v), i + 2 + hexLen];
  }
  if (e >= '0' && e <= '7') {
    const o = s.slice(i + 1, i + 4);
    if (!/^[0-7]{3}$/.test(o)) throw new Error('invalid syntax');
    const v = Number.parseInt(o, 8);
    if (v > 255) throw new Error('invalid syntax');
    if (v >= 0x80) throw new UnsupportedByteError();
    return [String.fromCharCode(v), i + 4];
  }
  throw new Error('invalid syntax');
}

/** A literal holding a raw byte ≥ 0x80 (not valid UTF-8 alone): Go keeps it, we refuse. */
export class UnsupportedByteError extends Error {
  constructor() {
    super('string literals with \\x or octal escapes of bytes above 0x7f are not supported');
  }
}

/** Bytes of the UTF-8 encoding (Go strings are bytes). */
export const utf8Len = (s: string) => Buffer.byteLength(s, 'utf8');
