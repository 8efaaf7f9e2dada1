/**
 * Go's time.Time as templates meet it (sprig's now, date, dateInZone, dateModify, …): Go's layout
 * language (time.Format), Time.String with the monotonic reading of time.Now, RFC 3339 JSON,
 * durations (ParseDuration, Duration.String). Zones: UTC, Local (the process's TZ, as Go reads
 * it) and IANA names through Intl; a zone abbreviation (layout `MST`) Intl only knows as "GMT+x"
 * is refused, since Go prints tzdata's (which may be "CET" or "+04").
 */
import { GoError, UnsupportedError } from './errors.ts';
import type { GoType } from './types.ts';
import { GoValue } from './value.ts';

export type Zone = { kind: 'utc' } | { kind: 'local' } | { kind: 'iana'; name: string };

export interface GoTime {
  /** Nanoseconds since the Unix epoch. */
  ns: bigint;
  zone: Zone;
  /** time.Now's monotonic reading (seconds since process start), printed by String as m=+…. */
  mono?: number;
}

const NS = 1_000_000_000n;
const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** time.LoadLocation, falling back to UTC as sprig does on an error. */
export function loadLocation(name: string): Zone {
  if (name === '' || name === 'UTC') return { kind: 'utc' };
  if (name === 'Local') return { kind: 'local' };
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return { kind: 'iana', name };
  } catch {
    return { kind: 'utc' };
  }
}

const floorDiv = (a: bigint, b: bigint) => (a >= 0n ? a / b : -((-a + b - 1n) / b));

/** Offset east of UTC in seconds, and the abbreviation, at the instant (seconds since epoch). */
function zoneAt(zone: Zone, sec: number): { offset: number; name: string | null } {
  if (zone.kind === 'utc') return { offset: 0, name: 'UTC' };
  const opts: Intl.DateTimeFormatOptions = {
    timeZoneName: 'longOffset',
    ...(zone.kind === 'iana' ? { timeZone: zone.name } : {}),
  };
  const date = new Date(sec * 1000);
  const off = new Intl.DateTimeFormat('en-US', opts)
    .formatToParts(date)
    .find((p) => p.type === 'timeZoneName')!.value;
  const m = /GMT(?:([+-])(\d\d):(\d\d)(?::(\d\d))?)?/.exec(off);
  const offset = m?.[1]
    ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 3600 + Number(m[3]) * 60 + Number(m[4] ?? 0))
    : 0;
  const short = new Intl.DateTimeFormat('en-US', { ...opts, timeZoneName: 'short' })
    .formatToParts(date)
    .find((p) => p.type === 'timeZoneName')!.value;
  return { offset, name: /^GMT[+-]/.test(short) ? null : short };
}

interface Fields {
  year: number;
  month: number;
  day: number;
  yday: number;
  wday: number;
  hour: number;
  min: number;
  sec: number;
  nsec: number;
  offset: number;
  name: string | null;
}

function fields(t: GoTime): Fields {
  const sec = floorDiv(t.ns, NS);
  const nsec = Number(t.ns - sec * NS);
  const z = zoneAt(t.zone, Number(sec));
  const local = new Date((Number(sec) + z.offset) * 1000);
  const year = local.getUTCFullYear();
  const start = Date.UTC(year, 0, 1);
  return {
    year,
    month: local.getUTCMonth() + 1,
    day: local.getUTCDate(),
    yday: Math.floor((local.getTime() - start) / 86_400_000) + 1,
    wday: local.getUTCDay(),
    hour: local.getUTCHours(),
    min: local.getUTCMinutes(),
    sec: local.getUTCSeconds(),
    nsec,
    offset: z.offset,
    name: z.name,
  };
}

const pad = (n: number, w: number, c = '0') => {
  const s = String(Math.abs(n)).padStart(w, c);
  return n < 0 ? `-${s}` : s;
};

const isDigit = (s: string, i: number) => i < s.length && s[i]! >= '0' && s[i]! <= '9';
const startsLower = (s: string) => s.length > 0 && s[0]! >= 'a' && s[0]! <= 'z';

