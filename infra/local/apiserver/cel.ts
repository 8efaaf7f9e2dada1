/**
 * A small CEL evaluator for CRD `x-kubernetes-validations` rules. Supported: literals (int,
 * double, string, bool, null, lists, maps), `self`/`oldSelf`, field access and indexing, `has()`,
 * `! - * / % + - < <= > >= == != in && || ?:`, the macros `all`, `exists`, `exists_one`, `map`,
 * `filter`, and the functions `size`, `startsWith`, `endsWith`, `contains`, `matches`,
 * `lowerAscii`, `upperAscii`, `int`, `uint`, `double`, `string`, `bool`, `isSorted`, `sum`,
 * `min`, `max`, `indexOf`, `lastIndexOf`, `join`, `split`, `trim`; `messageExpression` uses the
 * same evaluator. A rule using anything else fails to compile, so its CRD is rejected (never
 * silently accepted). Not supported: optionals (`?.`, `optionalOldSelf` values), quantity, url, ip
 * and format libraries, timestamps and durations, cost limits.
 */
export interface CompiledRule {
  usesOldSelf: boolean;
  eval(self: unknown, oldSelf: unknown): unknown;
}

type Env = Map<string, unknown>;
type Node = (env: Env) => unknown;

class CelError extends Error {
  override readonly name = 'CelError';
}

type Tok = { t: 'num' | 'str' | 'id' | 'op'; v: string; n?: number };

function lex(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  const ops = [
    '&&',
    '||',
    '==',
    '!=',
    '<=',
    '>=',
    '<',
    '>',
    '!',
    '+',
    '-',
    '*',
    '/',
    '%',
    '?',
    ':',
    '(',
    ')',
    '[',
    ']',
    '{',
    '}',
    '.',
    ',',
  ];
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (/[0-9]/.test(c)) {
      const m = /^(0x[0-9a-fA-F]+|\d+\.\d+(?:[eE][+-]?\d+)?|\d+(?:[eE][+-]?\d+)?)u?/.exec(src.slice(i))!;
      out.push({ t: 'num', v: m[0], n: Number(m[1]) });
      i += m[0].length;
      continue;
    }
    if (c === '"' || c === "'" || ((c === 'r' || c === 'R') && (src[i + 1] === '"' || src[i + 1] === "'"))) {
      const raw = c === 'r' || c === 'R';
      if (raw) i++;
      const q = src[i]!;
      const triple = src.slice(i, i + 3) === q.repeat(3);
      const end = triple ? q.repeat(3) : q;
      i += end.length;
      let s = '';
      while (i < src.length && src.slice(i, i + end.length) !== end) {
        if (!raw && src[i] === '\\') {
          const e = src[i + 1]!;
          const map: Record<string, string> = {
            n: '\n',
            t: '\t',
            r: '\r',
            '\\': '\\',
            '"': '"',
            "'": "'",
            '`': '`',
          };
          s += map[e] ?? e;
          i += 2;
        } else s += src[i++];
      }
      if (i >= src.length) throw new CelError('unterminated string literal');
      i += end.length;
      out.push({ t: 'str', v: s });
      continue;
    }
    if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i))!;
      out.push({ t: 'id', v: m[0] });
      i += m[0].length;
      continue;
    }
    const op = ops.find((o) => src.startsWith(o, i));
    if (!op) throw new CelError(`Syntax error: token recognition error at: '${c}'`);
    out.push({ t: 'op', v: op });
    i += op.length;
  }
  return out;
}

const typeOf = (v: unknown): string =>
  v === null
    ? 'null_type'
    : Array.isArray(v)
      ? 'list'
      : typeof v === 'object'
        ? 'map'
        : typeof v === 'number'
          ? Number.isInteger(v)
            ? 'int'
            : 'double'
          : typeof v;

function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a))
    return a.length === (b as unknown[]).length && a.every((x, i) => equal(x, (b as unknown[])[i]));
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  return (
    ka.length === kb.length &&
    ka.every((k) => Object.hasOwn(b as object, k) && equal((a as any)[k], (b as any)[k]))
  );
}

function size(v: unknown): number {
  if (typeof v === 'string') return [...v].length;
  if (Array.isArray(v)) return v.length;
  if (v && typeof v === 'object') return Object.keys(v).length;
  throw new CelError(`no such overload: size(${typeOf(v)})`);
}

function compare(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  throw new CelError(`no such overload: ${typeOf(a)} < ${typeOf(b)}`);
}

