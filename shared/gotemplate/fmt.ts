/**
 * Go's fmt (Sprint, Sprintln, Sprintf) over GoValues, as print/printf/println and the printing of
 * `{{ . }}` use it: verbs v +v #v T s q x X d b o O c U e E f F g G t, flags, width, precision,
 * `*`, argument indexes, and Go's error forms (%!d(string=x), %!v(MISSING), %!(EXTRA …)).
 * Pointer addresses (%p, or a pointer nested in a printed value) are not reproducible: refused.
 */
import { UnsupportedError } from './errors.ts';
import { canBackquote, formatFloat, isPrint, quoteWith } from './strconv.ts';
import { isIntKind } from './types.ts';
import { concrete, GoValue, type RV, sliceIndex, sortedKeys } from './value.ts';

/** A Go behaviour we refuse rather than imitate (the message says which). */
export class FmtUnsupportedError extends UnsupportedError {}

interface Flags {
  plus: boolean;
  minus: boolean;
  sharp: boolean;
  space: boolean;
  zero: boolean;
  plusV: boolean;
  sharpV: boolean;
  widPresent: boolean;
  wid: number;
  precPresent: boolean;
  prec: number;
}

const noFlags = (): Flags => ({
  plus: false,
  minus: false,
  sharp: false,
  space: false,
  zero: false,
  plusV: false,
  sharpV: false,
  widPresent: false,
  wid: 0,
  precPresent: false,
  prec: 0,
});

const runeCount = (s: string) => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

const LDIGITS = '0123456789abcdefx';
const UDIGITS = '0123456789ABCDEFX';

class Printer {
  buf = '';
  f: Flags = noFlags();
  erroring = false;
  /** p.arg: the operand as an interface (concrete value or nil); undefined when p.value is used. */
  arg: RV | undefined = undefined;
  value: RV = null;

  write(s: string) {
    this.buf += s;
  }

  writePadding(n: number) {
    if (n > 0) this.buf += (this.f.zero ? '0' : ' ').repeat(n);
  }

  pad(s: string) {
    if (!this.f.widPresent || this.f.wid === 0) {
      this.buf += s;
      return;
    }
    const width = this.f.wid - runeCount(s);
    if (!this.f.minus) {
      this.writePadding(width);
      this.buf += s;
    } else {
      this.buf += s;
      this.writePadding(width);
    }
  }

  truncate(s: string): string {
    if (this.f.precPresent) {
      let n = this.f.prec;
      let i = 0;
      for (const ch of s) {
        n--;
        if (n < 0) return s.slice(0, i);
        i += ch.length;
      }
    }
    return s;
  }

  fmtS(s: string) {
    this.pad(this.truncate(s));
  }

  fmtQ(s: string) {
    s = this.truncate(s);
    if (this.f.sharp && canBackquote(s)) this.pad(`\`${s}\``);
    else this.pad(quoteWith(s, '"', this.f.plus));
  }

  fmtSx(s: string, digits: string) {
    const b = Buffer.from(s, 'utf8');
    let length = b.length;
    if (this.f.precPresent && this.f.prec < length) length = this.f.prec;
    let width = 2 * length;
    if (width > 0) {
      if (this.f.space) {
        if (this.f.sharp) width *= 2;
        width += length - 1;
      } else if (this.f.sharp) width += 2;
    } else {
      if (this.f.widPresent) this.writePadding(this.f.wid);
      return;
    }
    if (this.f.widPresent && this.f.wid > width && !this.f.minus) this.writePadding(this.f.wid - width);
    let out = this.f.sharp ? `0${digits[16]}` : '';
    for (let i = 0; i < length; i++) {
      if (this.f.space && i > 0) {
        out += ' ';
        if (this.f.sharp) out += `0${digits[16]}`;
      }
      const c = b[i]!;
      out += digits[c >> 4]! + digits[c & 15]!;
    }
    this.buf += out;
    if (this.f.widPresent && this.f.wid > width && this.f.minus) this.writePadding(this.f.wid - width);
  }