/** Go's nextStdChunk: [prefix, token, suffix]; token '' when the layout has no more. */
function nextChunk(l: string): [string, string, string] {
  for (let i = 0; i < l.length; i++) {
    const c = l[i]!;
    const at = (s: string) => l.startsWith(s, i);
    const r = (tok: string, len = tok.length): [string, string, string] => [
      l.slice(0, i),
      tok,
      l.slice(i + len),
    ];
    switch (c) {
      case 'J':
        if (at('January')) return r('January');
        if (at('Jan') && !startsLower(l.slice(i + 3))) return r('Jan');
        break;
      case 'M':
        if (at('Monday')) return r('Monday');
        if (at('Mon') && !startsLower(l.slice(i + 3))) return r('Mon');
        if (at('MST')) return r('MST');
        break;
      case '0':
        if (i + 1 < l.length && l[i + 1]! >= '1' && l[i + 1]! <= '6') return r(l.slice(i, i + 2));
        if (at('002')) return r('002');
        break;
      case '1':
        if (at('15')) return r('15');
        return r('1');
      case '2':
        if (at('2006')) return r('2006');
        return r('2');
      case '_':
        if (l[i + 1] === '2') {
          if (l.startsWith('2006', i + 1)) return [l.slice(0, i + 1), '2006', l.slice(i + 5)];
          return r('_2');
        }
        if (at('__2')) return r('__2');
        break;
      case '3':
      case '4':
      case '5':
        return r(c);
      case 'P':
        if (at('PM')) return r('PM');
        break;
      case 'p':
        if (at('pm')) return r('pm');
        break;
      case '-':
      case 'Z':
        for (const z of ['070000', '07:00:00', '0700', '07:00', '07']) if (at(c + z)) return r(c + z);
        break;
      case '.':
      case ',': {
        const ch = l[i + 1];
        if (ch === '0' || ch === '9') {
          let j = i + 1;
          while (j < l.length && l[j] === ch) j++;
          if (!isDigit(l, j)) return [l.slice(0, i), l.slice(i, j), l.slice(j)];
        }
        break;
      }
    }
  }
  return [l, '', ''];
}

/** time.Time.Format. */
export function format(t: GoTime, layout: string): string {
  const f = fields(t);
  let out = '';
  let l = layout;
  for (;;) {
    const [prefix, tok, suffix] = nextChunk(l);
    out += prefix;
    if (tok === '') break;
    l = suffix;
    switch (tok) {
      case '06':
        out += pad(((f.year % 100) + 100) % 100, 2);
        break;
      case '2006':
        out += pad(f.year, 4);
        break;
      case 'Jan':
        out += MONTHS[f.month - 1]!.slice(0, 3);
        break;
      case 'January':
        out += MONTHS[f.month - 1];
        break;
      case '1':
        out += f.month;
        break;
      case '01':
        out += pad(f.month, 2);
        break;
      case 'Mon':
        out += DAYS[f.wday]!.slice(0, 3);
        break;
      case 'Monday':
        out += DAYS[f.wday];
        break;
      case '2':
        out += f.day;
        break;
      case '_2':
        out += pad(f.day, 2, ' ');
        break;
      case '02':
        out += pad(f.day, 2);
        break;
      case '__2':
        out += pad(f.yday, 3, ' ');
        break;
      case '002':
        out += pad(f.yday, 3);
        break;
      case '15':
        out += pad(f.hour, 2);
        break;
      case '3':
        out += f.hour % 12 === 0 ? 12 : f.hour % 12;
        break;
      case '03':
        out += pad(f.hour % 12 === 0 ? 12 : f.hour % 12, 2);
        break;
      case '4':
        out += f.min;
        break;
      case '04':
        out += pad(f.min, 2);
        break;
      case '5':
        out += f.sec;
        break;
      case '05':
        out += pad(f.sec, 2);
        break;
      case 'PM':
        out += f.hour >= 12 ? 'PM' : 'AM';
        break;
      case 'pm':
        out += f.hour >= 12 ? 'pm' : 'am';
        break;
      case 'MST':
        if (f.name === null) {
          throw new UnsupportedError(
            "the abbreviation of this time zone (layout MST) is not known reliably (Go prints tzdata's): not supported",
          );
        }
        out += f.name;
        break;
      default:
        if (tok[0] === '-' || tok[0] === 'Z') out += formatZone(tok, f.offset);
        else out += formatFrac(tok, f.nsec);
    }
  }
  return out;
}

function formatZone(tok: string, offset: number): string {
  if (offset === 0 && tok[0] === 'Z') return 'Z';
  let zone = Math.trunc(offset / 60);
  let abs = offset;
  let s = '+';
  if (zone < 0) {
    s = '-';
    zone = -zone;
    abs = -abs;
  }
  s += pad(Math.trunc(zone / 60), 2);
  const body = tok.slice(1);
  if (body.startsWith('07:')) s += ':';
  if (body !== '07') s += pad(zone % 60, 2);
  if (body === '070000' || body === '07:00:00') {
    if (body === '07:00:00') s += ':';
    s += pad(abs % 60, 2);
  }
  return s;
}

