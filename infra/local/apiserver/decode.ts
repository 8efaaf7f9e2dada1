/**
 * Decoding a built-in object as the real server does when it unmarshals JSON into the kind's Go
 * struct (sigs.k8s.io/json, case-sensitive, strict when fieldValidation asks): unknown fields
 * are dropped and reported by path (`spec.taints[0].foo`), nulls become zero values, and a value
 * of the wrong JSON type fails the whole request with Go's message ("json: cannot unmarshal
 * number into Go struct field Secret.stringData of type string"). Also the duplicate-field scan
 * of a raw JSON body, which the strict decoder reports as `duplicate field "a"`.
 */
import type { GoType, ScalarType, StructType } from './builtin-types.ts';

export interface TypedDecode {
  /** The first type error, worded as Go's decoder does; the request fails whatever fieldValidation says. */
  error?: string;
  /** Paths of the unknown fields, which were removed from the object. */
  unknown: string[];
}

const isObj = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** How Go's decoder names a JSON value in "cannot unmarshal X into ...". */
function jsonKind(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return 'number';
  return typeof v === 'string' ? 'string' : 'object';
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const RFC3339_MICRO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}(Z|[+-]\d{2}:\d{2})$/;
const QUANTITY = /^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$/;
const QUANTITY_SUFFIX = /^(|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][-+]?\d+)$/;
const INT32 = 2 ** 31;

/** Go's base64.StdEncoding.Decode error for `s`, or undefined when it decodes. */
export function base64Error(s: string): string | undefined {
  const bad = (at: number) => `illegal base64 data at input byte ${at}`;
  const nl = (c: string | undefined) => c === '\n' || c === '\r';
  const n = s.length;
  let si = 0;
  for (;;) {
    for (let j = 0; j < 4; j++) {
      if (si === n) return j === 0 ? undefined : bad(si - j);
      const c = s[si++]!;
      if (nl(c)) {
        j--;
        continue;
      }
      if (/[A-Za-z0-9+/]/.test(c)) continue;
      if (c !== '=' || j < 2) return bad(si - 1);
      if (j === 2) {
        while (si < n && nl(s[si])) si++;
        if (si === n) return bad(n);
        if (s[si] !== '=') return bad(si - 1);
        si++;
      }
      while (si < n && nl(s[si])) si++;
      return si < n ? bad(si) : undefined;
    }
  }
}

/** The zero value Go stores for a null inside a map or slice of `t`. */
function zeroOf(t: GoType): unknown {
  switch (t.t) {
    case 'string':
      return '';
    case 'int32':
    case 'int64':
    case 'float64':
    case 'intOrString':
      return 0;
    case 'bool':
      return false;
    case 'quantity':
      return '0';
    case 'struct':
      return {};
    default:
      return null;
  }
}

const DROP = Symbol('drop');

class Decoder {
  error: string | undefined;
  readonly unknown: string[] = [];
  /** Names of the struct fields from the root to the current value (Go's errorContext.FieldStack). */
  private readonly stack: string[] = [];
  /** Keys and indexes from the root (the strict field path), joined only for an unknown field. */
  private readonly at: (string | number)[] = [];
  private structName = '';

  private pathTo(k: string): string {
    let p = '';
    for (const s of this.at) p += typeof s === 'number' ? `[${s}]` : p ? `.${s}` : s;
    return p ? `${p}.${k}` : k;
  }

  private fail(message: string): typeof DROP {
    this.error ??= message;
    return DROP;
  }

  private mismatch(v: unknown, t: GoType): typeof DROP {
    const where = this.stack.length
      ? `Go struct field ${this.structName}.${this.stack.join('.')}`
      : `Go value`;
    const what = typeof v === 'number' && (t.t === 'int32' || t.t === 'int64') ? `number ${v}` : jsonKind(v);
    return this.fail(`json: cannot unmarshal ${what} into ${where} of type ${t.go}`);
  }

  value(t: GoType, v: unknown): unknown {
    switch (t.t) {
      case 'struct':
        return this.struct(t, v);
      case 'map': {
        if (!isObj(v)) return this.mismatch(v, t);
        for (const k of Object.keys(v)) {
          this.at.push(k);
          this.put(v, k, t.elem);
          this.at.pop();
        }
        return v;
      }
      case 'slice': {
        if (!Array.isArray(v)) return this.mismatch(v, t);
        for (let i = 0; i < v.length; i++) {
          if (v[i] === null) v[i] = zeroOf(t.elem);
          else {
            this.at.push(i);
            const r = this.value(t.elem, v[i]);
            this.at.pop();
            // Only a changed element is written back: a write shares unchanged lists (the stored,
            // frozen managedFields) with the version before it.
            if (r !== DROP && r !== v[i]) v[i] = r;
          }
        }
        return v;
      }
      default:
        return this.scalar(t, v);
    }
  }

