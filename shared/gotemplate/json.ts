/**
 * encoding/json as Go has it for interface {} values: decoding (numbers → float64, Go's syntax
 * error texts for the common cases) and encoding (sorted keys, HTML escaping, Go's float format,
 * MarshalIndent), so `--values`, fromJson and toJson behave as in Go.
 */
import { GoError } from './errors.ts';
import { formatFloat, quote } from './strconv.ts';
import { isFloatKind, isIntKind, isUintKind } from './types.ts';
import { fromJSON, type GoValue, type RV, sortedKeys } from './value.ts';

const WS = new Set([' ', '\t', '\n', '\r']);

/** Go's scanner quotes the offending byte: for a multi-byte character, its first byte as a rune. */
function quoteChar(c: string): string {
  if (c.codePointAt(0)! >= 0x80) c = String.fromCharCode(Buffer.from(c, 'utf8')[0]!);
  if (c === "'") return "'\\''";
  if (c === '"') return "'\"'";
  const s = quote(c);
  return `'${s.slice(1, -1)}'`;
}

/** A JSON syntax or type error with Go's text. */
export class JSONError extends Error {}

/**
 * json.Unmarshal into interface {}: the Go value, or throws JSONError with Go's message
 * ("unexpected end of JSON input", "invalid character 'x' looking for beginning of value", …).
 */
export function decodeGoJSON(text: string): RV {
  checkValid(text);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text, (_k, v) => {
      if (typeof v === 'number' && !Number.isFinite(v)) throw new RangeError('number');
      return typeof v === 'string' ? v.replace(/\p{Surrogate}/gu, '\ufffd') : v;
    });
  } catch (e) {
    if (e instanceof RangeError)
      throw new JSONError(`json: cannot unmarshal number ${overflowing(text)} into Go value of type float64`);
    throw new JSONError((e as Error).message);
  }
  // Keys go through the reviver unmodified: fix lone surrogates there too.
  return fromJSON(fixKeys(parsed));
}