  fmtInteger(u: bigint, base: number, signed: boolean, verb: string, digits: string) {
    const negative = signed && u < 0n;
    if (negative) u = -u;
    let prec = 0;
    if (this.f.precPresent) {
      prec = this.f.prec;
      if (prec === 0 && u === 0n) {
        const old = this.f.zero;
        this.f.zero = false;
        this.writePadding(this.f.wid);
        this.f.zero = old;
        return;
      }
    } else if (this.f.zero && this.f.widPresent) {
      prec = this.f.wid;
      if (negative || this.f.plus || this.f.space) prec--;
    }
    let s = u.toString(base);
    if (digits === UDIGITS) s = s.toUpperCase();
    if (prec > s.length) s = '0'.repeat(prec - s.length) + s;
    if (this.f.sharp) {
      if (base === 2) s = `0b${s}`;
      else if (base === 8 && s[0] !== '0') s = `0${s}`;
      else if (base === 16) s = `0${digits[16]}${s}`;
    }
    if (verb === 'O') s = `0o${s}`;
    if (negative) s = `-${s}`;
    else if (this.f.plus) s = `+${s}`;
    else if (this.f.space) s = ` ${s}`;
    const old = this.f.zero;
    this.f.zero = false;
    this.pad(s);
    this.f.zero = old;
  }

  fmtFloatRaw(v: number, verb: string, prec: number) {
    if (this.f.precPresent) prec = this.f.prec;
    if (verb === 'b' || verb === 'x' || verb === 'X') {
      throw new FmtUnsupportedError(`the %${verb} verb on floating-point numbers is not supported`);
    }
    let num = formatFloat(v, verb === 'F' ? 'f' : verb, prec);
    if (num[0] !== '-' && num[0] !== '+') num = `+${num}`;
    if (this.f.space && num[0] === '+' && !this.f.plus) num = ` ${num.slice(1)}`;
    if (num[1] === 'I' || num[1] === 'N') {
      const old = this.f.zero;
      this.f.zero = false;
      if (num[1] === 'N' && !this.f.space && !this.f.plus) num = num.slice(1);
      this.pad(num);
      this.f.zero = old;
      return;
    }
    if (this.f.sharp) {
      let digits = 0;
      if (verb === 'v' || verb === 'g' || verb === 'G') digits = prec === -1 ? 6 : prec;
      let tail = '';
      const ei = num.search(/[eE]/);
      if (ei >= 0) {
        tail = num.slice(ei);
        num = num.slice(0, ei);
      }
      let sawNonzero = false;
      for (let i = 1; i < num.length; i++) {
        const c = num[i]!;
        if (c === '.') continue;
        if (c !== '0') sawNonzero = true;
        if (sawNonzero) digits--;
      }
      if (!num.includes('.')) {
        if (num.length === 2 && num[1] === '0') digits--;
        num += '.';
      }
      if (digits > 0) num += '0'.repeat(digits);
      num += tail;
    }
    if (this.f.plus || num[0] !== '+') {
      if (this.f.zero && this.f.widPresent && this.f.wid > num.length) {
        this.buf += num[0];
        this.writePadding(this.f.wid - num.length);
        this.buf += num.slice(1);
        return;
      }
      this.pad(num);
      return;
    }
    this.pad(num.slice(1));
  }

  printFloat(v: number, verb: string) {
    switch (verb) {
      case 'v':
        this.fmtFloatRaw(v, 'g', -1);
        break;
      case 'b':
      case 'g':
      case 'G':
      case 'x':
      case 'X':
        this.fmtFloatRaw(v, verb, -1);
        break;
      case 'f':
      case 'e':
      case 'E':
      case 'F':
        this.fmtFloatRaw(v, verb, 6);
        break;
      default:
        this.badVerb(verb);
    }
  }