const METHODS: Record<string, (target: unknown, args: unknown[]) => unknown> = {
  size: (t) => size(t),
  startsWith: (t, [p]) => str(t).startsWith(str(p)),
  endsWith: (t, [p]) => str(t).endsWith(str(p)),
  contains: (t, [p]) => str(t).includes(str(p)),
  matches: (t, [p]) => new RegExp(str(p), 'u').test(str(t)),
  lowerAscii: (t) => str(t).replace(/[A-Z]/g, (c) => c.toLowerCase()),
  upperAscii: (t) => str(t).replace(/[a-z]/g, (c) => c.toUpperCase()),
  trim: (t) => str(t).trim(),
  indexOf: (t, [p]) => (Array.isArray(t) ? t.findIndex((x) => equal(x, p)) : str(t).indexOf(str(p))),
  lastIndexOf: (t, [p]) =>
    Array.isArray(t) ? t.findLastIndex((x) => equal(x, p)) : str(t).lastIndexOf(str(p)),
  split: (t, [p]) => str(t).split(str(p)),
  join: (t, [p]) =>
    list(t)
      .map(str)
      .join(p === undefined ? '' : str(p)),
  isSorted: (t) => list(t).every((x, i, a) => i === 0 || compare(a[i - 1], x) <= 0),
  sum: (t) => list(t).reduce((s: number, x) => s + num(x), 0),
  min: (t) => list(t).reduce((m, x) => (compare(x, m) < 0 ? x : m)),
  max: (t) => list(t).reduce((m, x) => (compare(x, m) > 0 ? x : m)),
};

const FUNCTIONS: Record<string, (args: unknown[]) => unknown> = {
  size: ([v]) => size(v),
  int: ([v]) => {
    const n = typeof v === 'string' ? Number(v) : num(v);
    if (!Number.isFinite(n)) throw new CelError(`cannot convert ${JSON.stringify(v)} to int`);
    return Math.trunc(n);
  },
  uint: ([v]) => Math.trunc(typeof v === 'string' ? Number(v) : num(v)),
  double: ([v]) => (typeof v === 'string' ? Number(v) : num(v)),
  string: ([v]) => (typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v)),
  bool: ([v]) => (typeof v === 'string' ? v === 'true' : Boolean(v)),
  matches: ([s, p]) => new RegExp(str(p), 'u').test(str(s)),
  type: ([v]) => typeOf(v),
};

function str(v: unknown): string {
  if (typeof v !== 'string') throw new CelError(`expected string, got ${typeOf(v)}`);
  return v;
}
function num(v: unknown): number {
  if (typeof v !== 'number') throw new CelError(`expected number, got ${typeOf(v)}`);
  return v;
}
function list(v: unknown): unknown[] {
  if (!Array.isArray(v)) throw new CelError(`expected list, got ${typeOf(v)}`);
  return v;
}
function bool(v: unknown): boolean {
  if (typeof v !== 'boolean') throw new CelError(`no matching overload: expected bool, got ${typeOf(v)}`);
  return v;
}

function field(target: unknown, name: string): unknown {
  if (target && typeof target === 'object' && !Array.isArray(target)) {
    if (!Object.hasOwn(target, name)) throw new CelError(`no such key: ${name}`);
    return (target as Record<string, unknown>)[name];
  }
  throw new CelError(`no such key: ${name}`);
}