function fixKeys(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(fixKeys);
  if (x !== null && typeof x === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(x)) {
      // defineProperty: a "__proto__" key is data, not the prototype.
      Object.defineProperty(out, k.replace(/\p{Surrogate}/gu, '\ufffd'), {
        value: fixKeys(v),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return x;
}

function overflowing(text: string): string {
  for (const m of text.matchAll(/-?\d+(\.\d+)?([eE][+-]?\d+)?/g)) {
    if (!Number.isFinite(Number(m[0]))) return m[0];
  }
  return '';
}

/** Go's scanner (checkValid), enough for its common error texts. */
function checkValid(s: string) {
  let i = 0;
  const err = (c: string | undefined, ctx: string): never => {
    if (c === undefined) throw new JSONError('unexpected end of JSON input');
    throw new JSONError(`invalid character ${quoteChar(c)} ${ctx}`);
  };
  const skip = () => {
    while (i < s.length && WS.has(s[i]!)) i++;
  };
  const charAt = () => {
    const cp = s.codePointAt(i);
    return cp === undefined ? undefined : String.fromCodePoint(cp);
  };
  const literal = (word: string) => {
    for (let k = 1; k < word.length; k++) {
      i++;
      if (s[i] !== word[k]) err(charAt(), `in literal ${word} (expecting ${quoteChar(word[k]!)})`);
    }
    i++;
  };
  const digits = () => {
    while (i < s.length && s[i]! >= '0' && s[i]! <= '9') i++;
  };
  const number = () => {
    if (s[i] === '-') {
      i++;
      if (!(s[i]! >= '0' && s[i]! <= '9')) err(charAt(), 'in numeric literal');
    }
    if (s[i] === '0') i++;
    else digits();
    if (s[i] === '.') {
      i++;
      if (!(s[i]! >= '0' && s[i]! <= '9')) err(charAt(), 'after decimal point in numeric literal');
      digits();
    }
    if (s[i] === 'e' || s[i] === 'E') {
      i++;
      if (s[i] === '+' || s[i] === '-') i++;
      if (!(s[i]! >= '0' && s[i]! <= '9')) err(charAt(), 'in exponent of numeric literal');
      digits();
    }
  };
  const string = () => {
    i++;
    for (;;) {
      const c = s[i];
      if (c === undefined) err(undefined, '');
      if (c === '"') {
        i++;
        return;
      }
      if (c === '\\') {
        i++;
        const e = s[i];
        if (e === undefined) err(undefined, '');
        if (e === 'u') {
          for (let k = 0; k < 4; k++) {
            i++;
            if (!/[0-9a-fA-F]/.test(s[i] ?? '')) err(charAt(), 'in \\u hexadecimal character escape');
          }
          i++;
          continue;
        }
        if (!'"\\/bfnrt'.includes(e!)) err(charAt(), 'in string escape code');
        i++;
        continue;
      }
      if (c! < ' ') err(c, 'in string literal');
      i++;
    }
  };
  const value = (ctx: string) => {
    skip();
    const c = s[i];
    if (c === undefined) err(undefined, '');
    if (c === '{') {
      i++;
      skip();
      if (s[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        skip();
        if (s[i] !== '"') err(charAt(), 'looking for beginning of object key string');
        string();
        skip();
        if (s[i] !== ':') err(charAt(), 'after object key');
        i++;
        value('looking for beginning of value');
        skip();
        if (s[i] === ',') {
          i++;
          continue;
        }
        if (s[i] === '}') {
          i++;
          return;
        }
        err(charAt(), 'after object key:value pair');
      }
    }
    if (c === '[') {
      i++;
      skip();
      if (s[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value('looking for beginning of value');
        skip();
        if (s[i] === ',') {
          i++;
          continue;
        }
        if (s[i] === ']') {
          i++;
          return;
        }
        err(charAt(), 'after array element');
      }
    }
    if (c === '"') return string();
    if (c === '-' || (c! >= '0' && c! <= '9')) return number();
    if (c === 't') return literal('true');
    if (c === 'f') return literal('false');
    if (c === 'n') return literal('null');
    err(charAt(), ctx);
  };
  value('looking for beginning of value');
  skip();
  if (i < s.length) err(charAt(), 'after top-level value');
}

// --- encoding ---

const HEX = '0123456789abcdef';

/** encodeState.string: Go's JSON string escaping. */
export function jsonString(str: string, escapeHTML: boolean): string {
  let out = '"';
  for (const ch of str) {
    const r = ch.codePointAt(0)!;
    if (r < 0x80) {
      if (
        r >= 0x20 &&
        ch !== '"' &&
        ch !== '\\' &&
        !(escapeHTML && (ch === '<' || ch === '>' || ch === '&'))
      ) {
        out += ch;
        continue;
      }
      switch (ch) {
        case '\\':
        case '"':
          out += `\\${ch}`;
          break;
        case '\n':
          out += '\\n';
          break;
        case '\r':
          out += '\\r';
          break;
        case '\t':
          out += '\\t';
          break;
        default:
          out += `\\u00${HEX[r >> 4]}${HEX[r & 15]}`;
      }
      continue;
    }
    if (r === 0x2028 || r === 0x2029) out += `\\u${r.toString(16)}`;
    else if (r >= 0xd800 && r <= 0xdfff) out += '\\ufffd';
    else out += ch;
  }
  return `${out}"`;
}

/** floatEncoder: 'f' unless tiny or huge, then 'e' with e-07 cleaned to e-7. */
export function jsonFloat(f: number): string {
  if (!Number.isFinite(f)) throw new GoError(`json: unsupported value: ${formatFloat(f, 'g', -1)}`);
  const abs = Math.abs(f);
  let fmt = 'f';
  if (abs !== 0 && (abs < 1e-6 || abs >= 1e21)) fmt = 'e';
  let s = formatFloat(f, fmt, -1);
  if (fmt === 'e') s = s.replace(/e-0(\d)$/, 'e-$1');
  return s;
}

function encode(v: RV, escapeHTML: boolean): string {
  if (v === null) return 'null';
  const t = v.type;
  if (t.marshalJSON && !(t.kind === 'ptr' && v.v === null)) return t.marshalJSON(v);
  switch (t.kind) {
    case 'bool':
      return v.v ? 'true' : 'false';
    case 'string':
      return jsonString(v.v, escapeHTML);
    case 'interface':
    case 'ptr':
      return encode(v.v as RV, escapeHTML);
    case 'map': {
      const m = v.v as Map<string, RV> | null;
      if (m === null) return 'null';
      return `{${sortedKeys(m)
        .map((k) => `${jsonString(k, escapeHTML)}:${encode(m.get(k)!, escapeHTML)}`)
        .join(',')}}`;
    }
    case 'slice':
    case 'array': {
      const items = v.v as RV[] | null;
      if (items === null) return t.kind === 'slice' ? 'null' : '[]';
      return `[${items.map((x) => encode(x, escapeHTML)).join(',')}]`;
    }
    case 'struct':
      return encodeStruct(v, escapeHTML);
    case 'complex64':
    case 'complex128':
    case 'func':
      throw new GoError(`json: unsupported type: ${t.name}`);
    default:
      if (isIntKind(t.kind) || isUintKind(t.kind)) return (v.v as bigint).toString();
      if (isFloatKind(t.kind)) return jsonFloat(v.v as number);
      throw new GoError(`json: unsupported type: ${t.name}`);
  }
}

function isEmptyValue(v: RV): boolean {
  if (v === null) return true;
  switch (v.type.kind) {
    case 'slice':
    case 'array':
      return v.v === null || (v.v as RV[]).length === 0;
    case 'map':
      return v.v === null || (v.v as Map<string, RV>).size === 0;
    case 'string':
      return v.v === '';
    case 'bool':
      return v.v === false;
    case 'interface':
    case 'ptr':
      return v.v === null;
    case 'struct':
      return false;
    default:
      return v.v === 0 || v.v === 0n;
  }
}

/** Struct fields by their JSON names; embedded structs without a name flatten into the parent. */
function structEntries(v: GoValue, out: Map<string, RV>) {
  const fields = v.type.fields ?? [];
  const vals = v.v as RV[];
  fields.forEach((f, i) => {
    if (f.json === '-' || !/^\p{Lu}/u.test(f.name)) return;
    let val: RV = vals[i] ?? null;
    if (f.embedded && f.json === undefined) {
      if (val !== null && val.type.kind === 'ptr') val = val.v as RV;
      if (val !== null && val.type.kind === 'struct') {
        structEntries(val as GoValue, out);
        return;
      }
    }
    if (f.omitEmpty && isEmptyValue(val)) return;
    const name = f.json ?? f.name;
    if (!out.has(name)) out.set(name, val);
  });
}

function encodeStruct(v: GoValue, escapeHTML: boolean): string {
  const entries = new Map<string, RV>();
  structEntries(v, entries);
  return `{${[...entries].map(([k, x]) => `${jsonString(k, escapeHTML)}:${encode(x, escapeHTML)}`).join(',')}}`;
}

/** json.Marshal (HTML-escaped). Throws GoError with Go's text for NaN, Inf, complex, funcs. */
export function marshal(v: RV): string {
  return encode(v, true);
}

/** json.Encoder with SetEscapeHTML(false), trailing newline trimmed (sprig's toRawJson). */
export function marshalRaw(v: RV): string {
  return encode(v, false);
}

/** json.MarshalIndent(v, "", "  "). */
export function marshalIndent(v: RV): string {
  return indent(encode(v, true), '  ');
}

/** json.Indent of compact JSON: empty {} and [] stay on one line. */
function indent(src: string, ind: string): string {
  let out = '';
  let depth = 0;
  let inString = false;
  let needIndent = false;
  const newline = () => `\n${ind.repeat(depth)}`;
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (inString) {
      out += c;
      if (c === '\\') out += src[++i];
      else if (c === '"') inString = false;
      continue;
    }
    if (needIndent && c !== ']' && c !== '}') {
      needIndent = false;
      depth++;
      out += newline();
    }
    switch (c) {
      case '"':
        inString = true;
        out += c;
        break;
      case '{':
      case '[':
        out += c;
        needIndent = true;
        break;
      case ',':
        out += c + newline();
        break;
      case ':':
        out += ': ';
        break;
      case '}':
      case ']':
        if (needIndent) needIndent = false;
        else {
          depth--;
          out += newline();
        }
        out += c;
        break;
      default:
        out += c;
    }
  }
  return out;
}
