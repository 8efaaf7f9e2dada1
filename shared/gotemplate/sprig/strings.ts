/** sprig v3.2.3 string functions (strings.go, and the goutils helpers they call). */
import { goFunc } from '../builtins.ts';
import { CapError, GoError, UnsupportedError } from '../errors.ts';
import { sprintf } from '../fmt.ts';
import {
  byteLen,
  byteSlice,
  isLower,
  isSpace,
  isTitle,
  isUpper,
  title,
  toLower,
  toLowerRune,
  toTitleRune,
  toUpper,
  toUpperRune,
  trimSet,
  trimSpace,
} from '../gostrings.ts';
import { num, str } from '../reflect.ts';
import { quote as goQuote } from '../strconv.ts';
import { BOOL, type GoFunc, IFACE, INT, MAP_STRING, SLICE_IFACE, SLICE_STRING, STRING } from '../types.ts';
import { GoValue, goString, goStrings, type RV } from '../value.ts';
import { strslice, strval } from './cast.ts';
import { crypto } from './crypto.ts';

const S = STRING;
const s = goString;
const f1 = (fn: (a: string) => string) => goFunc([S], S, ([a]) => s(fn(str(a))));
const f2 = (fn: (a: string, b: string) => string) => goFunc([S, S], S, ([a, b]) => s(fn(str(a), str(b))));
const pred = (fn: (a: string, b: string) => boolean) =>
  goFunc([S, S], BOOL, ([a, b]) => new GoValue(BOOL, fn(str(a), str(b))));

/** goutils.AbbreviateFull (byte-indexed, as Go's). */
function abbreviateFull(st: string, offset: number, maxWidth: number): string {
  if (st === '') return '';
  const len = byteLen(st);
  if (len <= maxWidth) return st;
  if (offset > len) offset = len;
  if (len - offset < maxWidth - 3) offset = len - (maxWidth - 3);
  if (offset <= 4) return `${byteSlice(st, 0, maxWidth - 3)}...`;
  if (maxWidth < 7) return '';
  if (offset + maxWidth - 3 < len) return `...${abbreviateFull(byteSlice(st, offset), 0, maxWidth - 3)}`;
  return `...${byteSlice(st, len - (maxWidth - 3))}`;
}

/** goutils.DeleteWhiteSpace: works on bytes, each byte taken as a rune (Go's behaviour). */
function deleteWhiteSpace(st: string): string {
  if (st === '') return st;
  const bytes = Buffer.from(st, 'utf8');
  let out = '';
  for (const b of bytes) if (!isSpace(b)) out += String.fromCharCode(b);
  return out.length === bytes.length ? st : out;
}

/** goutils.Initials (byte-wise like DeleteWhiteSpace). */
function initials(st: string): string {
  let out = '';
  let gap = true;
  for (const b of Buffer.from(st, 'utf8')) {
    if (isSpace(b)) gap = true;
    else if (gap) {
      out += String.fromCharCode(b);
      gap = false;
    }
  }
  return out;
}

function uncapitalize(st: string): string {
  let next = true;
  let out = '';
  for (const ch of st) {
    if (isSpace(ch.codePointAt(0)!)) {
      next = true;
      out += ch;
    } else if (next) {
      out += toLowerRune(ch);
      next = false;
    } else out += ch;
  }
  return out;
}

function swapCase(st: string): string {
  let ws = true;
  let out = '';
  for (const ch of st) {
    if (isUpper(ch) || isTitle(ch)) {
      out += toLowerRune(ch);
      ws = false;
    } else if (isLower(ch)) {
      out += ws ? toTitleRune(ch) : toUpperRune(ch);
      ws = false;
    } else {
      ws = isSpace(ch.codePointAt(0)!);
      out += ch;
    }
  }
  return out;
}

/** goutils.WrapCustom (byte offsets, words split at ' '). */
function wrapCustom(st: string, wrapLength: number, newLine: string, wrapLong: boolean): string {
  if (st === '') return '';
  if (newLine === '') newLine = '\n';
  if (wrapLength < 1) wrapLength = 1;
  const b = Buffer.from(st, 'utf8');
  const len = b.length;
  const sl = (x: number, y?: number) => byteSlice(st, x, y);
  let offset = 0;
  let out = '';
  while (len - offset > wrapLength) {
    if (b[offset] === 0x20) {
      offset++;
      continue;
    }
    const end = wrapLength + offset + 1;
    const space = b.subarray(offset, end).lastIndexOf(0x20);
    if (space >= 0) {
      out += sl(offset, offset + space) + newLine;
      offset = offset + space + 1;
    } else if (wrapLong) {
      out += sl(offset, wrapLength + offset) + newLine;
      offset += wrapLength;
    } else {
      const e = wrapLength + offset;
      const index = b.subarray(e).indexOf(0x20);
      if (index === -1) {
        out += sl(offset);
        offset = len;
      } else {
        out += sl(offset, index + e) + newLine;
        offset = index + e + 1;
      }
    }
  }
  return out + sl(offset);
}

