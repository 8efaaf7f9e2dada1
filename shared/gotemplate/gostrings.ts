/**
 * Go's strings and unicode behaviours our strings need: byte-indexed slicing (refusing a cut
 * inside a UTF-8 sequence, which Go would keep as invalid bytes), unicode.IsSpace, simple
 * (one-to-one) case mapping as unicode.ToUpper/ToLower/ToTitle do, strings.Title, Trim sets.
 */
import { GoError, UnsupportedError } from './errors.ts';

export class ByteSliceError extends UnsupportedError {}

/** s[from:to] in bytes, with Go's runtime panic text for bad bounds. */
export function byteSlice(s: string, from: number, to?: number): string {
  const b = Buffer.from(s, 'utf8');
  const end = to ?? b.length;
  if (end > b.length || end < 0) {
    throw new GoError(`runtime error: slice bounds out of range [:${end}] with length ${b.length}`);
  }
  if (from > end || from < 0) throw new GoError(`runtime error: slice bounds out of range [${from}:${end}]`);
  const isCut = (i: number) => i > 0 && i < b.length && (b[i]! & 0xc0) === 0x80;
  if (isCut(from) || isCut(end)) {
    throw new ByteSliceError(
      `cutting the string ${JSON.stringify(s)} at byte ${isCut(from) ? from : end} splits a UTF-8 character (Go would produce invalid UTF-8): not supported`,
    );
  }
  return b.subarray(from, end).toString('utf8');
}

export const byteLen = (s: string) => Buffer.byteLength(s, 'utf8');

/** unicode.IsSpace. */
export function isSpace(cp: number): boolean {
  switch (cp) {
    case 0x09:
    case 0x0a:
    case 0x0b:
    case 0x0c:
    case 0x0d:
    case 0x20:
    case 0x85:
    case 0xa0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202f:
    case 0x205f:
    case 0x3000:
      return true;
  }
  return cp >= 0x2000 && cp <= 0x200a;
}

/** strings.TrimSpace. */
export function trimSpace(s: string): string {
  const cps = [...s];
  let a = 0;
  let b = cps.length;
  while (a < b && isSpace(cps[a]!.codePointAt(0)!)) a++;
  while (b > a && isSpace(cps[b - 1]!.codePointAt(0)!)) b--;
  return cps.slice(a, b).join('');
}

/** strings.Trim(s, cutset). */
export function trimSet(s: string, cutset: string): string {
  const set = new Set([...cutset]);
  const cps = [...s];
  let a = 0;
  let b = cps.length;
  while (a < b && set.has(cps[a]!)) a++;
  while (b > a && set.has(cps[b - 1]!)) b--;
  return cps.slice(a, b).join('');
}

const LETTER = /\p{L}/u;
const UPPER = /\p{Lu}/u;
const LOWER = /\p{Ll}/u;
const TITLE = /\p{Lt}/u;
const DIGIT = /\p{Nd}/u;

function mapOne(ch: string, f: (c: string) => string): string {
  const m = f(ch);
  // Go maps one rune to one rune (simple case mapping); full mappings (ß → SS) do not apply.
  if ([...m].length !== 1) {
    if (ch === '\u0130') return 'i';
    return ch;
  }
  return m;
}

export const toUpperRune = (ch: string) => mapOne(ch, (c) => c.toUpperCase());
export const toLowerRune = (ch: string) => mapOne(ch, (c) => c.toLowerCase());

/** unicode.ToTitle: upper case, except the four digraphs with a title-case form. */
export function toTitleRune(ch: string): string {
  const digraphs: Record<string, string> = {
    Ǆ: 'ǅ',
    ǅ: 'ǅ',
    ǆ: 'ǅ',
    Ǉ: 'ǈ',
    ǈ: 'ǈ',
    ǉ: 'ǈ',
    Ǌ: 'ǋ',
    ǋ: 'ǋ',
    ǌ: 'ǋ',
    Ǳ: 'ǲ',
    ǲ: 'ǲ',
    ǳ: 'ǲ',
  };
  return digraphs[ch] ?? toUpperRune(ch);
}

export const toUpper = (s: string) => [...s].map(toUpperRune).join('');
export const toLower = (s: string) => [...s].map(toLowerRune).join('');

export const isLetter = (ch: string) => LETTER.test(ch);
export const isUpper = (ch: string) => UPPER.test(ch);
export const isLower = (ch: string) => LOWER.test(ch);
export const isTitle = (ch: string) => TITLE.test(ch);
export const isDigit = (ch: string) => DIGIT.test(ch);

/** strings.Title's isSeparator. */
function isSeparator(ch: string): boolean {
  const r = ch.codePointAt(0)!;
  if (r <= 0x7f) {
    if ((r >= 48 && r <= 57) || (r >= 97 && r <= 122) || (r >= 65 && r <= 90) || r === 95) return false;
    return true;
  }
  if (isLetter(ch) || isDigit(ch)) return false;
  return isSpace(r);
}

/** strings.Title. */
export function title(s: string): string {
  let prev = ' ';
  let out = '';
  for (const ch of s) {
    out += isSeparator(prev) ? toTitleRune(ch) : ch;
    prev = ch;
  }
  return out;
}