  printInteger(v: bigint, signed: boolean, verb: string) {
    switch (verb) {
      case 'v':
        if (this.f.sharpV && !signed) {
          this.f.sharp = true;
          this.fmtInteger(v, 16, false, verb, LDIGITS);
          this.f.sharp = false;
        } else this.fmtInteger(v, 10, signed, verb, LDIGITS);
        break;
      case 'd':
        this.fmtInteger(v, 10, signed, verb, LDIGITS);
        break;
      case 'b':
        this.fmtInteger(v, 2, signed, verb, LDIGITS);
        break;
      case 'o':
      case 'O':
        this.fmtInteger(v, 8, signed, verb, LDIGITS);
        break;
      case 'x':
        this.fmtInteger(v, 16, signed, verb, LDIGITS);
        break;
      case 'X':
        this.fmtInteger(v, 16, signed, verb, UDIGITS);
        break;
      case 'c':
        this.pad(runeString(v));
        break;
      case 'q':
        this.pad(quoteWith(runeString(v), "'", this.f.plus));
        break;
      case 'U': {
        const u = v < 0n ? BigInt.asUintN(64, v) : v;
        let s = `U+${u.toString(16).toUpperCase().padStart(4, '0')}`;
        if (this.f.sharp && u <= 0x10ffffn && isPrint(Number(u)))
          s += ` '${String.fromCodePoint(Number(u))}'`;
        const old = this.f.zero;
        this.f.zero = false;
        this.pad(s);
        this.f.zero = old;
        break;
      }
      default:
        this.badVerb(verb);
    }
  }

  printString(s: string, verb: string) {
    switch (verb) {
      case 'v':
        if (this.f.sharpV) this.fmtQ(s);
        else this.fmtS(s);
        break;
      case 's':
        this.fmtS(s);
        break;
      case 'x':
        this.fmtSx(s, LDIGITS);
        break;
      case 'X':
        this.fmtSx(s, UDIGITS);
        break;
      case 'q':
        this.fmtQ(s);
        break;
      default:
        this.badVerb(verb);
    }
  }

  badVerb(verb: string) {
    this.erroring = true;
    this.buf += `%!${verb}(`;
    if (this.arg !== undefined && this.arg !== null) {
      this.buf += `${this.arg.type.name}=`;
      this.printArg(this.arg, 'v');
    } else if (this.arg === undefined && this.value !== null) {
      this.buf += `${this.value.type.name}=`;
      this.printValue(this.value, 'v', 0);
    } else this.buf += '<nil>';
    this.buf += ')';
    this.erroring = false;
  }

  handleMethods(verb: string): boolean {
    if (this.erroring || this.f.sharpV) return false;
    const a = this.arg;
    if (a === null || a === undefined || !a.type.stringer) return false;
    if (verb !== 'v' && verb !== 's' && verb !== 'x' && verb !== 'X' && verb !== 'q') return false;
    // A nil pointer whose String method dereferences it: fmt's catchPanic prints <nil>.
    if (a.type.kind === 'ptr' && a.v === null) {
      this.pad('<nil>');
      return true;
    }
    this.printString(a.type.stringer(a), verb);
    return true;
  }

  printArg(arg: RV, verb: string) {
    this.arg = arg;
    this.value = null;
    if (arg === null) {
      if (verb === 'T' || verb === 'v') this.pad('<nil>');
      else this.badVerb(verb);
      return;
    }
    if (verb === 'T') {
      this.fmtS(arg.type.name);
      return;
    }
    if (verb === 'p') throw new FmtUnsupportedError('the %p verb (a memory address) is not supported');
    switch (arg.type.kind) {
      case 'bool':
      case 'string':
      case 'float64':
      case 'float32':
        this.printValue(arg, verb, 0);
        return;
      default:
        if (isIntKind(arg.type.kind) && !arg.type.stringer) {
          this.printValue(arg, verb, 0);
          return;
        }
        if (!this.handleMethods(verb)) this.printValue(arg, verb, 0);
    }
  }