function substr(start: number, end: number, st: string): string {
  if (start < 0) return byteSlice(st, 0, end);
  if (end < 0 || end > byteLen(st)) return byteSlice(st, start);
  return byteSlice(st, start, end);
}

function trunc(c: number, st: string): string {
  const len = byteLen(st);
  if (c < 0 && len + c > 0) return byteSlice(st, len + c);
  if (c >= 0 && len > c) return byteSlice(st, 0, c);
  return st;
}

function splitMap(parts: string[]): GoValue {
  return new GoValue(MAP_STRING, new Map(parts.map((p, i) => [`_${i}`, s(p)])));
}

/** strings.Split. */
export function goSplit(st: string, sep: string, n = -1): string[] {
  if (n === 0) return [];
  if (sep === '') {
    const cps = [...st];
    if (n > 0 && cps.length > n) return [...cps.slice(0, n - 1), cps.slice(n - 1).join('')];
    return cps;
  }
  const parts = st.split(sep);
  if (n > 0 && parts.length > n) return [...parts.slice(0, n - 1), parts.slice(n - 1).join(sep)];
  return parts;
}

const hash = (alg: string, st: string) => crypto().createHash(alg).update(st, 'utf8').digest('hex');

function adler32(st: string): number {
  let a = 1;
  let b = 0;
  for (const byte of Buffer.from(st, 'utf8')) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  return ((b << 16) | a) >>> 0;
}

function base64decode(v: string): string {
  // Go's StdEncoding is strict: padding required, no whitespace except \r \n (ignored).
  const clean = v.replace(/[\r\n]/g, '');
  const idx = clean.search(/[^A-Za-z0-9+/=]/);
  if (idx >= 0) return `illegal base64 data at input byte ${byteLen(clean.slice(0, idx))}`;
  if (clean.length % 4 !== 0 || /=[^=]/.test(clean) || /={3,}$/.test(clean)) {
    const bad = clean.length % 4 !== 0 ? clean.length - (clean.length % 4) : clean.indexOf('=');
    return `illegal base64 data at input byte ${Math.max(bad, 0)}`;
  }
  return strictUtf8(Buffer.from(clean, 'base64'));
}

const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

function base32encode(v: string): string {
  const bytes = Buffer.from(v, 'utf8');
  let out = '';
  for (let i = 0; i < bytes.length; i += 5) {
    const chunk = bytes.subarray(i, i + 5);
    let bits = 0n;
    for (let k = 0; k < 5; k++) bits = (bits << 8n) | BigInt(chunk[k] ?? 0);
    const n = [0, 2, 4, 5, 7, 8][chunk.length]!;
    for (let k = 0; k < 8; k++) out += k < n ? B32[Number((bits >> BigInt(35 - 5 * k)) & 31n)] : '=';
  }
  return out;
}

function base32decode(v: string): string {
  const clean = v.replace(/[\r\n]/g, '');
  if (clean.length % 8 !== 0) return `illegal base32 data at input byte ${clean.length - (clean.length % 8)}`;
  const bytes: number[] = [];
  for (let i = 0; i < clean.length; i += 8) {
    const block = clean.slice(i, i + 8);
    const pad = block.indexOf('=');
    const data = pad < 0 ? block : block.slice(0, pad);
    if (pad >= 0 && !/^=+$/.test(block.slice(pad))) return `illegal base32 data at input byte ${i + pad}`;
    const nbytes = { 8: 5, 7: 4, 5: 3, 4: 2, 2: 1 }[data.length];
    if (nbytes === undefined || (pad >= 0 && i + 8 < clean.length))
      return `illegal base32 data at input byte ${i + Math.max(pad, 0)}`;
    let bits = 0n;
    for (let k = 0; k < 8; k++) {
      const c = k < data.length ? B32.indexOf(data[k]!) : 0;
      if (c < 0) return `illegal base32 data at input byte ${i + k}`;
      bits = (bits << 5n) | BigInt(c);
    }
    for (let k = 0; k < nbytes; k++) bytes.push(Number((bits >> BigInt(32 - 8 * k)) & 255n));
  }
  return strictUtf8(Buffer.from(bytes));
}

/** Decoded bytes as a string; bytes that are not UTF-8 cannot be held exactly: refuse. */
function strictUtf8(b: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(b);
  } catch {
    throw new UnsupportedError('the decoded bytes are not valid UTF-8 (Go would keep them as raw bytes)');
  }
}

