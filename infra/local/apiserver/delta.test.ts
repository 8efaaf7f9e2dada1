/** Deltas between versions of a stored object (delta.ts): what the history window keeps of old versions. */
import { describe, expect, it } from 'vitest';
import { applyDeltas, diff } from './delta.ts';

const frozen = <T>(v: T): T => {
  if (v && typeof v === 'object') {
    for (const x of Object.values(v)) frozen(x);
    Object.freeze(v);
  }
  return v;
};

describe('diff and applyDeltas', () => {
  it('rebuilds the target from the base: keys added, changed and removed, nested', () => {
    const base = frozen({ a: 1, b: { c: 'x', d: [1, 2] }, e: { f: true }, gone: 'y' });
    const target = frozen({ a: 2, b: { c: 'x', d: [1, 2, 3] }, e: base.e, added: { z: null } });
    const d = diff(base, target)!;
    expect(applyDeltas(base, [d])).toEqual({
      a: 2,
      b: { c: 'x', d: [1, 2, 3] },
      e: { f: true },
      added: { z: null },
    });
  });

  it('shares the subtrees a delta does not touch, and freezes what it made', () => {
    const big: Record<string, { i: number }> = frozen(
      Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`m${i}`, { i }])),
    );
    const base = frozen({ spec: { x: 1 }, status: { map: big } });
    const map: Record<string, { i: number }> = frozen({ ...big, m100: { i: 100 } });
    const target = frozen({ spec: base.spec, status: { map } });
    const out = applyDeltas(base, [diff(base, target)!]) as typeof target;
    expect(out.spec).toBe(base.spec);
    expect(out.status.map.m5).toBe(big.m5);
    expect(out.status.map.m100).toEqual({ i: 100 });
    expect(Object.isFrozen(out) && Object.isFrozen(out.status) && Object.isFrozen(out.status.map)).toBe(true);
    // A map that grew by one entry is described by that entry, not by the map.
    const d = diff(base, target) as any;
    expect(d.o.get('status').o.get('map').o.size).toBe(1);
  });

  it('keeps reordered array items by identity and diffs the one that changed', () => {
    const one = { manager: 'one', fieldsV1: { 'f:a': {} } };
    const two = { manager: 'two', fieldsV1: { 'f:b': {}, 'f:c': {} } };
    const three = { manager: 'three', fieldsV1: {} };
    const base = frozen([one, two, three]);
    const twoNext = { manager: 'two', fieldsV1: { ...two.fieldsV1, 'f:d': {} } };
    const target = frozen([one, three, twoNext]);
    const d = diff(base, target) as any;
    expect(d.a.slice(0, 2)).toEqual([0, 2]);
    expect(d.a[2].i).toBe(1);
    const out = applyDeltas(base, [d]) as any[];
    expect(out).toEqual([
      { manager: 'one', fieldsV1: { 'f:a': {} } },
      { manager: 'three', fieldsV1: {} },
      { manager: 'two', fieldsV1: { 'f:b': {}, 'f:c': {}, 'f:d': {} } },
    ]);
    expect(out[2].fieldsV1['f:b']).toBe(two.fieldsV1['f:b']);
  });

  it('applies a chain of deltas in order (each against the value the one before made)', () => {
    const versions: { n: number; list: string[]; m: Record<string, number> }[] = [
      frozen({ n: 0, list: ['a'], m: { k0: 0 } }),
    ];
    for (let i = 1; i <= 20; i++) {
      const p = versions[i - 1]!;
      const m: Record<string, number> = { ...p.m, [`k${i}`]: i };
      if (i % 3 === 0) delete m[`k${i - 2}`];
      versions.push(frozen({ n: i, list: i % 2 ? [...p.list, `x${i}`] : p.list.slice(1), m }));
    }
    // Newest back to the oldest, as the history rebuilds a superseded version.
    const back = [];
    for (let i = 20; i > 0; i--) back.push(diff(versions[i], versions[i - 1])!);
    for (let k = 0; k <= 20; k++)
      expect(applyDeltas(versions[20], back.slice(0, 20 - k))).toEqual(versions[k]);
  });

  it('treats a "__proto__" key as data', () => {
    const base = frozen(JSON.parse('{"m":{"a":1}}'));
    const target = frozen(JSON.parse('{"m":{"a":1,"__proto__":{"x":1}}}'));
    const out = applyDeltas(base, [diff(base, target)!]) as any;
    expect(Object.getPrototypeOf(out.m)).toBe(Object.prototype);
    expect(JSON.stringify(out)).toBe(JSON.stringify(target));
  });

  it('gives nothing for the same value', () => {
    const v = frozen({ a: [1, { b: 2 }] });
    expect(diff(v, v)).toBeUndefined();
    expect(diff(v, { a: v.a })).toBeUndefined();
  });
});