  printValue(value: RV, verb: string, depth: number) {
    if (depth > 0 && value !== null && value.type.kind !== 'interface') {
      this.arg = value;
      if (this.handleMethods(verb)) return;
    }
    this.arg = undefined;
    this.value = value;
    if (value === null) {
      if (depth === 0) this.buf += '<invalid reflect.Value>';
      else if (verb === 'v') this.buf += '<nil>';
      else this.badVerb(verb);
      return;
    }
    const t = value.type;
    switch (t.kind) {
      case 'bool':
        if (verb === 't' || verb === 'v') this.pad(value.v ? 'true' : 'false');
        else this.badVerb(verb);
        return;
      case 'int':
      case 'int8':
      case 'int16':
      case 'int32':
      case 'int64':
        this.printInteger(value.v as bigint, true, verb);
        return;
      case 'uint':
      case 'uint8':
      case 'uint16':
      case 'uint32':
      case 'uint64':
      case 'uintptr':
        this.printInteger(value.v as bigint, false, verb);
        return;
      case 'float32':
      case 'float64':
        this.printFloat(value.v as number, verb);
        return;
      case 'complex64':
      case 'complex128':
        this.printComplex(value.v as { re: number; im: number }, verb);
        return;
      case 'string':
        this.printString(value.v as string, verb);
        return;
      case 'map': {
        const m = value.v as Map<string, RV> | null;
        if (this.f.sharpV) {
          this.buf += t.name;
          if (m === null) {
            this.buf += '(nil)';
            return;
          }
          this.buf += '{';
        } else this.buf += 'map[';
        if (m !== null) {
          sortedKeys(m).forEach((k, i) => {
            if (i > 0) this.buf += this.f.sharpV ? ', ' : ' ';
            this.printValue(new GoValue(t.key!, k), verb, depth + 1);
            this.buf += ':';
            const item = m.get(k)!;
            this.printValue(
              t.elem!.kind === 'interface' ? new GoValue(t.elem!, item) : item,
              verb,
              depth + 1,
            );
          });
        }
        this.buf += this.f.sharpV ? '}' : ']';
        return;
      }
      case 'struct': {
        if (this.f.sharpV) this.buf += t.name;
        this.buf += '{';
        const fields = t.fields ?? [];
        const vals = value.v as RV[];
        fields.forEach((fd, i) => {
          if (i > 0) this.buf += this.f.sharpV ? ', ' : ' ';
          if (this.f.plusV || this.f.sharpV) this.buf += `${fd.name}:`;
          const item = vals[i]!;
          this.printValue(fd.type.kind === 'interface' ? new GoValue(fd.type, item) : item, verb, depth + 1);
        });
        this.buf += '}';
        return;
      }
      case 'interface': {
        const inner = value.v as RV;
        if (inner === null) this.buf += this.f.sharpV ? `${t.name}(nil)` : '<nil>';
        else this.printValue(inner, verb, depth + 1);
        return;
      }
      case 'slice':
      case 'array': {
        const items = value.v as RV[] | null;
        if (this.f.sharpV) {
          this.buf += t.name;
          if (items === null) {
            this.buf += '(nil)';
            return;
          }
          this.buf += '{';
          for (let i = 0; i < items.length; i++) {
            if (i > 0) this.buf += ', ';
            this.printValue(sliceIndex(value, i), verb, depth + 1);
          }
          this.buf += '}';
        } else {
          this.buf += '[';
          const n = items === null ? 0 : items.length;
          for (let i = 0; i < n; i++) {
            if (i > 0) this.buf += ' ';
            this.printValue(sliceIndex(value, i), verb, depth + 1);
          }
          this.buf += ']';
        }
        return;
      }
      case 'ptr': {
        const target = value.v as RV;
        if (target === null && verb === 'v') {
          this.pad('<nil>');
          return;
        }
        if (depth === 0 && target !== null) {
          const k = target.type.kind;
          if (k === 'array' || k === 'slice' || k === 'struct' || k === 'map') {
            this.buf += '&';
            this.printValue(target, verb, depth + 1);
            return;
          }
        }
        throw new FmtUnsupportedError(`printing a pointer (${t.name}) as an address is not supported`);
      }
      default:
        throw new FmtUnsupportedError(`printing a value of type ${t.name} is not supported`);
    }
  }