class Parser {
  private p = 0;
  usesOldSelf = false;
  private readonly toks: Tok[];
  constructor(toks: Tok[]) {
    this.toks = toks;
  }
  private peek(v?: string): Tok | undefined {
    const t = this.toks[this.p];
    return v === undefined || t?.v === v ? t : undefined;
  }
  private eat(v: string): boolean {
    if (this.toks[this.p]?.v === v && this.toks[this.p]!.t === 'op') {
      this.p++;
      return true;
    }
    return false;
  }
  private expect(v: string): void {
    if (!this.eat(v))
      throw new CelError(`Syntax error: expected '${v}', found '${this.toks[this.p]?.v ?? '<EOF>'}'`);
  }
  parseAll(): Node {
    const n = this.expr();
    if (this.p < this.toks.length) throw new CelError(`Syntax error: unexpected '${this.toks[this.p]!.v}'`);
    return n;
  }
  expr(): Node {
    const c = this.or();
    if (this.eat('?')) {
      const a = this.or();
      this.expect(':');
      const b = this.expr();
      return (e) => (bool(c(e)) ? a(e) : b(e));
    }
    return c;
  }
  private or(): Node {
    let l = this.and();
    while (this.eat('||')) {
      const a = l;
      const r = this.and();
      // CEL's || is commutative over errors: true wins even if the other side errs.
      l = (e) => {
        let le: unknown;
        try {
          if (bool(a(e))) return true;
        } catch (x) {
          le = x;
        }
        if (bool(r(e))) return true;
        if (le) throw le;
        return false;
      };
    }
    return l;
  }
  private and(): Node {
    let l = this.rel();
    while (this.eat('&&')) {
      const a = l;
      const r = this.rel();
      l = (e) => {
        let le: unknown;
        try {
          if (!bool(a(e))) return false;
        } catch (x) {
          le = x;
        }
        if (!bool(r(e))) return false;
        if (le) throw le;
        return true;
      };
    }
    return l;
  }
  private rel(): Node {
    let l = this.add();
    for (;;) {
      const t = this.toks[this.p];
      const op =
        t &&
        ((t.t === 'op' && ['==', '!=', '<', '<=', '>', '>='].includes(t.v)) || (t.t === 'id' && t.v === 'in'))
          ? t.v
          : undefined;
      if (!op) return l;
      this.p++;
      const a = l;
      const r = this.add();
      l = (e) => {
        const x = a(e);
        const y = r(e);
        switch (op) {
          case '==':
            return equal(x, y);
          case '!=':
            return !equal(x, y);
          case 'in':
            if (Array.isArray(y)) return y.some((v) => equal(v, x));
            if (y && typeof y === 'object') return Object.hasOwn(y, str(x));
            throw new CelError(`no such overload: in ${typeOf(y)}`);
          case '<':
            return compare(x, y) < 0;
          case '<=':
            return compare(x, y) <= 0;
          case '>':
            return compare(x, y) > 0;
          default:
            return compare(x, y) >= 0;
        }
      };
    }
  }
  private add(): Node {
    let l = this.mul();
    for (;;) {
      const op = this.peek('+') ? '+' : this.peek('-') ? '-' : undefined;
      if (!op || this.toks[this.p]!.t !== 'op') return l;
      this.p++;
      const a = l;
      const r = this.mul();
      l = (e) => {
        const x = a(e);
        const y = r(e);
        if (op === '+') {
          if (typeof x === 'string' && typeof y === 'string') return x + y;
          if (Array.isArray(x) && Array.isArray(y)) return [...x, ...y];
          return num(x) + num(y);
        }
        return num(x) - num(y);
      };
    }
  }
  private mul(): Node {
    let l = this.unary();
    for (;;) {
      const t = this.toks[this.p];
      const op = t?.t === 'op' && ['*', '/', '%'].includes(t.v) ? t.v : undefined;
      if (!op) return l;
      this.p++;
      const a = l;
      const r = this.unary();
      l = (e) => {
        const x = num(a(e));
        const y = num(r(e));
        if ((op === '/' || op === '%') && y === 0)
          throw new CelError(op === '/' ? 'division by zero' : 'modulus by zero');
        if (op === '*') return x * y;
        if (op === '/') return Number.isInteger(x) && Number.isInteger(y) ? Math.trunc(x / y) : x / y;
        return x % y;
      };
    }
  }
  private unary(): Node {
    if (this.eat('!')) {
      const n = this.unary();
      return (e) => !bool(n(e));
    }
    if (this.eat('-')) {
      const n = this.unary();
      return (e) => -num(n(e));
    }
    return this.member();
  }
  private args(): Node[] {
    const out: Node[] = [];
    if (this.eat(')')) return out;
    do out.push(this.expr());
    while (this.eat(','));
    this.expect(')');
    return out;
  }
  private member(): Node {
    let n = this.primary();
    for (;;) {
      if (this.eat('.')) {
        const id = this.toks[this.p++];
        if (id?.t !== 'id') throw new CelError('Syntax error: expected field name');
        if (this.eat('(')) n = this.method(n, id.v);
        else {
          const target = n;
          const name = id.v;
          n = (e) => field(target(e), name);
        }
      } else if (this.eat('[')) {
        const target = n;
        const idx = this.expr();
        this.expect(']');
        n = (e) => {
          const t = target(e);
          const i = idx(e);
          if (Array.isArray(t)) {
            const k = num(i);
            if (k < 0 || k >= t.length) throw new CelError(`index out of bounds: ${k}`);
            return t[k];
          }
          return field(t, str(i));
        };
      } else return n;
    }
  }
  private method(target: Node, name: string): Node {
    const macros = ['all', 'exists', 'exists_one', 'map', 'filter'];
    if (macros.includes(name)) {
      const v = this.toks[this.p++];
      if (v?.t !== 'id') throw new CelError(`${name}() expects a variable name`);
      this.expect(',');
      const body = this.expr();
      let transform: Node | undefined;
      if (name === 'map' && this.eat(',')) transform = this.expr();
      this.expect(')');
      return (e) => {
        const t = target(e);
        const items = Array.isArray(t) ? t : t && typeof t === 'object' ? Object.keys(t) : list(t);
        const run = (x: unknown, n: Node) => {
          const env = new Map(e);
          env.set(v.v, x);
          return n(env);
        };
        switch (name) {
          case 'all':
            return items.every((x) => bool(run(x, body)));
          case 'exists':
            return items.some((x) => bool(run(x, body)));
          case 'exists_one':
            return items.filter((x) => bool(run(x, body))).length === 1;
          case 'filter':
            return items.filter((x) => bool(run(x, body)));
          default:
            return transform
              ? items.filter((x) => bool(run(x, body))).map((x) => run(x, transform!))
              : items.map((x) => run(x, body));
        }
      };
    }
    const fn = METHODS[name];
    if (!fn) throw new CelError(`undeclared reference to '${name}'`);
    const args = this.args();
    return (e) =>
      fn(
        target(e),
        args.map((a) => a(e)),
      );
  }
  private primary(): Node {
    const t = this.toks[this.p++];
    if (!t) throw new CelError('Syntax error: unexpected end of expression');
    if (t.t === 'num') {
      const n = t.n!;
      return () => n;
    }
    if (t.t === 'str') {
      const s = t.v;
      return () => s;
    }
    if (t.t === 'op') {
      if (t.v === '(') {
        const n = this.expr();
        this.expect(')');
        return n;
      }
      if (t.v === '[') {
        const items: Node[] = [];
        if (!this.eat(']')) {
          do items.push(this.expr());
          while (this.eat(','));
          this.expect(']');
        }
        return (e) => items.map((i) => i(e));
      }
      if (t.v === '{') {
        const entries: [Node, Node][] = [];
        if (!this.eat('}')) {
          do {
            const k = this.expr();
            this.expect(':');
            entries.push([k, this.expr()]);
          } while (this.eat(','));
          this.expect('}');
        }
        return (e) => Object.fromEntries(entries.map(([k, v]) => [str(k(e)), v(e)]));
      }
      throw new CelError(`Syntax error: unexpected '${t.v}'`);
    }
    switch (t.v) {
      case 'true':
        return () => true;
      case 'false':
        return () => false;
      case 'null':
        return () => null;
      case 'has': {
        this.expect('(');
        const start = this.p;
        const inner = this.member();
        this.expect(')');
        // has(x.f): re-parse the operand without its last field, then test presence.
        const lastDot = this.toks.slice(start, this.p - 1).map((x) => x.v);
        const fieldName = lastDot[lastDot.length - 1];
        if (lastDot.length < 3 || lastDot[lastDot.length - 2] !== '.')
          throw new CelError('invalid argument to has() macro');
        const sub = new Parser(this.toks.slice(start, this.p - 3));
        const target = sub.parseAll();
        void inner;
        return (e) => {
          const obj = target(e);
          return !!obj && typeof obj === 'object' && !Array.isArray(obj) && Object.hasOwn(obj, fieldName!);
        };
      }
    }
    if (this.eat('(')) {
      const fn = FUNCTIONS[t.v];
      if (!fn) throw new CelError(`undeclared reference to '${t.v}'`);
      const args = this.args();
      return (e) => fn(args.map((a) => a(e)));
    }
    if (t.v === 'oldSelf') this.usesOldSelf = true;
    const name = t.v;
    if (name !== 'self' && name !== 'oldSelf' && !/^[a-z_][A-Za-z0-9_]*$/.test(name))
      throw new CelError(`undeclared reference to '${name}'`);
    return (e) => {
      if (!e.has(name)) throw new CelError(`undeclared reference to '${name}'`);
      return e.get(name);
    };
  }
}

