/**
 * The lexer of text/template (Go 1.19 parse/lex.go), state for state, so tokens, trim markers,
 * comments and error texts are Go's. Positions are JS string indexes; errors convert to bytes.
 */
import { quote } from './strconv.ts';

export const T = {
  Error: 0,
  Bool: 1,
  Char: 2,
  CharConstant: 3,
  Comment: 4,
  Complex: 5,
  Assign: 6,
  Declare: 7,
  EOF: 8,
  Field: 9,
  Identifier: 10,
  LeftDelim: 11,
  LeftParen: 12,
  Number: 13,
  Pipe: 14,
  RawString: 15,
  RightDelim: 16,
  RightParen: 17,
  Space: 18,
  String: 19,
  Text: 20,
  Variable: 21,
  Keyword: 22,
  Block: 23,
  Break: 24,
  Continue: 25,
  Dot: 26,
  Define: 27,
  Else: 28,
  End: 29,
  If: 30,
  Nil: 31,
  Range: 32,
  Template: 33,
  With: 34,
} as const;
export type T = (typeof T)[keyof typeof T];

export interface Item {
  typ: T;
  pos: number;
  val: string;
  line: number;
}

const KEYWORDS: Record<string, T> = {
  '.': T.Dot,
  block: T.Block,
  break: T.Break,
  continue: T.Continue,
  define: T.Define,
  else: T.Else,
  end: T.End,
  if: T.If,
  range: T.Range,
  nil: T.Nil,
  template: T.Template,
  with: T.With,
};

/** item.String() as the parser's error messages print a token. */
export function itemString(i: Item): string {
  if (i.typ === T.EOF) return 'EOF';
  if (i.typ === T.Error) return i.val;
  if (i.typ > T.Keyword) return `<${i.val}>`;
  const chars = [...i.val];
  if (chars.length > 10) return `${quoteGo(chars.slice(0, 10).join(''))}...`;
  return quoteGo(i.val);
}

const quoteGo = (s: string) => quote(s);

const EOF = -1;
const isSpace = (r: number) => r === 32 || r === 9 || r === 13 || r === 10;
const LETTER_OR_DIGIT = /[\p{L}\p{Nd}]/u;
function isAlphaNumeric(r: number): boolean {
  if (r === 95) return true;
  if (r < 0) return false;
  if (r < 128) return (r >= 48 && r <= 57) || (r >= 65 && r <= 90) || (r >= 97 && r <= 122);
  return LETTER_OR_DIGIT.test(String.fromCodePoint(r));
}
const hasLeftTrimMarker = (s: string, i: number) =>
  s.length - i >= 2 && s[i] === '-' && isSpace(s.charCodeAt(i + 1));
const hasRightTrimMarker = (s: string, i: number) =>
  s.length - i >= 2 && isSpace(s.charCodeAt(i)) && s[i + 1] === '-';

/** %#U of a rune, as Go prints it in lexer errors: U+0021 '!'. */
function runeU(r: number): string {
  const hex = r.toString(16).toUpperCase().padStart(4, '0');
  return `U+${hex} '${String.fromCodePoint(r)}'`;
}

type State = ((l: Lexer) => State) | null;

export class Lexer {
  pos = 0;
  start = 0;
  atEOF = false;
  items: Item[] = [];
  parenDepth = 0;
  line = 1;
  startLine = 1;
  private state: State = lexText;
  readonly input: string;
  readonly leftDelim = '{{';
  readonly rightDelim = '}}';
  constructor(input: string) {
    this.input = input;
  }

  nextItem(): Item {
    while (this.items.length === 0) {
      if (this.state === null) return { typ: T.EOF, pos: this.pos, val: '', line: this.line };
      this.state = this.state(this);
    }
    return this.items.shift()!;
  }

  next(): number {
    if (this.pos >= this.input.length) {
      this.atEOF = true;
      return EOF;
    }
    const r = this.input.codePointAt(this.pos)!;
    this.pos += r > 0xffff ? 2 : 1;
    if (r === 10) this.line++;
    return r;
  }

  peek(): number {
    const r = this.next();
    this.backup();
    return r;
  }

  backup() {
    if (!this.atEOF && this.pos > 0) {
      const c = this.input.charCodeAt(this.pos - 1);
      this.pos -= c >= 0xdc00 && c <= 0xdfff && this.pos >= 2 ? 2 : 1;
      if (c === 10) this.line--;
    }
  }

  emit(typ: T) {
    this.items.push({
      typ,
      pos: this.start,
      val: this.input.slice(this.start, this.pos),
      line: this.startLine,
    });
    this.start = this.pos;
    this.startLine = this.line;
  }

  ignore() {
    this.line += countNewlines(this.input, this.start, this.pos);
    this.start = this.pos;
    this.startLine = this.line;
  }

  accept(valid: string): boolean {
    const r = this.next();
    if (r !== EOF && valid.includes(String.fromCodePoint(r))) return true;
    this.backup();
    return false;
  }

