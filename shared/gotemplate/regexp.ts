/**
 * Go's regexp (RE2 syntax, leftmost-first) on JavaScript's engine. A Go pattern is translated to
 * an equivalent JS pattern where the meaning is the same, and refused where it would differ:
 *  - Go syntax JS lacks is rewritten: \A \z, (?P<name>…), \Q…\E, [[:alpha:]], \pL, (?s) (?m)
 *    (?U) at any position, and `.`/`\s`/`^`/`$` get Go's exact sets (JS's `.` also stops at \r,
 *    U+2028; JS's \s has \v and Unicode spaces; JS's multiline ^$ also break at \r).
 *  - Patterns Go rejects are rejected with Go's message (backreferences, lookaround, repeat
 *    counts over 1000, unbalanced parentheses, …).
 *  - Refused (no exact JS equivalent): case-insensitivity switched on in the middle of a
 *    pattern, negated classes (\S \W \D \P) or negated POSIX classes inside brackets, and \C.
 * Matching loops (FindAll, ReplaceAll, Split) follow Go's rules for empty matches; `$1`/`${name}`
 * expansion follows Go's Expand (`$1x` names group "1x").
 */

import { UnsupportedError } from './errors.ts';

export class RegexpSyntaxError extends Error {}
export class RegexpUnsupportedError extends UnsupportedError {}

function fail(code: string, expr: string): never {
  throw new RegexpSyntaxError(`error parsing regexp: ${code}: \`${expr}\``);
}

