/** sprig v3.2.3 defaults.go (default, empty, coalesce, JSON, ternary), reflect.go, regex.go, fail. */
import { goFunc } from '../builtins.ts';
import { GoError } from '../errors.ts';
import { decodeGoJSON, JSONError, marshal, marshalIndent, marshalRaw } from '../json.ts';
import { deepEqual, empty, str } from '../reflect.ts';
import { GoRegexp, quoteMeta, RegexpSyntaxError } from '../regexp.ts';
import { canBackquote } from '../strconv.ts';
import { BOOL, type GoFunc, IFACE, INT, SLICE_IFACE, SLICE_STRING, STRING } from '../types.ts';
import { GoValue, goString, goStrings, type RV } from '../value.ts';

const b = (x: boolean) => new GoValue(BOOL, x);
const S = STRING;

function fromJson(v: string): RV {
  try {
    return decodeGoJSON(v);
  } catch (e) {
    if (e instanceof JSONError) throw new GoError(e.message);
    throw e;
  }
}

/** Marshal errors: toJson/toPrettyJson give "" (sprig ignores them), must* return them. */
function quiet(f: () => string): string {
  try {
    return f();
  } catch (e) {
    if (e instanceof GoError) return '';
    throw e;
  }
}

const cache = new Map<string, GoRegexp>();
/** regexp.Compile; syntax errors as Go's error values. */
function compile(expr: string): GoRegexp {
  let re = cache.get(expr);
  if (!re) {
    try {
      re = new GoRegexp(expr);
    } catch (e) {
      if (e instanceof RegexpSyntaxError) throw new GoError(e.message);
      throw e;
    }
    if (cache.size > 256) cache.clear();
    cache.set(expr, re);
  }
  return re;
}

/** regexp.MustCompile: panics with `regexp: Compile(…): …`. */
function mustCompile(expr: string): GoRegexp {
  try {
    return compile(expr);
  } catch (e) {
    if (e instanceof GoError) throw new GoError(`regexp: Compile(${quoteRegexp(expr)}): ${e.message}`);
    throw e;
  }
}

/** regexp's quote(): backquoted when strconv.CanBackquote, else strconv.Quote. */
function quoteRegexp(s: string): string {
  if (canBackquote(s)) return `\`${s}\``;
  return JSON.stringify(s);
}

function regexFuncs(must: boolean): Record<string, GoFunc> {
  const name = (n: string) => (must ? `must${n[0]!.toUpperCase()}${n.slice(1)}` : n);
  const opts = must ? { returnsError: true } : {};
  const get = must ? compile : mustCompile;
  return {
    [name('regexMatch')]: goFunc(
      [S, S],
      BOOL,
      ([r, s]) => {
        if (!must) {
          try {
            return b(compile(str(r)).matchString(str(s)));
          } catch (e) {
            if (e instanceof GoError) return b(false);
            throw e;
          }
        }
        return b(compile(str(r)).matchString(str(s)));
      },
      opts,
    ),
    [name('regexFindAll')]: goFunc(
      [S, S, INT],
      SLICE_STRING,
      ([r, s, n]) => goStrings(get(str(r)).findAllString(str(s), Number(n.v))),
      opts,
    ),
    [name('regexFind')]: goFunc([S, S], S, ([r, s]) => goString(get(str(r)).findString(str(s))), opts),
    [name('regexReplaceAll')]: goFunc(
      [S, S, S],
      S,
      ([r, s, repl]) => goString(get(str(r)).replaceAll(str(s), str(repl), false)),
      opts,
    ),
    [name('regexReplaceAllLiteral')]: goFunc(
      [S, S, S],
      S,
      ([r, s, repl]) => goString(get(str(r)).replaceAll(str(s), str(repl), true)),
      opts,
    ),
    [name('regexSplit')]: goFunc(
      [S, S, INT],
      SLICE_STRING,
      ([r, s, n]) => goStrings(get(str(r)).split(str(s), Number(n.v))),
      opts,
    ),
  };
}

export const DEFAULT_FUNCS: Record<string, GoFunc> = {
  default: goFunc(
    [IFACE, SLICE_IFACE],
    IFACE,
    ([d, ...given]) => (given.length === 0 || empty(given[0]!) ? d : given[0]!),
    {
      variadic: true,
    },
  ),
  empty: goFunc([IFACE], BOOL, ([v]) => b(empty(v))),
  coalesce: goFunc([SLICE_IFACE], IFACE, (v: RV[]) => v.find((x) => !empty(x)) ?? null, { variadic: true }),
  all: goFunc([SLICE_IFACE], BOOL, (v: RV[]) => b(v.every((x) => !empty(x))), { variadic: true }),
  any: goFunc([SLICE_IFACE], BOOL, (v: RV[]) => b(v.some((x) => !empty(x))), { variadic: true }),
  fromJson: goFunc([S], IFACE, ([v]) => {
    try {
      return fromJson(str(v));
    } catch (e) {
      if (e instanceof GoError) return null;
      throw e;
    }
  }),
  mustFromJson: goFunc([S], IFACE, ([v]) => fromJson(str(v)), { returnsError: true }),
  toJson: goFunc([IFACE], S, ([v]) => goString(quiet(() => marshal(v)))),
  mustToJson: goFunc([IFACE], S, ([v]) => goString(marshal(v)), { returnsError: true }),
  toPrettyJson: goFunc([IFACE], S, ([v]) => goString(quiet(() => marshalIndent(v)))),
  mustToPrettyJson: goFunc([IFACE], S, ([v]) => goString(marshalIndent(v)), { returnsError: true }),
  toRawJson: goFunc([IFACE], S, ([v]) => goString(marshalRaw(v))),
  mustToRawJson: goFunc([IFACE], S, ([v]) => goString(marshalRaw(v)), { returnsError: true }),
  ternary: goFunc([IFACE, IFACE, BOOL], IFACE, ([vt, vf, c]) => (c.v ? vt : vf)),
  typeOf: goFunc([IFACE], S, ([v]) => goString(v === null ? '<nil>' : v.type.name)),
  typeIs: goFunc([S, IFACE], BOOL, ([t, v]) => b(str(t) === (v === null ? '<nil>' : v.type.name))),
  typeIsLike: goFunc([S, IFACE], BOOL, ([t, v]) => {
    const n = v === null ? '<nil>' : v.type.name;
    return b(str(t) === n || `*${str(t)}` === n);
  }),
  kindOf: goFunc([IFACE], S, ([v]) => goString(v === null ? 'invalid' : v.type.kind)),
  kindIs: goFunc([S, IFACE], BOOL, ([t, v]) => b(str(t) === (v === null ? 'invalid' : v.type.kind))),
  deepEqual: goFunc([IFACE, IFACE], BOOL, ([x, y]) => b(deepEqual(x, y))),
  fail: goFunc(
    [S],
    S,
    ([m]) => {
      throw new GoError(str(m));
    },
    { returnsError: true },
  ),
  regexQuoteMeta: goFunc([S], S, ([s]) => goString(quoteMeta(str(s)))),
  ...regexFuncs(false),
  ...regexFuncs(true),
};