  /** A map entry or struct field: null → zero (maps) or absent (fields); values checked in place. */
  private put(obj: Record<string, unknown>, k: string, t: GoType): void {
    const v = obj[k];
    if (v === null) {
      obj[k] = zeroOf(t);
      return;
    }
    const r = this.value(t, v);
    if (r === DROP) delete obj[k];
    else if (r !== v) obj[k] = r;
  }

  struct(t: StructType, v: unknown): unknown {
    if (!isObj(v)) return this.mismatch(v, t);
    const outer = this.structName;
    for (const k of Object.keys(v)) {
      const f = t.fields.get(k);
      if (!f) {
        this.unknown.push(this.pathTo(k));
        delete v[k];
        continue;
      }
      if (v[k] === null) {
        // A null field decodes to the zero value, which omitempty leaves out when encoding.
        delete v[k];
        continue;
      }
      this.structName = t.name;
      this.stack.push(k);
      this.at.push(k);
      const r = this.value(f.type, v[k]);
      this.at.pop();
      this.stack.pop();
      if (r === DROP) delete v[k];
      else if (r !== v[k]) v[k] = r;
    }
    this.structName = outer;
    return v;
  }

  private scalar(t: ScalarType, v: unknown): unknown {
    switch (t.t) {
      case 'string':
        return typeof v === 'string' ? v : this.mismatch(v, t);
      case 'bytes': {
        if (typeof v !== 'string') return this.mismatch(v, t);
        const e = base64Error(v);
        return e ? this.fail(e) : v;
      }
      case 'int32':
      case 'int64': {
        const max = t.t === 'int32' ? INT32 : 2 ** 63;
        return typeof v === 'number' && Number.isInteger(v) && v >= -max && v < max ? v : this.mismatch(v, t);
      }
      case 'float64':
        return typeof v === 'number' ? v : this.mismatch(v, t);
      case 'bool':
        return typeof v === 'boolean' ? v : this.mismatch(v, t);
      case 'time': {
        // metav1.Time / MicroTime UnmarshalJSON: a JSON string in RFC 3339 (MicroTime: exactly six fraction digits).
        if (typeof v !== 'string')
          return this.fail(`json: cannot unmarshal ${jsonKind(v)} into Go value of type string`);
        const layout = t.go === 'v1.MicroTime' ? RFC3339_MICRO : RFC3339;
        if (layout.test(v)) return v;
        const go = t.go === 'v1.MicroTime' ? '2006-01-02T15:04:05.000000Z07:00' : '2006-01-02T15:04:05Z07:00';
        return this.fail(
          `parsing time ${JSON.stringify(v)} as ${JSON.stringify(go)}: cannot parse ${JSON.stringify(v)} as "2006"`,
        );
      }
      case 'intOrString': {
        if (typeof v === 'string') return v;
        if (typeof v === 'number' && Number.isInteger(v) && v >= -INT32 && v < INT32) return v;
        const what = typeof v === 'number' ? `number ${v}` : jsonKind(v);
        return this.fail(`json: cannot unmarshal ${what} into Go value of type int32`);
      }
      case 'quantity': {
        const s = typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : '';
        const m = QUANTITY.exec(s);
        if (!m)
          return this.fail(
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
          );
        return QUANTITY_SUFFIX.test(m[2]!) ? v : this.fail("unable to parse quantity's suffix");
      }
      default:
        return v;
    }
  }
}

/** Decodes `obj` (a fresh copy: it is pruned in place) as the kind's struct. */
export function decodeTyped(t: StructType, obj: Record<string, unknown>): TypedDecode {
  const d = new Decoder();
  d.struct(t, obj);
  return d.error === undefined ? { unknown: d.unknown } : { error: d.error, unknown: d.unknown };
}

/**
 * The duplicate object keys of a JSON text, by path, as sigs.k8s.io/json's strict decoder reports
 * them (`metadata.labels.a`, `spec.taints[0].key`). The text must be valid JSON (parsed already).
 * Strings are skipped with indexOf; only keys are sliced.
 *
 * `parsed`, the text's own JSON.parse, spares the set of keys: an object of the text has no
 * duplicate exactly when it has as many keys as its parse (which keeps one of each), and then only
 * the keys of nested objects and arrays are sliced, to descend. An object that has one is scanned
 * again with a set. A status map with an entry per machine made ~4.6 MB of keys, paths and sets a
 * write at 10,000 machines without it (docs/benchmarks.md, "Map writes").
 */
