/**
 * sprig's semver and semverCompare on a port of Masterminds/semver v3.2.0 (version.go,
 * constraints.go): the same regular expressions (through our Go regexp), the same prerelease and
 * wildcard rules, the same error texts. `semver` returns a *semver.Version whose read methods
 * (Major, Minor, Patch, Prerelease, Metadata, Original, String, Compare, LessThan, GreaterThan,
 * Equal, IncMajor, IncMinor, IncPatch) templates can call.
 */
import { goFunc } from '../builtins.ts';
import { GoError } from '../errors.ts';
import { jsonString } from '../json.ts';
import { str } from '../reflect.ts';
import { GoRegexp } from '../regexp.ts';
import { BOOL, type GoFunc, type GoType, INT, ptrTo, STRING, UINT64 } from '../types.ts';
import { GoValue, goString } from '../value.ts';

interface Version {
  major: bigint;
  minor: bigint;
  patch: bigint;
  pre: string;
  metadata: string;
  original: string;
}

const SEMVER = `v?([0-9]+)(\\.[0-9]+)?(\\.[0-9]+)?(-([0-9A-Za-z\\-]+(\\.[0-9A-Za-z\\-]+)*))?(\\+([0-9A-Za-z\\-]+(\\.[0-9A-Za-z\\-]+)*))?`;
const CV = `v?([0-9|x|X|\\*]+)(\\.[0-9|x|X|\\*]+)?(\\.[0-9|x|X|\\*]+)?(-([0-9A-Za-z\\-]+(\\.[0-9A-Za-z\\-]+)*))?(\\+([0-9A-Za-z\\-]+(\\.[0-9A-Za-z\\-]+)*))?`;
const OPS = '=||!=|>|<|>=|=>|<=|=<|~|~>|\\^';

let res:
  | { version: GoRegexp; constraint: GoRegexp; range: GoRegexp; find: GoRegexp; valid: GoRegexp }
  | undefined;
function regexps() {
  res ??= {
    version: new GoRegexp(`^${SEMVER}$`),
    constraint: new GoRegexp(`^\\s*(${OPS})\\s*(${CV})\\s*$`),
    range: new GoRegexp(`\\s*(${CV})\\s+-\\s+(${CV})\\s*`),
    find: new GoRegexp(`(${OPS})\\s*(${CV})`),
    valid: new GoRegexp(`^(\\s*(${OPS})\\s*(${CV})\\s*)((?:\\s+|,\\s*)(${OPS})\\s*(${CV})\\s*)*$`),
  };
  return res;
}

/** The submatches of a match (Go's FindStringSubmatch): '' for groups that did not take part. */
function groups(s: string, m: number[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < m.length; i += 2) out.push(m[i]! < 0 ? '' : s.slice(m[i], m[i + 1]));
  return out;
}

const parseU64 = (s: string): bigint => {
  const v = BigInt(s);
  if (v > 2n ** 64n - 1n)
    throw new GoError(
      `Error parsing version segment: strconv.ParseUint: parsing ${JSON.stringify(s)}: value out of range`,
    );
  return v;
};

const ALLOWED = /^[A-Za-z0-9-]*$/;

function validate(v: Version) {
  if (v.pre !== '') {
    for (const p of v.pre.split('.')) {
      if (/^[0-9]*$/.test(p)) {
        if (p.length > 1 && p[0] === '0') throw new GoError('Version segment starts with 0');
      } else if (!ALLOWED.test(p)) throw new GoError('Invalid Prerelease string');
    }
  }
  if (v.metadata !== '')
    for (const p of v.metadata.split('.')) if (!ALLOWED.test(p)) throw new GoError('Invalid Metadata string');
}

/** semver.NewVersion. */
export function newVersion(s: string): Version {
  const m0 = regexps().version.exec(s, 0);
  if (m0 === null) throw new GoError('Invalid Semantic Version');
  const m = groups(s, m0);
  const v: Version = {
    major: parseU64(m[1]!),
    minor: m[2] ? parseU64(m[2].slice(1)) : 0n,
    patch: m[3] ? parseU64(m[3].slice(1)) : 0n,
    pre: m[5]!,
    metadata: m[8]!,
    original: s,
  };
  validate(v);
  return v;
}

function versionString(v: Version): string {
  let s = `${v.major}.${v.minor}.${v.patch}`;
  if (v.pre !== '') s += `-${v.pre}`;
  if (v.metadata !== '') s += `+${v.metadata}`;
  return s;
}

