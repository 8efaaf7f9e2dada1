/**
 * Time, uids and generated names: the server's only sources of nondeterminism, behind one
 * interface so tests can make them deterministic.
 */
import { randomUUID } from 'node:crypto';

export interface Clock {
  /** Milliseconds since the epoch (history compaction, token expiry). */
  now(): number;
  /** RFC 3339 UTC to the second, as creationTimestamp is written. */
  timestamp(): string;
  uid(): string;
  /** A float in [0, 1). */
  random(): number;
}

let lastSecond = Number.NaN;
let lastText = '';
/** Formatted once per second: every write stamps managedFields with it. */
function rfc3339(d: Date): string {
  const sec = Math.floor(d.getTime() / 1000);
  if (sec !== lastSecond) {
    lastSecond = sec;
    lastText = d.toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
  return lastText;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  timestamp: () => rfc3339(new Date()),
  uid: () => randomUUID(),
  random: () => Math.random(),
};

/** mulberry32: a tiny seeded PRNG, for deterministic fault injection and names. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A clock for tests: time starts at `start` and advances only when told; uids count up. */
export function deterministicClock(
  seed = 1,
  start = Date.parse('2026-01-01T00:00:00Z'),
): Clock & { advance(ms: number): void } {
  let now = start;
  let n = 0;
  const random = seededRandom(seed);
  return {
    now: () => now,
    timestamp: () => rfc3339(new Date(now)),
    uid: () => {
      n++;
      const hex = n.toString(16).padStart(12, '0');
      return `00000000-0000-4000-8000-${hex}`;
    },
    random,
    advance(ms: number) {
      now += ms;
    },
  };
}

/** The system clock, shifted forward when told: time-dependent behaviour (compaction) without sleeping. */
export function advanceableClock(): Clock & { advance(ms: number): void } {
  let offset = 0;
  return {
    now: () => Date.now() + offset,
    timestamp: () => rfc3339(new Date(Date.now() + offset)),
    uid: () => randomUUID(),
    random: () => Math.random(),
    advance(ms: number) {
      offset += ms;
    },
  };
}

const NAME_CHARS = 'bcdfghjklmnpqrstvwxz2456789';

export function generateNameSuffix(clock: Clock): string {
  let s = '';
  for (let i = 0; i < 5; i++) s += NAME_CHARS[Math.floor(clock.random() * NAME_CHARS.length)];
  return s;
}