const POSIX: Record<string, string> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7F',
  blank: '\\t ',
  cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-\\/:-@\\[-`{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

const GO_SPACE = '\\t\\n\\f\\r ';
const JS_SYNTAX = new Set('^$\\.*+?()[]{}|/'.split(''));
const CATEGORIES = new Set(
  'C Cc Cf Co Cs L Ll Lm Lo Lt Lu M Mc Me Mn N Nd Nl No P Pc Pd Pe Pf Pi Po Ps S Sc Sk Sm So Z Zl Zp Zs'.split(
    ' ',
  ),
);

function jsLiteral(ch: string, inClass: boolean): string {
  if (JS_SYNTAX.has(ch) || (inClass && ch === '-')) return `\\${ch}`;
  const cp = ch.codePointAt(0)!;
  if (cp < 0x20 || cp === 0x7f) return `\\x${cp.toString(16).padStart(2, '0')}`;
  return ch;
}

function unicodeClass(name: string, negated: boolean, whole: string): string {
  let n = name;
  let neg = negated;
  if (n.startsWith('^')) {
    n = n.slice(1);
    neg = !neg;
  }
  let body = '';
  if (n === 'Any') return neg ? '[^\\s\\S]' : '[\\s\\S]';
  if (CATEGORIES.has(n)) body = n;
  else if (/^[A-Z][A-Za-z_]*$/.test(n)) {
    body = `Script=${n}`;
    try {
      new RegExp(`\\p{${body}}`, 'u');
    } catch {
      fail('invalid character class range', whole);
    }
  } else fail('invalid character class range', whole);
  return `\\${neg ? 'P' : 'p'}{${body}}`;
}

export interface Translated {
  source: string;
  flags: string;
  names: string[];
  numGroups: number;
}

/** Translate a Go RE2 pattern; throws RegexpSyntaxError (Go's text) or RegexpUnsupportedError. */
export function translate(expr: string): Translated {
  const chars = [...expr];
  let i = 0;
  let out = '';
  const flagStack: { i: boolean; m: boolean; s: boolean; U: boolean }[] = [];
  let fl = { i: false, m: false, s: false, U: false };
  let globalI = false;
  const names: string[] = [''];
  let depth = 0;
  // Whether the last emitted item can take a repetition operator, and whether it is one.
  let lastAtom = false;
  let lastRepeat = '';

  const peek = (k = 0) => chars[i + k];
  const rest = () => chars.slice(i).join('');

  const parseFlags = (start: number): void => {
    // (?flags) or (?flags:
    let neg = false;
    let sawFlag = false;
    const f = { ...fl };
    for (;;) {
      const c = peek();
      if (c === undefined) fail('missing closing )', chars.slice(start).join(''));
      i++;
      if (c === 'i' || c === 'm' || c === 's' || c === 'U') {
        f[c] = !neg;
        sawFlag = true;
        continue;
      }
      if (c === '-') {
        if (neg) fail('invalid or unsupported Perl syntax', chars.slice(start, i).join(''));
        neg = true;
        sawFlag = false;
        continue;
      }
      if (c === ':' || c === ')') {
        if (neg && !sawFlag) fail('invalid or unsupported Perl syntax', chars.slice(start, i).join(''));
        if (f.i !== fl.i) {
          if (start === 0 && out === '' && c === ')' && f.i) globalI = true;
          else if (!(globalI && f.i)) {
            throw new RegexpUnsupportedError(
              `case-insensitive matching switched on or off inside the pattern (${chars.slice(start, i).join('')}) is not supported; put (?i) at the very start`,
            );
          }
        }
        if (c === ':') {
          flagStack.push(fl);
          fl = f;
          depth++;
          out += '(?:';
          lastAtom = false;
          lastRepeat = '';
        } else {
          fl = f;
        }
        return;
      }
      fail('invalid or unsupported Perl syntax', chars.slice(start, i).join(''));
    }
  };

  const parseEscape = (inClass: boolean): string => {
    const start = i;
    i++; // the backslash
    const c = peek();
    if (c === undefined) fail('trailing backslash at end of expression', '');
    i++;
    if (/[1-7]/.test(c!) && !/[0-7]/.test(peek() ?? '')) fail('invalid escape sequence', `\\${c}`);
    if (/[0-7]/.test(c!)) {
      let oct = c!;
      for (let k = 0; k < 2 && /[0-7]/.test(peek() ?? ''); k++) oct += chars[i++];
      return jsLiteral(String.fromCodePoint(Number.parseInt(oct, 8)), inClass);
    }
    switch (c) {
      case 'a':
        return '\\x07';
      case 'f':
        return '\\f';
      case 't':
        return '\\t';
      case 'n':
        return '\\n';
      case 'r':
        return '\\r';
      case 'v':
        return '\\v';
      case 'x': {
        let h = '';
        if (peek() === '{') {
          i++;
          while (peek() !== undefined && peek() !== '}') h += chars[i++];
          if (peek() !== '}' || !/^[0-9a-fA-F]+$/.test(h))
            fail('invalid escape sequence', chars.slice(start, i + 1).join(''));
          i++;
        } else {
          h = (chars[i] ?? '') + (chars[i + 1] ?? '');
          if (!/^[0-9a-fA-F]{2}$/.test(h))
            fail('invalid escape sequence', chars.slice(start, i + 2).join(''));
          i += 2;
        }
        const v = Number.parseInt(h, 16);
        if (v > 0x10ffff) fail('invalid escape sequence', chars.slice(start, i).join(''));
        return jsLiteral(String.fromCodePoint(v), inClass);
      }
      case 'd':
        return '\\d';
      case 'w':
        return '\\w';
      case 's':
        return inClass ? GO_SPACE : `[${GO_SPACE}]`;
      case 'D':
      case 'W':
      case 'S':
        if (inClass) {
          throw new RegexpUnsupportedError(`\\${c} inside a bracket class is not supported`);
        }
        return c === 'S' ? `[^${GO_SPACE}]` : `\\${c}`;
      case 'p':
      case 'P': {
        let name = '';
        if (peek() === '{') {
          i++;
          while (peek() !== undefined && peek() !== '}') name += chars[i++];
          if (peek() !== '}') fail('invalid character class range', chars.slice(start).join(''));
          i++;
        } else {
          name = peek() ?? '';
          if (name === '') fail('invalid character class range', chars.slice(start).join(''));
          i++;
        }
        const cls = unicodeClass(name, c === 'P', chars.slice(start, i).join(''));
        if (inClass && (cls.startsWith('\\P') || cls.startsWith('['))) {
          throw new RegexpUnsupportedError(`\\${c}{${name}} inside a bracket class is not supported`);
        }
        return cls;
      }
      case 'b':
      case 'B':
        if (inClass) fail('invalid escape sequence', `\\${c}`);
        return `\\${c}`;
      case 'A':
        if (inClass) fail('invalid escape sequence', `\\${c}`);
        return '(?<![\\s\\S])';
      case 'z':
        if (inClass) fail('invalid escape sequence', `\\${c}`);
        return '(?![\\s\\S])';
      case 'C':
        throw new RegexpUnsupportedError('\\C (any byte) is not supported');
    }
    if (c! < '\x80' && !/[0-9A-Za-z]/.test(c!)) return jsLiteral(c!, inClass);
    return fail('invalid escape sequence', `\\${c}`);
  };

  const charClass = (): string => {
    const start = i;
    i++; // [
    let s = '[';
    if (peek() === '^') {
      s += '^';
      i++;
    }
    let first = true;
    for (;;) {
      const c = peek();
      if (c === undefined) fail('missing closing ]', chars.slice(start).join(''));
      if (c === ']' && !first) {
        i++;
        break;
      }
      first = false;
      if (c === '[' && peek(1) === ':') {
        const close = rest().indexOf(':]');
        if (close > 1) {
          let name = rest().slice(2, close);
          const neg = name.startsWith('^');
          if (neg) name = name.slice(1);
          const set = POSIX[name];
          if (set === undefined) fail('invalid character class range', rest().slice(0, close + 2));
          if (neg) throw new RegexpUnsupportedError(`[:^${name}:] inside a bracket class is not supported`);
          s += set;
          i += [...rest().slice(0, close + 2)].length;
          continue;
        }
      }
      const lo = c === '\\' ? parseEscape(true) : jsLiteral(chars[i++]!, true);
      if (peek() === '-' && peek(1) !== ']' && peek(1) !== undefined) {
        i++;
        const hiCh = peek()!;
        const hi = hiCh === '\\' ? parseEscape(true) : jsLiteral(chars[i++]!, true);
        const loCp = decodeLiteral(lo);
        const hiCp = decodeLiteral(hi);
        if (loCp === null || hiCp === null) fail('invalid character class range', `${lo}-${hi}`);
        if (hiCp < loCp)
          fail(
            'invalid character class range',
            `${String.fromCodePoint(loCp)}-${String.fromCodePoint(hiCp)}`,
          );
        s += `${lo}-${hi}`;
      } else s += lo;
    }
    return `${s}]`;
  };

  while (i < chars.length) {
    const c = chars[i]!;
    switch (c) {
      case '(': {
        if (peek(1) === '?') {
          const start = i;
          i += 2;
          if (peek() === 'P' && peek(1) === '<') {
            i += 2;
            let name = '';
            while (peek() !== undefined && peek() !== '>') name += chars[i++];
            if (peek() !== '>') fail('invalid named capture', chars.slice(start).join(''));
            i++;
            if (!/^[A-Za-z0-9_]+$/.test(name)) fail('invalid named capture', chars.slice(start, i).join(''));
            if (names.includes(name)) fail('duplicate capture group name', name);
            names.push(name);
            flagStack.push(fl);
            depth++;
            out += '(';
            lastAtom = false;
            lastRepeat = '';
            continue;
          }
          if (peek() === '<' || peek() === '=' || peek() === '!' || peek() === 'P' || peek() === '#') {
            fail('invalid or unsupported Perl syntax', chars.slice(start, i + 1).join(''));
          }
          parseFlags(start);
          continue;
        }
        names.push('');
        flagStack.push(fl);
        depth++;
        i++;
        out += '(';
        lastAtom = false;
        lastRepeat = '';
        continue;
      }
      case ')':
        if (depth === 0) fail('unexpected )', expr);
        depth--;
        fl = flagStack.pop()!;
        i++;
        out += ')';
        lastAtom = true;
        lastRepeat = '';
        continue;
      case '|':
        i++;
        out += '|';
        lastAtom = false;
        lastRepeat = '';
        continue;
      case '*':
      case '+':
      case '?':
      case '{': {
        let op: string = c;
        if (c === '{') {
          const m = /^\{(\d+)(,(\d*))?\}/.exec(rest());
          if (!m) {
            // Not a repeat: a literal brace.
            i++;
            out += '\\{';
            lastAtom = true;
            lastRepeat = '';
            continue;
          }
          const min = Number(m[1]);
          const max = m[3] === undefined ? min : m[3] === '' ? -1 : Number(m[3]);
          if (min > 1000 || max > 1000 || (max >= 0 && max < min)) fail('invalid repeat count', m[0]);
          op = m[0];
        }
        const opLen = [...op].length;
        if (lastRepeat !== '') fail('invalid nested repetition operator', `${lastRepeat}${op}`);
        if (!lastAtom) fail('missing argument to repetition operator', op);
        i += opLen;
        let lazy = false;
        if (peek() === '?') {
          lazy = true;
          i++;
        }
        if (fl.U) lazy = !lazy;
        out += op + (lazy ? '?' : '');
        lastRepeat = op + (lazy !== fl.U ? '?' : '');
        lastAtom = false;
        continue;
      }
      case '[':
        out += charClass();
        lastAtom = true;
        lastRepeat = '';
        continue;
      case '\\': {
        if (peek(1) === 'Q') {
          i += 2;
          const end = rest().indexOf('\\E');
          const lit = end < 0 ? rest() : rest().slice(0, end);
          i += [...lit].length + (end < 0 ? 0 : 2);
          const litChars = [...lit];
          if (litChars.length === 0) continue;
          out += litChars.map((x) => jsLiteral(x, false)).join('');
          lastAtom = true;
          lastRepeat = '';
          continue;
        }
        out += parseEscape(false);
        lastAtom = true;
        lastRepeat = '';
        continue;
      }
      case '.':
        i++;
        out += fl.s ? '[\\s\\S]' : '[^\\n]';
        lastAtom = true;
        lastRepeat = '';
        continue;
      case '^':
        i++;
        out += fl.m ? '(?<![^\\n])' : '(?<![\\s\\S])';
        lastAtom = true;
        lastRepeat = '';
        continue;
      case '$':
        i++;
        out += fl.m ? '(?![^\\n])' : '(?![\\s\\S])';
        lastAtom = true;
        lastRepeat = '';
        continue;
      default:
        i++;
        out += jsLiteral(c, false);
        lastAtom = true;
        lastRepeat = '';
    }
  }
  if (depth > 0) fail('missing closing )', expr);
  return { source: out, flags: globalI ? 'iu' : 'u', names, numGroups: names.length - 1 };
}

/** The code point of a translated single-character literal, or null for a class escape. */
function decodeLiteral(s: string): number | null {
  if (s.length === 0) return null;
  if (s[0] !== '\\') return s.codePointAt(0)!;
  if (s.length === 2 && !/[dwspDWSPbB0-9]/.test(s[1]!)) {
    const m: Record<string, number> = { f: 12, t: 9, n: 10, r: 13, v: 11 };
    return m[s[1]!] ?? s.codePointAt(1)!;
  }
  const x = /^\\x([0-9a-f]{2})$/.exec(s);
  if (x) return Number.parseInt(x[1]!, 16);
  return null;
}

/** A compiled Go regexp. Indexes are JS string indexes (consistent with the strings we hold). */
export class GoRegexp {
  readonly re: RegExp;
  readonly names: string[];
  readonly expr: string;
  constructor(expr: string) {
    this.expr = expr;
    const t = translate(expr);
    this.names = t.names;
    try {
      this.re = new RegExp(t.source, `dg${t.flags}`);
    } catch (e) {
      throw new RegexpUnsupportedError(
        `pattern ${expr} has no JavaScript equivalent (${(e as Error).message})`,
      );
    }
  }

  /** The leftmost match at or after pos: [start, end, g1s, g1e, …] (-1 for unset groups). */
  exec(s: string, pos: number): number[] | null {
    this.re.lastIndex = pos;
    const m = this.re.exec(s);
    if (m === null) return null;
    const out = [m.index, m.index + m[0].length];
    for (let g = 1; g < m.length; g++) {
      const r = m.indices![g];
      out.push(r ? r[0] : -1, r ? r[1] : -1);
    }
    return out;
  }

  /** Go's allMatches: successive matches, an empty match right after a match is skipped. */
  allMatches(s: string, n: number): number[][] {
    const res: number[][] = [];
    if (n < 0) n = s.length + 1;
    let pos = 0;
    let prevMatchEnd = -1;
    while (res.length < n && pos <= s.length) {
      const m = this.exec(s, pos);
      if (m === null) break;
      let accept = true;
      if (m[1] === pos) {
        if (m[0] === prevMatchEnd) accept = false;
        pos += pos < s.length ? (s.codePointAt(pos)! > 0xffff ? 2 : 1) : 1;
      } else pos = m[1]!;
      prevMatchEnd = m[1]!;
      if (accept) res.push(m);
    }
    return res;
  }

  matchString(s: string): boolean {
    return this.exec(s, 0) !== null;
  }

  findString(s: string): string {
    const m = this.exec(s, 0);
    return m === null ? '' : s.slice(m[0], m[1]);
  }

  /** FindAllString: null (Go's nil) when nothing matches. */
  findAllString(s: string, n: number): string[] | null {
    const all = this.allMatches(s, n);
    return all.length === 0 ? null : all.map((m) => s.slice(m[0], m[1]));
  }

  replaceAll(src: string, repl: string, literal: boolean): string {
    let out = '';
    let lastMatchEnd = 0;
    let searchPos = 0;
    while (searchPos <= src.length) {
      const a = this.exec(src, searchPos);
      if (a === null) break;
      out += src.slice(lastMatchEnd, a[0]);
      if (a[1]! > lastMatchEnd || a[0] === 0) out += literal ? repl : this.expand(repl, src, a);
      lastMatchEnd = a[1]!;
      const width = searchPos < src.length ? (src.codePointAt(searchPos)! > 0xffff ? 2 : 1) : 0;
      if (searchPos + width > a[1]!) searchPos += width;
      else if (searchPos + 1 > a[1]!) searchPos++;
      else searchPos = a[1]!;
    }
    return out + src.slice(lastMatchEnd);
  }

  expand(template: string, src: string, match: number[]): string {
    let dst = '';
    for (;;) {
      const k = template.indexOf('$');
      if (k < 0) break;
      dst += template.slice(0, k);
      template = template.slice(k + 1);
      if (template.startsWith('$')) {
        dst += '$';
        template = template.slice(1);
        continue;
      }
      const ex = extract(template);
      if (ex === null) {
        dst += '$';
        continue;
      }
      template = ex.rest;
      let g = ex.num;
      if (g < 0) g = this.names.indexOf(ex.name);
      if (g >= 0 && 2 * g + 1 < match.length && match[2 * g]! >= 0)
        dst += src.slice(match[2 * g], match[2 * g + 1]);
    }
    return dst + template;
  }

  /** Split: null (Go's nil) for n == 0. */
  split(s: string, n: number): string[] | null {
    if (n === 0) return null;
    if (this.expr.length > 0 && s.length === 0) return [''];
    const matches = this.allMatches(s, n);
    const out: string[] = [];
    let beg = 0;
    let end = 0;
    for (const m of matches) {
      if (n > 0 && out.length === n - 1) break;
      end = m[0]!;
      if (m[1] !== 0) out.push(s.slice(beg, end));
      beg = m[1]!;
    }
    if (end !== s.length) out.push(s.slice(beg));
    return out;
  }
}

function extract(str: string): { name: string; num: number; rest: string } | null {
  if (str === '') return null;
  let brace = false;
  if (str[0] === '{') {
    brace = true;
    str = str.slice(1);
  }
  const m = /^[\p{L}\p{Nd}\p{Nl}\p{No}_]*/u.exec(str)!;
  let i = m[0].length;
  if (i === 0) return null;
  const name = str.slice(0, i);
  if (brace) {
    if (i >= str.length || str[i] !== '}') return null;
    i++;
  }
  let num = 0;
  for (const ch of name) {
    if (ch < '0' || ch > '9' || num >= 1e8) {
      num = -1;
      break;
    }
    num = num * 10 + Number(ch);
  }
  if (name[0] === '0' && name.length > 1) num = -1;
  return { name, num, rest: str.slice(i) };
}

/** regexp.QuoteMeta. */
export function quoteMeta(s: string): string {
  return s.replace(/[\\.+*?()|[\]{}^$]/g, '\\$&');
}
