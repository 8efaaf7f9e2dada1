/**
 * The JSONPath subset printer columns and `kubectl wait --for=jsonpath` use: `.a.b`, `.a[0]`,
 * `.a[*].b`, `['a.b']`, `[?(@.type=="Ready")]` (==, !=, and bare existence). Results are a list.
 */
type Step =
  | { t: 'key'; k: string }
  | { t: 'index'; i: number }
  | { t: 'all' }
  | { t: 'filter'; path: Step[]; op?: '==' | '!='; value?: unknown };

const cache = new Map<string, Step[]>();

export function parseJsonPath(expr: string): Step[] {
  const hit = cache.get(expr);
  if (hit) return hit;
  let s = expr.trim();
  if (s.startsWith('{') && s.endsWith('}')) s = s.slice(1, -1);
  if (s.startsWith('$')) s = s.slice(1);
  const steps = parseSteps(s);
  cache.set(expr, steps);
  return steps;
}

function parseSteps(s: string): Step[] {
  const steps: Step[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (c === '.') {
      i++;
      let k = '';
      while (i < s.length && s[i] !== '.' && s[i] !== '[') {
        if (s[i] === '\\' && i + 1 < s.length) {
          k += s[i + 1];
          i += 2;
        } else k += s[i++];
      }
      if (k) steps.push({ t: 'key', k });
    } else if (c === '[') {
      const close = findClose(s, i);
      const inner = s.slice(i + 1, close).trim();
      i = close + 1;
      if (inner === '*') steps.push({ t: 'all' });
      else if (/^-?\d+$/.test(inner)) steps.push({ t: 'index', i: Number(inner) });
      else if (/^'.*'$|^".*"$/.test(inner)) steps.push({ t: 'key', k: inner.slice(1, -1) });
      else if (inner.startsWith('?(') && inner.endsWith(')')) {
        const body = inner.slice(2, -1).trim();
        const m = /^@((?:\.[^=!\s]+)+)\s*(==|!=)\s*(.+)$/.exec(body);
        if (m) {
          const raw = m[3]!.trim();
          let value: unknown = raw;
          if (/^".*"$|^'.*'$/.test(raw)) value = raw.slice(1, -1);
          else if (raw === 'true' || raw === 'false') value = raw === 'true';
          else if (/^-?\d+(\.\d+)?$/.test(raw)) value = Number(raw);
          steps.push({ t: 'filter', path: parseSteps(m[1]!), op: m[2] as '==' | '!=', value });
        } else if (body.startsWith('@')) {
          steps.push({ t: 'filter', path: parseSteps(body.slice(1)) });
        } else throw new Error(`unsupported JSONPath filter: ${inner}`);
      } else throw new Error(`unsupported JSONPath subscript: ${inner}`);
    } else throw new Error(`unexpected character '${c}' in JSONPath ${s}`);
  }
  return steps;
}

function findClose(s: string, open: number): number {
  let depth = 0;
  let quote: string | undefined;
  for (let i = open; i < s.length; i++) {
    const c = s[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '[' || c === '(') depth++;
    else if (c === ']' || c === ')') {
      depth--;
      if (depth === 0 && c === ']') return i;
    }
  }
  throw new Error(`unterminated [ in JSONPath ${s}`);
}

function run(steps: Step[], roots: unknown[]): unknown[] {
  let cur = roots;
  for (const st of steps) {
    const next: unknown[] = [];
    for (const v of cur) {
      if (v === null || v === undefined) continue;
      if (st.t === 'key') {
        if (typeof v === 'object' && !Array.isArray(v) && Object.hasOwn(v, st.k)) next.push((v as any)[st.k]);
      } else if (st.t === 'index') {
        if (Array.isArray(v)) {
          const x = v[st.i < 0 ? v.length + st.i : st.i];
          if (x !== undefined) next.push(x);
        }
      } else if (st.t === 'all') {
        if (Array.isArray(v)) next.push(...v);
        else if (typeof v === 'object') next.push(...Object.values(v));
      } else {
        const items = Array.isArray(v) ? v : [v];
        for (const it of items) {
          const got = run(st.path, [it]);
          if (st.op === undefined) {
            if (got.length) next.push(it);
          } else {
            const eq = got.some((g) => g === st.value || String(g) === String(st.value));
            if (st.op === '==' ? eq : !eq) next.push(it);
          }
        }
      }
    }
    cur = next;
  }
  return cur;
}

/** All values the path selects in `obj`. */
export function evalJsonPath(expr: string, obj: unknown): unknown[] {
  return run(parseJsonPath(expr), [obj]);
}