function comparePrePart(s: string, o: string): number {
  if (s === o) return 0;
  if (s === '') return o !== '' ? -1 : 1;
  if (o === '') return 1;
  const isU = (x: string) => /^[0-9]+$/.test(x) && BigInt(x) < 2n ** 64n;
  const on = isU(o);
  const sn = isU(s);
  if (!on && !sn) return s > o ? 1 : -1;
  if (!on) return -1;
  if (!sn) return 1;
  return BigInt(s) > BigInt(o) ? 1 : -1;
}

function comparePrerelease(a: string, b: string): number {
  const sp = a.split('.');
  const op = b.split('.');
  for (let i = 0; i < Math.max(sp.length, op.length); i++) {
    const d = comparePrePart(sp[i] ?? '', op[i] ?? '');
    if (d !== 0) return d;
  }
  return 0;
}

export function compare(v: Version, o: Version): number {
  for (const k of ['major', 'minor', 'patch'] as const) {
    if (v[k] !== o[k]) return v[k] < o[k] ? -1 : 1;
  }
  if (v.pre === '' && o.pre === '') return 0;
  if (v.pre === '') return 1;
  if (o.pre === '') return -1;
  return comparePrerelease(v.pre, o.pre);
}

interface Constraint {
  con: Version;
  op: string;
  dirty: boolean;
  minorDirty: boolean;
  patchDirty: boolean;
}

const isX = (x: string) => x === 'x' || x === '*' || x === 'X';

function parseConstraint(c: string): Constraint {
  if (c.length === 0)
    return { con: newVersion('0.0.0'), op: '', dirty: true, minorDirty: false, patchDirty: false };
  const m0 = regexps().constraint.exec(c, 0);
  if (m0 === null) throw new GoError(`improper constraint: ${c}`);
  const m = groups(c, m0);
  let ver = m[2]!;
  let minorDirty = false;
  let patchDirty = false;
  let dirty = false;
  if (isX(m[3]!) || m[3] === '') {
    ver = `0.0.0${m[6]}`;
    dirty = true;
  } else if (isX(m[4]!.replace(/^\./, '')) || m[4] === '') {
    minorDirty = true;
    dirty = true;
    ver = `${m[3]}.0.0${m[6]}`;
  } else if (isX(m[5]!.replace(/^\./, '')) || m[5] === '') {
    dirty = true;
    patchDirty = true;
    ver = `${m[3]}${m[4]}.0${m[6]}`;
  }
  let con: Version;
  try {
    con = newVersion(ver);
  } catch {
    throw new GoError('constraint Parser Error');
  }
  return { con, op: m[1]!, dirty, minorDirty, patchDirty };
}

/** rewriteRange: "1.2 - 1.4" → ">= 1.2, <= 1.4". */
function rewriteRange(i: string): string {
  let o = i;
  for (const m0 of regexps().range.allMatches(i, -1)) {
    const m = groups(i, m0);
    o = o.replace(m[0]!, `>= ${m[1]}, <= ${m[11]}`);
  }
  return o;
}

/** semver.NewConstraint: OR groups of AND constraints. */
export function newConstraint(c: string): Constraint[][] {
  c = rewriteRange(c);
  return c.split('||').map((v) => {
    if (!regexps().valid.matchString(v)) throw new GoError(`improper constraint: ${v}`);
    const cs = regexps().find.findAllString(v, -1) ?? [v];
    return cs.map(parseConstraint);
  });
}

function check(v: Version, c: Constraint): boolean {
  const con = c.con;
  const releaseOnly = v.pre !== '' && con.pre === '';
  switch (c.op) {
    case '':
    case '=':
      if (releaseOnly) return false;
      return c.dirty ? tilde(v, c) : compare(v, con) === 0;
    case '!=':
      if (c.dirty) {
        if (releaseOnly) return false;
        if (con.major !== v.major) return true;
        if (con.minor !== v.minor && !c.minorDirty) return true;
        if (c.minorDirty) return false;
        if (con.patch !== v.patch && !c.patchDirty) return true;
        if (c.patchDirty) return (v.pre !== '' || con.pre !== '') && comparePrerelease(v.pre, con.pre) !== 0;
      }
      return compare(v, con) !== 0;
    case '>':
      if (releaseOnly) return false;
      if (!c.dirty) return compare(v, con) === 1;
      if (v.major > con.major) return true;
      if (v.major < con.major || c.minorDirty) return false;
      if (c.patchDirty) return v.minor > con.minor;
      return compare(v, con) === 1;
    case '<':
      return !releaseOnly && compare(v, con) < 0;
    case '>=':
    case '=>':
      return !releaseOnly && compare(v, con) >= 0;
    case '<=':
    case '=<':
      if (releaseOnly) return false;
      if (!c.dirty) return compare(v, con) <= 0;
      if (v.major > con.major) return false;
      return !(v.major === con.major && v.minor > con.minor && !c.minorDirty);
    case '~':
    case '~>':
      return tilde(v, c);
    case '^':
      return caret(v, c);
    default:
      return false;
  }
}