function formatFrac(tok: string, nsec: number): string {
  const n = tok.length - 1;
  let digits = String(nsec).padStart(9, '0').slice(0, n);
  if (tok[1] === '9') {
    digits = digits.replace(/0+$/, '');
    if (digits === '') return '';
  }
  return tok[0] + digits;
}

/** Time.String: "2006-01-02 15:04:05.999999999 -0700 MST" and time.Now's " m=+…". */
export function timeString(t: GoTime): string {
  let s = format(t, '2006-01-02 15:04:05.999999999 -0700 MST');
  if (t.mono !== undefined) s += ` m=+${t.mono.toFixed(9)}`;
  return s;
}

/** MarshalJSON: RFC 3339 with nanoseconds, quoted. */
export function timeJSON(t: GoTime): string {
  const f = fields(t);
  if (f.year < 0 || f.year > 9999) throw new GoError('Time.MarshalJSON: year outside of range [0,9999]');
  return `"${format(t, '2006-01-02T15:04:05.999999999Z07:00')}"`;
}

export const TIME: GoType = {
  kind: 'struct',
  name: 'time.Time',
  fields: [],
  stringer: (v) => timeString(v.v as GoTime),
  marshalJSON: (v) => timeJSON(v.v as GoTime),
};

export const goTime = (t: GoTime) => new GoValue(TIME, t);

/** time.Now (Local, with its monotonic reading). */
export function now(): GoTime {
  const ms = Date.now();
  return { ns: BigInt(ms) * 1_000_000n, zone: { kind: 'local' }, mono: performance.now() / 1000 };
}

export const unix = (sec: bigint): GoTime => ({ ns: sec * NS, zone: { kind: 'local' } });

// --- durations ---

const UNITS: Record<string, number> = {
  ns: 1,
  us: 1e3,
  µs: 1e3,
  μs: 1e3,
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};

/** time.ParseDuration: nanoseconds, or throws GoError with Go's text. */
export function parseDuration(s: string): bigint {
  const orig = s;
  const bad = () => new GoError(`time: invalid duration ${JSON.stringify(orig)}`);
  let neg = false;
  if (s[0] === '-' || s[0] === '+') {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return 0n;
  if (s === '') throw bad();
  let total = 0;
  while (s !== '') {
    const m = /^(\d*)(\.(\d*))?/.exec(s)!;
    if (m[1] === '' && (m[3] ?? '') === '') throw bad();
    s = s.slice(m[0].length);
    const u = /^[^\d.]*/.exec(s)![0];
    if (u === '') throw new GoError(`time: missing unit in duration ${JSON.stringify(orig)}`);
    const unit = UNITS[u];
    if (unit === undefined)
      throw new GoError(`time: unknown unit ${JSON.stringify(u)} in duration ${JSON.stringify(orig)}`);
    s = s.slice(u.length);
    total += Number(`${m[1] || '0'}.${m[3] ?? '0'}`) * unit;
  }
  if (total > 2 ** 63) throw bad();
  const ns = BigInt(Math.round(total));
  return neg ? -ns : ns;
}

/** Duration.String: "1h2m3.5s", "1.5ms", "0s". */
export function durationString(d: bigint): string {
  if (d === 0n) return '0s';
  const neg = d < 0n;
  let u = neg ? -d : d;
  const sign = neg ? '-' : '';
  if (u < NS) {
    let unit = 'ns';
    let scale = 1n;
    if (u >= 1_000_000n) {
      unit = 'ms';
      scale = 1_000_000n;
    } else if (u >= 1000n) {
      unit = 'µs';
      scale = 1000n;
    }
    return sign + frac(u, scale) + unit;
  }
  let out = `${frac(u % (60n * NS), NS)}s`;
  u /= 60n * NS;
  if (u > 0n) {
    out = `${u % 60n}m${out}`;
    u /= 60n;
    if (u > 0n) out = `${u}h${out}`;
  }
  return sign + out;
}

function frac(v: bigint, scale: bigint): string {
  const whole = v / scale;
  const rest = v % scale;
  if (rest === 0n) return String(whole);
  const width = String(scale).length - 1;
  return `${whole}.${String(rest).padStart(width, '0').replace(/0+$/, '')}`;
}