  printComplex(c: { re: number; im: number }, verb: string) {
    switch (verb) {
      case 'v':
      case 'g':
      case 'G':
      case 'f':
      case 'F':
      case 'e':
      case 'E': {
        const oldPlus = this.f.plus;
        this.buf += '(';
        this.printFloat(c.re, verb);
        this.f.plus = true;
        this.printFloat(c.im, verb);
        this.buf += 'i)';
        this.f.plus = oldPlus;
        return;
      }
      default:
        this.badVerb(verb);
    }
  }
}

function runeString(v: bigint): string {
  if (v < 0n || v > 0x10ffffn || (v >= 0xd800n && v <= 0xdfffn)) return '\ufffd';
  return String.fromCodePoint(Number(v));
}

/** The operands as fmt receives them (...any): concrete values or nil. */
const operands = (args: RV[]) => args.map(concrete);

/** fmt.Sprint. */
export function sprint(args: RV[]): string {
  const p = new Printer();
  let prevString = false;
  operands(args).forEach((arg, i) => {
    const isString = arg !== null && arg.type.kind === 'string';
    if (i > 0 && !isString && !prevString) p.buf += ' ';
    p.f = noFlags();
    p.printArg(arg, 'v');
    prevString = isString;
  });
  return p.buf;
}

/** fmt.Sprintln. */
export function sprintln(args: RV[]): string {
  const p = new Printer();
  operands(args).forEach((arg, i) => {
    if (i > 0) p.buf += ' ';
    p.f = noFlags();
    p.printArg(arg, 'v');
  });
  return `${p.buf}\n`;
}

const tooLarge = (n: number) => n > 1e6 || n < -1e6;

function parsenum(s: string, start: number, end: number): [number, boolean, number] {
  if (start >= end) return [0, false, end];
  let num = 0;
  let isnum = false;
  let i = start;
  for (; i < end && s[i]! >= '0' && s[i]! <= '9'; i++) {
    if (tooLarge(num)) return [0, false, end];
    num = num * 10 + (s.charCodeAt(i) - 48);
    isnum = true;
  }
  return [num, isnum, i];
}

function intFromArg(a: RV[], argNum: number): [number, boolean, number] {
  if (argNum >= a.length) return [0, false, argNum];
  const v = a[argNum]!;
  let num = 0;
  let ok = false;
  if (v !== null && typeof v.v === 'bigint' && v.type.kind !== 'interface') {
    const n = v.v;
    if (n >= -(2n ** 63n) && n < 2n ** 63n) {
      num = Number(n);
      ok = true;
    }
  }
  if (tooLarge(num)) return [0, false, argNum + 1];
  return [num, ok, argNum + 1];
}