function tilde(v: Version, c: Constraint): boolean {
  const con = c.con;
  if (v.pre !== '' && con.pre === '') return false;
  if (compare(v, con) < 0) return false;
  if (con.major === 0n && con.minor === 0n && con.patch === 0n && !c.minorDirty && !c.patchDirty) return true;
  if (v.major !== con.major) return false;
  return !(v.minor !== con.minor && !c.minorDirty);
}

function caret(v: Version, c: Constraint): boolean {
  const con = c.con;
  if (v.pre !== '' && con.pre === '') return false;
  if (compare(v, con) < 0) return false;
  if (con.major > 0n || c.minorDirty) return v.major === con.major;
  if (con.major === 0n && v.major > 0n) return false;
  if (con.minor > 0n || c.patchDirty) return v.minor === con.minor;
  if (con.minor === 0n && v.minor > 0n) return false;
  return con.patch === v.patch;
}

export function checkConstraints(cs: Constraint[][], v: Version): boolean {
  return cs.some((and) => and.every((c) => check(v, c)));
}

// --- the *semver.Version value templates get ---

const VERSION: GoType = {
  kind: 'struct',
  name: 'semver.Version',
  fields: [],
  stringer: (self) => versionString(self.v as Version),
  marshalJSON: (self) => jsonString(versionString(self.v as Version), true),
};
const VERSION_PTR = ptrTo(VERSION);

const versionOf = (self: GoValue): Version =>
  (self.type === VERSION_PTR ? (self.v as GoValue).v : self.v) as Version;
const ptr = (v: Version) => new GoValue(VERSION_PTR, new GoValue(VERSION, v));
const val = (v: Version) => new GoValue(VERSION, v);
const u64 = (n: bigint) => new GoValue(UINT64, n);

function inc(v: Version, what: 'major' | 'minor' | 'patch'): Version {
  const next: Version = { ...v, pre: '', metadata: '' };
  if (what === 'major') Object.assign(next, { major: v.major + 1n, minor: 0n, patch: 0n });
  else if (what === 'minor') Object.assign(next, { minor: v.minor + 1n, patch: 0n });
  else if (v.pre === '') next.patch = v.patch + 1n;
  next.original = (v.original.startsWith('v') ? 'v' : '') + versionString(next);
  return next;
}

const method =
  (params: GoType[], result: GoType, f: (v: Version, args: GoValue[]) => GoValue) => (self: GoValue) =>
    goFunc(params, result, (args: GoValue[]) => f(versionOf(self), args));

/** Value-receiver methods (a Version value returned by IncPatch, say, has only these). */
VERSION.methods = new Map([
  ['Major', method([], UINT64, (v) => u64(v.major))],
  ['Minor', method([], UINT64, (v) => u64(v.minor))],
  ['Patch', method([], UINT64, (v) => u64(v.patch))],
  ['Prerelease', method([], STRING, (v) => goString(v.pre))],
  ['Metadata', method([], STRING, (v) => goString(v.metadata))],
  ['String', method([], STRING, (v) => goString(versionString(v)))],
  ['IncMajor', method([], VERSION, (v) => val(inc(v, 'major')))],
  ['IncMinor', method([], VERSION, (v) => val(inc(v, 'minor')))],
  ['IncPatch', method([], VERSION, (v) => val(inc(v, 'patch')))],
]);
/** *Version adds the pointer-receiver ones. */
VERSION_PTR.methods = new Map([
  ...VERSION.methods,
  ['Original', method([], STRING, (v) => goString(v.original))],
  ['Compare', method([VERSION_PTR], INT, (v, [o]) => new GoValue(INT, BigInt(compare(v, versionOf(o!)))))],
  ['LessThan', method([VERSION_PTR], BOOL, (v, [o]) => new GoValue(BOOL, compare(v, versionOf(o!)) < 0))],
  ['GreaterThan', method([VERSION_PTR], BOOL, (v, [o]) => new GoValue(BOOL, compare(v, versionOf(o!)) > 0))],
  ['Equal', method([VERSION_PTR], BOOL, (v, [o]) => new GoValue(BOOL, compare(v, versionOf(o!)) === 0))],
]);

export const SEMVER_FUNCS: Record<string, GoFunc> = {
  semver: goFunc([STRING], VERSION_PTR, ([s]) => ptr(newVersion(str(s))), { returnsError: true }),
  semverCompare: goFunc(
    [STRING, STRING],
    BOOL,
    ([c, v]) => {
      const cs = newConstraint(str(c));
      return new GoValue(BOOL, checkConstraints(cs, newVersion(str(v))));
    },
    { returnsError: true },
  ),
};