export function duplicateFields(text: string, parsed?: unknown): string[] {
  const out: string[] = [];
  let i = 0;
  const ws = (): number => {
    let c = text.charCodeAt(i);
    while (c === 32 || c === 10 || c === 13 || c === 9) c = text.charCodeAt(++i);
    return c;
  };
  /** Skips the string starting at i (a quote); returns its raw contents' end. */
  const skipString = (): number => {
    let j = i + 1;
    for (;;) {
      const q = text.indexOf('"', j);
      let b = q - 1;
      while (text.charCodeAt(b) === 92) b--;
      if ((q - 1 - b) % 2 === 0) {
        i = q + 1;
        return q;
      }
      j = q + 1;
    }
  };
  /** The key whose string starts at i, decoded; i moves past it. */
  const key = (): string => {
    const start = i + 1;
    const raw = text.slice(start, skipString());
    return raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
  };
  // The path as segments (a key, or an array index), joined only for a duplicate.
  const segs: (string | number)[] = [];
  const pathOf = (k: string): string => {
    let p = '';
    for (const s of segs) p += typeof s === 'number' ? `[${s}]` : `.${s}`;
    return p ? `${p.startsWith('.') ? p.slice(1) : p}.${k}` : k;
  };
  /** The object at i, its keys counted against `p`'s; false (i anywhere) when it has a duplicate. */
  const counted = (p: Record<string, unknown>): boolean => {
    i++;
    if (ws() === 125) {
      i++;
      return true;
    }
    let n = 0;
    for (;;) {
      ws();
      n++;
      const start = i;
      skipString();
      ws();
      i++; // ':'
      const c = ws();
      if (c === 123 || c === 91) {
        const after = i;
        i = start;
        const k = key();
        i = after;
        segs.push(k);
        value(Object.hasOwn(p, k) ? p[k] : undefined);
        segs.pop();
      } else value(undefined);
      if (ws() === 125) {
        i++;
        return n === Object.keys(p).length;
      }
      i++; // ','
    }
  };
  /** The object at i, each key looked up in a set of those before it. */
  const withSet = (): void => {
    i++;
    let seen: Set<string> | undefined;
    if (ws() === 125) {
      i++;
      return;
    }
    for (;;) {
      ws();
      const k = key();
      seen ??= new Set();
      if (seen.has(k)) out.push(pathOf(k));
      else seen.add(k);
      ws();
      i++; // ':'
      segs.push(k);
      value(undefined);
      segs.pop();
      if (ws() === 125) {
        i++;
        return;
      }
      i++; // ','
    }
  };
  const value = (p: unknown): void => {
    const c = ws();
    if (c === 123) {
      if (p !== null && typeof p === 'object' && !Array.isArray(p)) {
        const start = i;
        const mark = out.length;
        if (counted(p as Record<string, unknown>)) return;
        // A duplicate here: what was found below is found again, in order, by the scan with a set.
        out.length = mark;
        i = start;
      }
      withSet();
    } else if (c === 91) {
      i++;
      if (ws() === 93) {
        i++;
        return;
      }
      const items = Array.isArray(p) ? p : undefined;
      for (let n = 0; ; n++) {
        segs.push(n);
        value(items?.[n]);
        segs.pop();
        if (ws() === 93) {
          i++;
          return;
        }
        i++; // ','
      }
    } else if (c === 34) skipString();
    else {
      // A number or a literal: up to the next delimiter.
      let d = text.charCodeAt(i);
      while (
        i < text.length &&
        d !== 44 &&
        d !== 125 &&
        d !== 93 &&
        d !== 32 &&
        d !== 10 &&
        d !== 13 &&
        d !== 9
      )
        d = text.charCodeAt(++i);
    }
  };
  value(parsed);
  return out;
}

/** A JSON value as Go's %+v prints the map[string]interface{} it decodes to (for patch error messages). */
export function goFormat(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goFormat).join(' ')}]`;
  if (typeof v === 'object')
    return `map[${Object.keys(v)
      .sort()
      .map((k) => `${k}:${goFormat((v as Record<string, unknown>)[k])}`)
      .join(' ')}]`;
  if (typeof v === 'number') {
    // float64 %v: shortest 'g' formatting, exponent form from 1e+06 and below 1e-04.
    if (v === 0) return '0';
    const exp = Math.floor(Math.log10(Math.abs(v)));
    if (exp < -4 || exp >= 6) {
      const [m, e] = v.toExponential().split('e');
      const n = Number(e);
      return `${m}e${n < 0 ? '-' : '+'}${String(Math.abs(n)).padStart(2, '0')}`;
    }
    return String(v);
  }
  return String(v);
}