/** fmt.Sprintf. */
export function sprintf(format: string, rawArgs: RV[]): string {
  const a = operands(rawArgs);
  const p = new Printer();
  const end = format.length;
  let argNum = 0;
  let afterIndex = false;
  let reordered = false;
  let goodArgNum = true;

  const argNumber = (i: number): [number, number, boolean] => {
    if (i >= end || format[i] !== '[') return [argNum, i, false];
    reordered = true;
    const rest = format.slice(i);
    let index = 0;
    let wid = 1;
    let ok = false;
    if (rest.length >= 3) {
      const close = rest.indexOf(']', 1);
      if (close >= 0) {
        const [w, isnum, newi] = parsenum(rest, 1, close);
        if (!isnum || newi !== close) wid = close + 1;
        else {
          index = w - 1;
          wid = close + 1;
          ok = true;
        }
      }
    }
    if (ok && index >= 0 && index < a.length) return [index, i + wid, true];
    goodArgNum = false;
    return [argNum, i + wid, ok];
  };

  let i = 0;
  formatLoop: while (i < end) {
    goodArgNum = true;
    const lasti = i;
    while (i < end && format[i] !== '%') i++;
    if (i > lasti) p.buf += format.slice(lasti, i);
    if (i >= end) break;
    i++;
    p.f = noFlags();
    simple: for (; i < end; i++) {
      const c = format[i]!;
      switch (c) {
        case '#':
          p.f.sharp = true;
          break;
        case '0':
          p.f.zero = !p.f.minus;
          break;
        case '+':
          p.f.plus = true;
          break;
        case '-':
          p.f.minus = true;
          p.f.zero = false;
          break;
        case ' ':
          p.f.space = true;
          break;
        default:
          if (c >= 'a' && c <= 'z' && argNum < a.length) {
            if (c === 'v') {
              p.f.sharpV = p.f.sharp;
              p.f.sharp = false;
              p.f.plusV = p.f.plus;
              p.f.plus = false;
            }
            p.printArg(a[argNum]!, c);
            argNum++;
            i++;
            continue formatLoop;
          }
          break simple;
      }
    }
    [argNum, i, afterIndex] = argNumber(i);
    if (i < end && format[i] === '*') {
      i++;
      [p.f.wid, p.f.widPresent, argNum] = intFromArg(a, argNum);
      if (!p.f.widPresent) p.buf += '%!(BADWIDTH)';
      if (p.f.wid < 0) {
        p.f.wid = -p.f.wid;
        p.f.minus = true;
        p.f.zero = false;
      }
      afterIndex = false;
    } else {
      [p.f.wid, p.f.widPresent, i] = parsenum(format, i, end);
      if (afterIndex && p.f.widPresent) goodArgNum = false;
    }
    if (i + 1 < end && format[i] === '.') {
      i++;
      if (afterIndex) goodArgNum = false;
      [argNum, i, afterIndex] = argNumber(i);
      if (i < end && format[i] === '*') {
        i++;
        [p.f.prec, p.f.precPresent, argNum] = intFromArg(a, argNum);
        if (p.f.prec < 0) {
          p.f.prec = 0;
          p.f.precPresent = false;
        }
        if (!p.f.precPresent) p.buf += '%!(BADPREC)';
        afterIndex = false;
      } else {
        [p.f.prec, p.f.precPresent, i] = parsenum(format, i, end);
        if (!p.f.precPresent) {
          p.f.prec = 0;
          p.f.precPresent = true;
        }
      }
    }
    if (!afterIndex) [argNum, i, afterIndex] = argNumber(i);
    if (i >= end) {
      p.buf += '%!(NOVERB)';
      break;
    }
    const cp = format.codePointAt(i)!;
    const verb = String.fromCodePoint(cp);
    i += verb.length;
    if (verb === '%') p.buf += '%';
    else if (!goodArgNum) p.buf += `%!${verb}(BADINDEX)`;
    else if (argNum >= a.length) p.buf += `%!${verb}(MISSING)`;
    else {
      if (verb === 'v') {
        p.f.sharpV = p.f.sharp;
        p.f.sharp = false;
        p.f.plusV = p.f.plus;
        p.f.plus = false;
      }
      p.printArg(a[argNum]!, verb);
      argNum++;
    }
  }
  if (!reordered && argNum < a.length) {
    p.f = noFlags();
    p.buf += '%!(EXTRA ';
    a.slice(argNum).forEach((arg, k) => {
      if (k > 0) p.buf += ', ';
      if (arg === null) p.buf += '<nil>';
      else {
        p.buf += `${arg.type.name}=`;
        p.printArg(arg, 'v');
      }
    });
    p.buf += ')';
  }
  return p.buf;
}