const compiled = new Map<string, CompiledRule>();

/** Compiles a rule; throws for syntax or features this evaluator does not support. */
export function compileRule(rule: string): CompiledRule {
  const hit = compiled.get(rule);
  if (hit) return hit;
  const parser = new Parser(lex(rule));
  const node = parser.parseAll();
  checkReferences(rule);
  const c: CompiledRule = {
    usesOldSelf: parser.usesOldSelf,
    eval: (self, oldSelf) =>
      node(
        new Map<string, unknown>([
          ['self', self],
          ['oldSelf', oldSelf],
        ]),
      ),
  };
  compiled.set(rule, c);
  return c;
}

/** Free identifiers other than self/oldSelf/macro variables are compile errors, as in CEL. */
function checkReferences(rule: string): void {
  const toks = lex(rule);
  const bound = new Set(['self', 'oldSelf', 'true', 'false', 'null', 'has', 'in', ...Object.keys(FUNCTIONS)]);
  toks.forEach((t, i) => {
    if (t.t !== 'id') return;
    const prev = toks[i - 1];
    const next = toks[i + 1];
    if (prev?.v === '.' && prev.t === 'op') return;
    if (next?.v === ',' && toks[i - 1]?.v === '(') {
      bound.add(t.v);
      return;
    }
    if (!bound.has(t.v)) throw new CelError(`undeclared reference to '${t.v}'`);
  });
}

export function evaluateRule(r: CompiledRule, self: unknown, old: unknown): boolean {
  const v = r.eval(self, old);
  if (typeof v !== 'boolean') throw new CelError(`rule did not evaluate to a bool: ${typeOf(v)}`);
  return v;
}
