/** sprig v3.2.3 date functions (date.go) on Go's time.Time (gotime.ts). */
import { goFunc } from '../builtins.ts';
import {
  durationString,
  format,
  type GoTime,
  goTime,
  loadLocation,
  now,
  parseDuration,
  TIME,
  unix,
} from '../gotime.ts';
import { str } from '../reflect.ts';
import { type GoFunc, IFACE, INT64, STRING } from '../types.ts';
import { goString, type RV } from '../value.ts';

const S = STRING;

/** The time a date argument stands for: time.Time, int, int64 or int32 seconds; anything else is now. */
function timeOf(v: RV, int32Too = true): GoTime {
  if (v !== null) {
    if (v.type === TIME) return v.v as GoTime;
    if (v.type.kind === 'ptr' && v.type.elem === TIME && v.v !== null) return (v.v as { v: GoTime }).v;
    const k = v.type.kind;
    if (k === 'int' || k === 'int64' || (int32Too && k === 'int32')) return unix(v.v as bigint);
  }
  return now();
}

function dateInZone(layout: string, date: RV, zone: string): string {
  return format({ ...timeOf(date), zone: loadLocation(zone) }, layout);
}

function since(t: GoTime): bigint {
  return now().ns - t.ns;
}

/** Duration.Round(time.Second). */
function roundSecond(d: bigint): bigint {
  const s = 1_000_000_000n;
  const r = ((d % s) + s) % s;
  const down = d - r;
  return r + r < s ? down : down + s;
}

function durationRound(v: RV): string {
  let d = 0n;
  if (v !== null) {
    if (v.type.kind === 'string') {
      try {
        d = parseDuration(v.v as string);
      } catch {
        d = 0n;
      }
    } else if (v.type.kind === 'int64') d = v.v as bigint;
    else if (v.type === TIME) d = since(v.v as GoTime);
  }
  const neg = d < 0n;
  const u = neg ? -d : d;
  const h = 3_600_000_000_000n;
  const units: [bigint, string][] = [
    [h * 24n * 365n, 'y'],
    [h * 24n * 30n, 'mo'],
    [h * 24n, 'd'],
    [h, 'h'],
    [60_000_000_000n, 'm'],
    [1_000_000_000n, 's'],
  ];
  for (const [size, name] of units) if (u > size) return `${u / size}${name}`;
  return '0s';
}

function dateModify(layout: string, t: GoTime, must: boolean): RV {
  let d: bigint;
  try {
    d = parseDuration(layout);
  } catch (e) {
    if (must) throw e;
    return goTime(t);
  }
  return goTime({ ns: t.ns + d, zone: t.zone });
}

const timeArg = (v: RV) => (v as { v: GoTime }).v;

export const DATE_FUNCS: Record<string, GoFunc> = {
  now: goFunc([], TIME, () => goTime(now())),
  date: goFunc([S, IFACE], S, ([f, d]) => goString(dateInZone(str(f), d, 'Local'))),
  dateInZone: goFunc([S, IFACE, S], S, ([f, d, z]) => goString(dateInZone(str(f), d, str(z)))),
  date_in_zone: goFunc([S, IFACE, S], S, ([f, d, z]) => goString(dateInZone(str(f), d, str(z)))),
  htmlDate: goFunc([IFACE], S, ([d]) => goString(dateInZone('2006-01-02', d, 'Local'))),
  htmlDateInZone: goFunc([IFACE, S], S, ([d, z]) => goString(dateInZone('2006-01-02', d, str(z)))),
  dateModify: goFunc([S, TIME], TIME, ([f, t]) => dateModify(str(f), timeArg(t), false)),
  date_modify: goFunc([S, TIME], TIME, ([f, t]) => dateModify(str(f), timeArg(t), false)),
  mustDateModify: goFunc([S, TIME], TIME, ([f, t]) => dateModify(str(f), timeArg(t), true), {
    returnsError: true,
  }),
  must_date_modify: goFunc([S, TIME], TIME, ([f, t]) => dateModify(str(f), timeArg(t), true), {
    returnsError: true,
  }),
  ago: goFunc([IFACE], S, ([d]) => goString(durationString(roundSecond(since(timeOf(d, false)))))),
  duration: goFunc([IFACE], S, ([v]) => {
    let n = 0n;
    if (v !== null && v.type.kind === 'string')
      n = /^[+-]?\d+$/.test(v.v) ? BigInt.asIntN(64, BigInt(v.v)) : 0n;
    else if (v !== null && v.type === INT64) n = v.v as bigint;
    return goString(durationString(BigInt.asIntN(64, n * 1_000_000_000n)));
  }),
  durationRound: goFunc([IFACE], S, ([v]) => goString(durationRound(v))),
  unixEpoch: goFunc([TIME], S, ([t]) => {
    const ns = timeArg(t).ns;
    const sec = ns >= 0n ? ns / 1_000_000_000n : -((-ns + 999_999_999n) / 1_000_000_000n);
    return goString(String(sec));
  }),
};