  acceptRun(valid: string) {
    for (;;) {
      const r = this.next();
      if (r === EOF || !valid.includes(String.fromCodePoint(r))) break;
    }
    this.backup();
  }

  errorf(msg: string): State {
    this.items.push({ typ: T.Error, pos: this.start, val: msg, line: this.startLine });
    return null;
  }

  atRightDelim(): [boolean, boolean] {
    if (hasRightTrimMarker(this.input, this.pos) && this.input.startsWith(this.rightDelim, this.pos + 2)) {
      return [true, true];
    }
    if (this.input.startsWith(this.rightDelim, this.pos)) return [true, false];
    return [false, false];
  }

  atTerminator(): boolean {
    const r = this.peek();
    if (isSpace(r)) return true;
    switch (r) {
      case EOF:
      case 46: // .
      case 44: // ,
      case 124: // |
      case 58: // :
      case 41: // )
      case 40: // (
        return true;
    }
    return this.input.startsWith(this.rightDelim, this.pos);
  }

  scanNumber(): boolean {
    this.accept('+-');
    let digits = '0123456789_';
    if (this.accept('0')) {
      if (this.accept('xX')) digits = '0123456789abcdefABCDEF_';
      else if (this.accept('oO')) digits = '01234567_';
      else if (this.accept('bB')) digits = '01_';
    }
    this.acceptRun(digits);
    if (this.accept('.')) this.acceptRun(digits);
    if (digits.length === 11 && this.accept('eE')) {
      this.accept('+-');
      this.acceptRun('0123456789_');
    }
    if (digits.length === 23 && this.accept('pP')) {
      this.accept('+-');
      this.acceptRun('0123456789_');
    }
    this.accept('i');
    if (isAlphaNumeric(this.peek())) {
      this.next();
      return false;
    }
    return true;
  }
}

function countNewlines(s: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) if (s.charCodeAt(i) === 10) n++;
  return n;
}

function rightTrimLength(s: string): number {
  let i = s.length;
  while (i > 0 && isSpace(s.charCodeAt(i - 1))) i--;
  return s.length - i;
}

function leftTrimLength(s: string, from: number): number {
  let i = from;
  while (i < s.length && isSpace(s.charCodeAt(i))) i++;
  return i - from;
}

function lexText(l: Lexer): State {
  const x = l.input.indexOf(l.leftDelim, l.pos);
  if (x >= 0) {
    const ldn = l.leftDelim.length;
    l.pos = x;
    let trimLength = 0;
    if (hasLeftTrimMarker(l.input, l.pos + ldn)) trimLength = rightTrimLength(l.input.slice(l.start, l.pos));
    l.pos -= trimLength;
    if (l.pos > l.start) {
      l.line += countNewlines(l.input, l.start, l.pos);
      l.emit(T.Text);
    }
    l.pos += trimLength;
    l.ignore();
    return lexLeftDelim;
  }
  l.pos = l.input.length;
  if (l.pos > l.start) {
    l.line += countNewlines(l.input, l.start, l.pos);
    l.emit(T.Text);
  }
  l.emit(T.EOF);
  return null;
}

function lexLeftDelim(l: Lexer): State {
  l.pos += l.leftDelim.length;
  const trimSpace = hasLeftTrimMarker(l.input, l.pos);
  const afterMarker = trimSpace ? 2 : 0;
  if (l.input.startsWith('/*', l.pos + afterMarker)) {
    l.pos += afterMarker;
    l.ignore();
    return lexComment;
  }
  l.emit(T.LeftDelim);
  l.pos += afterMarker;
  l.ignore();
  l.parenDepth = 0;
  return lexInsideAction;
}

function lexComment(l: Lexer): State {
  l.pos += 2;
  const i = l.input.indexOf('*/', l.pos);
  if (i < 0) return l.errorf('unclosed comment');
  l.pos = i + 2;
  const [delim, trimSpace] = l.atRightDelim();
  if (!delim) return l.errorf('comment ends before closing delimiter');
  if (trimSpace) l.pos += 2;
  l.pos += l.rightDelim.length;
  if (trimSpace) l.pos += leftTrimLength(l.input, l.pos);
  l.ignore();
  return lexText;
}

function lexRightDelim(l: Lexer): State {
  const trimSpace = hasRightTrimMarker(l.input, l.pos);
  if (trimSpace) {
    l.pos += 2;
    l.ignore();
  }
  l.pos += l.rightDelim.length;
  l.emit(T.RightDelim);
  if (trimSpace) {
    l.pos += leftTrimLength(l.input, l.pos);
    l.ignore();
  }
  return lexText;
}