export const STRING_FUNCS: Record<string, GoFunc> = {
  hello: goFunc([], S, () => s('Hello!')),
  abbrev: goFunc([INT, S], S, ([w, a]) => s(num(w) < 4 ? str(a) : abbreviateFull(str(a), 0, num(w)))),
  abbrevboth: goFunc([INT, INT, S], S, ([l, r, a]) =>
    s(num(r) < 4 || (num(l) > 0 && num(r) < 7) ? str(a) : abbreviateFull(str(a), num(l), num(r))),
  ),
  trunc: goFunc([INT, S], S, ([c, a]) => s(trunc(num(c), str(a)))),
  trim: f1(trimSpace),
  upper: f1(toUpper),
  lower: f1(toLower),
  title: f1(title),
  untitle: f1(uncapitalize),
  substr: goFunc([INT, INT, S], S, ([a, b, c]) => s(substr(num(a), num(b), str(c)))),
  repeat: goFunc([INT, S], S, ([n, a]) => s(str(a).repeat(capRepeat(num(n), str(a))))),
  trimall: f2((a, b) => trimSet(b, a)),
  trimAll: f2((a, b) => trimSet(b, a)),
  trimSuffix: f2((a, b) => (a !== '' && b.endsWith(a) ? b.slice(0, b.length - a.length) : b)),
  trimPrefix: f2((a, b) => (b.startsWith(a) ? b.slice(a.length) : b)),
  nospace: f1(deleteWhiteSpace),
  initials: f1(initials),
  swapcase: f1(swapCase),
  wrap: goFunc([INT, S], S, ([l, a]) => s(wrapCustom(str(a), num(l), '', false))),
  wrapWith: goFunc([INT, S, S], S, ([l, sep, a]) => s(wrapCustom(str(a), num(l), str(sep), true))),
  contains: pred((a, b) => b.includes(a)),
  hasPrefix: pred((a, b) => b.startsWith(a)),
  hasSuffix: pred((a, b) => b.endsWith(a)),
  quote: goFunc(
    [SLICE_IFACE],
    S,
    (args: RV[]) =>
      s(
        args
          .filter((x) => x !== null)
          .map((x) => goQuote(strval(x)))
          .join(' '),
      ),
    { variadic: true },
  ),
  squote: goFunc(
    [SLICE_IFACE],
    S,
    (args: RV[]) =>
      s(
        args
          .filter((x) => x !== null)
          .map((x) => sprintf("'%v'", [x]))
          .join(' '),
      ),
    { variadic: true },
  ),
  cat: goFunc(
    [SLICE_IFACE],
    S,
    (args: RV[]) => {
      const v = args.filter((x) => x !== null);
      return s(sprintf(trimSpace('%v '.repeat(v.length)), v));
    },
    { variadic: true },
  ),
  indent: goFunc([INT, S], S, ([n, v]) => {
    const pad = ' '.repeat(capRepeat(num(n), ' '));
    return s(pad + str(v).replaceAll('\n', `\n${pad}`));
  }),
  nindent: goFunc([INT, S], S, ([n, v]) => {
    const pad = ' '.repeat(capRepeat(num(n), ' '));
    return s(`\n${pad}${str(v).replaceAll('\n', `\n${pad}`)}`);
  }),
  replace: goFunc([S, S, S], S, ([o, n, src]) => s(goReplace(str(src), str(o), str(n)))),
  plural: goFunc([S, S, INT], S, ([one, many, c]) => (num(c) === 1 ? one : many)),
  sha1sum: f1((a) => hash('sha1', a)),
  sha256sum: f1((a) => hash('sha256', a)),
  adler32sum: f1((a) => String(adler32(a))),
  toString: goFunc([IFACE], S, ([v]) => s(strval(v))),
  split: goFunc([S, S], MAP_STRING, ([sep, orig]) => splitMap(goSplit(str(orig), str(sep)))),
  splitList: goFunc([S, S], SLICE_STRING, ([sep, orig]) => goStrings(goSplit(str(orig), str(sep)))),
  splitn: goFunc([S, INT, S], MAP_STRING, ([sep, n, orig]) => splitMap(goSplit(str(orig), str(sep), num(n)))),
  toStrings: goFunc([IFACE], SLICE_STRING, ([v]) => goStrings(strslice(v))),
  join: goFunc([S, IFACE], S, ([sep, v]) => s(strslice(v).join(str(sep)))),
  b64enc: f1((a) => Buffer.from(a, 'utf8').toString('base64')),
  b64dec: f1(base64decode),
  b32enc: f1(base32encode),
  b32dec: f1(base32decode),
};

/** strings.Replace(s, old, new, -1): an empty old inserts new around every rune. */
function goReplace(src: string, old: string, nw: string): string {
  if (old === nw) return src;
  if (old === '') return `${nw}${[...src].join(nw)}${src === '' ? '' : nw}`;
  return src.split(old).join(nw);
}

/** The output cap applies to strings built by repeat/indent too (checked by the engine). */
let repeatCap = Number.POSITIVE_INFINITY;
export function setRepeatCap(n: number) {
  repeatCap = n;
}
/** strings.Repeat's count check (a negative count panics), then our output cap. */
function capRepeat(count: number, unit: string): number {
  if (count < 0) throw new GoErrorPanic('strings: negative Repeat count');
  if (count === 0) return 0;
  if (count * Math.max(unit.length, 1) > repeatCap) {
    throw new CapRepeatError(
      `a repeated string of ${count} × ${unit.length} characters exceeds the output cap`,
    );
  }
  return count;
}

class CapRepeatError extends CapError {}
class GoErrorPanic extends GoError {}
