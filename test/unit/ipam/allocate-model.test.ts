/**
 * Cross-check of allocateAddress against a deliberately naive oracle written here: it
 * materialises every candidate of every entry as a string list (small pools only) and takes the
 * first one not used, exactly as spec/ipam-spec.md §3 words it. The pools are generated from a
 * fixed seed, so the run is deterministic.
 */
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../../infra/local/apiserver/clock.ts';
import { allocateAddress, type IPPoolSpec } from '../../../shared/ipam/allocate.ts';

const prng = seededRandom;

const v4 = (n: number) => `10.0.${n >> 8}.${n & 255}`;
const num = (ip: string) => {
  const [, , c, d] = ip.split('.').map(Number);
  return (c! << 8) + d!;
};

interface Entry {
  start?: string;
  end?: string;
  subnet?: string;
}

/** The spec's words, literally: candidates as strings, in order, per entry. */
function naiveCandidates(entry: Entry): string[] {
  const out: string[] = [];
  const subnet = entry.subnet ? entry.subnet.split('/') : undefined;
  const inSubnet = (n: number) => {
    if (!subnet) return true;
    const size = 2 ** (32 - Number(subnet[1]));
    const base = Math.floor(num(subnet[0]!) / size) * size;
    return n >= base && n < base + size;
  };
  if (entry.start) {
    for (let n = num(entry.start); n < 65536; n++) {
      if (entry.end && n > num(entry.end)) break;
      if (!inSubnet(n)) break;
      out.push(v4(n));
    }
  } else if (subnet) {
    for (let n = num(subnet[0]!) + 1; n < 65536 && inSubnet(n); n++) out.push(v4(n));
  }
  return out;
}

function naiveAllocate(entries: Entry[], used: Set<string>): string | undefined {
  for (const entry of entries) {
    const free = naiveCandidates(entry).find((c) => !used.has(c));
    if (free) return free;
  }
  return undefined;
}

function randomEntry(rand: () => number): Entry {
  const base = Math.floor(rand() * 200) + 1;
  const kind = Math.floor(rand() * 4);
  const prefix = 24 + Math.floor(rand() * 7); // /24 .. /30
  const subnet = `${v4(base)}/${prefix}`;
  if (kind === 0) return { start: v4(base), end: v4(base + Math.floor(rand() * 20)) };
  if (kind === 1) return { subnet };
  if (kind === 2)
    return { start: v4(base), subnet: `${v4(base - (base % 4))}/${prefix}`, end: v4(base + 30) };
  return { start: v4(base), end: v4(base - 1 - Math.floor(rand() * 3)) }; // end < start: empty
}

describe('allocateAddress agrees with a naive model of the spec', () => {
  const rand = prng(20261122);
  const cases = Array.from({ length: 300 }, (_, i) => {
    const entries = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => randomEntry(rand));
    const used = new Set(Array.from({ length: Math.floor(rand() * 60) }, () => v4(Math.floor(rand() * 260))));
    return { i, entries, used };
  });

  it.each(cases)('case $i', ({ entries, used }) => {
    const spec = { namePrefix: 'm', pools: entries, prefix: 24 } as IPPoolSpec;
    const expected = naiveAllocate(entries, used);
    if (expected === undefined) {
      expect(() => allocateAddress(spec, used, { name: 'c' })).toThrow('Exhausted IP Pools');
    } else {
      expect(allocateAddress(spec, used, { name: 'c' }).address).toBe(expected);
    }
  });
});