function lexInsideAction(l: Lexer): State {
  const [delim] = l.atRightDelim();
  if (delim) {
    if (l.parenDepth === 0) return lexRightDelim;
    return l.errorf('unclosed left paren');
  }
  const r = l.next();
  if (r === EOF) return l.errorf('unclosed action');
  if (isSpace(r)) {
    l.backup();
    return lexSpace;
  }
  switch (r) {
    case 61: // =
      l.emit(T.Assign);
      return lexInsideAction;
    case 58: // :
      if (l.next() !== 61) return l.errorf('expected :=');
      l.emit(T.Declare);
      return lexInsideAction;
    case 124:
      l.emit(T.Pipe);
      return lexInsideAction;
    case 34:
      return lexQuote;
    case 96:
      return lexRawQuote;
    case 36:
      return lexVariable;
    case 39:
      return lexChar;
    case 40:
      l.emit(T.LeftParen);
      l.parenDepth++;
      return lexInsideAction;
    case 41:
      l.emit(T.RightParen);
      l.parenDepth--;
      if (l.parenDepth < 0) return l.errorf(`unexpected right paren ${runeU(r)}`);
      return lexInsideAction;
  }
  if (r === 46) {
    if (l.pos < l.input.length) {
      const c = l.input.charCodeAt(l.pos);
      if (c < 48 || c > 57) return lexField;
    }
    l.backup();
    return lexNumber;
  }
  if (r === 43 || r === 45 || (r >= 48 && r <= 57)) {
    l.backup();
    return lexNumber;
  }
  if (isAlphaNumeric(r)) {
    l.backup();
    return lexIdentifier;
  }
  if (r < 128 && r >= 0x20 && r < 0x7f) {
    l.emit(T.Char);
    return lexInsideAction;
  }
  return l.errorf(`unrecognized character in action: ${runeU(r)}`);
}

function lexSpace(l: Lexer): State {
  let numSpaces = 0;
  for (;;) {
    const r = l.peek();
    if (!isSpace(r)) break;
    l.next();
    numSpaces++;
  }
  if (hasRightTrimMarker(l.input, l.pos - 1) && l.input.startsWith(l.rightDelim, l.pos - 1 + 2)) {
    l.backup();
    if (numSpaces === 1) return lexRightDelim;
  }
  l.emit(T.Space);
  return lexInsideAction;
}

function lexIdentifier(l: Lexer): State {
  for (;;) {
    const r = l.next();
    if (isAlphaNumeric(r)) continue;
    l.backup();
    const word = l.input.slice(l.start, l.pos);
    if (!l.atTerminator()) return l.errorf(`bad character ${runeU(r)}`);
    const kw = KEYWORDS[word];
    if (kw !== undefined && kw > T.Keyword) l.emit(kw);
    else if (word[0] === '.') l.emit(T.Field);
    else if (word === 'true' || word === 'false') l.emit(T.Bool);
    else l.emit(T.Identifier);
    return lexInsideAction;
  }
}

function lexField(l: Lexer): State {
  return lexFieldOrVariable(l, T.Field);
}

function lexVariable(l: Lexer): State {
  if (l.atTerminator()) {
    l.emit(T.Variable);
    return lexInsideAction;
  }
  return lexFieldOrVariable(l, T.Variable);
}

function lexFieldOrVariable(l: Lexer, typ: T): State {
  if (l.atTerminator()) {
    l.emit(typ === T.Variable ? T.Variable : T.Dot);
    return lexInsideAction;
  }
  let r: number;
  for (;;) {
    r = l.next();
    if (!isAlphaNumeric(r)) {
      l.backup();
      break;
    }
  }
  if (!l.atTerminator()) return l.errorf(`bad character ${runeU(r)}`);
  l.emit(typ);
  return lexInsideAction;
}

/** A quoted literal up to its closing quote ('…' or "…"); Go's lexChar and lexQuote. */
function lexQuoted(l: Lexer, close: number, unterminated: string, typ: T): State {
  for (;;) {
    let r = l.next();
    if (r === 92) {
      r = l.next();
      if (r !== EOF && r !== 10) continue;
      return l.errorf(unterminated);
    }
    if (r === EOF || r === 10) return l.errorf(unterminated);
    if (r === close) break;
  }
  l.emit(typ);
  return lexInsideAction;
}

const lexChar = (l: Lexer) => lexQuoted(l, 39, 'unterminated character constant', T.CharConstant);
const lexQuote = (l: Lexer) => lexQuoted(l, 34, 'unterminated quoted string', T.String);

function lexNumber(l: Lexer): State {
  if (!l.scanNumber()) return l.errorf(`bad number syntax: ${quoteGo(l.input.slice(l.start, l.pos))}`);
  const sign = l.peek();
  if (sign === 43 || sign === 45) {
    if (!l.scanNumber() || l.input[l.pos - 1] !== 'i') {
      return l.errorf(`bad number syntax: ${quoteGo(l.input.slice(l.start, l.pos))}`);
    }
    l.emit(T.Complex);
  } else l.emit(T.Number);
  return lexInsideAction;
}

function lexRawQuote(l: Lexer): State {
  for (;;) {
    const r = l.next();
    if (r === EOF) return l.errorf('unterminated raw quoted string');
    if (r === 96) break;
  }
  l.emit(T.RawString);
  return lexInsideAction;
}
