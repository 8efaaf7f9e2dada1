/**
 * Emitted fieldsV1 (fieldpath.ts FieldSet.toJSON): the `{}` leaves are one shared object, and equal
 * subtrees of different sets (the same manager's fields in objects of one kind) one frozen instance.
 */
import { describe, expect, it } from 'vitest';
import { FieldSet, fieldPE } from './fieldpath.ts';

const f = fieldPE;

/** A set like a Metal3Machine's status manager's: 40 leaves under a few parents. */
function ownerSet(i: number): FieldSet {
  const s = new FieldSet();
  for (let j = 0; j < 20; j++) s.insert([f('status'), f(`field${j}`)]);
  for (let j = 0; j < 20; j++) s.insert([f('metadata'), f('labels'), f(`label${j}-${i}`)]);
  return s;
}

describe('emitted fieldsV1', () => {
  it('share one leaf object across sets', () => {
    const a = ownerSet(1).toJSON() as any;
    const b = ownerSet(2).toJSON() as any;
    expect(a['f:status']['f:field0']).toEqual({});
    expect(a['f:status']['f:field0']).toBe(b['f:status']['f:field7']);
    expect(a['f:metadata']['f:labels']['f:label3-1']).toBe(b['f:status']['f:field0']);
  });

  it('share equal subtrees across sets, and are frozen', () => {
    const a = ownerSet(1).toJSON() as any;
    const b = ownerSet(2).toJSON() as any;
    // The status part is the same in both sets: one object; the labels name each set's own keys.
    expect(a['f:status']).toBe(b['f:status']);
    expect(a['f:metadata']).not.toBe(b['f:metadata']);
    expect(ownerSet(1).toJSON()).toBe(a);
    expect(Object.isFrozen(a['f:metadata']['f:labels'])).toBe(true);
  });

  it('keep a tree too large to share (a map with an entry per machine) out of the table', () => {
    const big = (tag: string) => {
      const s = new FieldSet();
      for (let j = 0; j < 100; j++) s.insert([f('status'), f('indexes'), f(`m-${j}`)]);
      s.insert([f('status'), f('lastUpdated'), f(tag)]);
      return s.toJSON() as any;
    };
    const a = big('x');
    const b = big('x');
    expect(a['f:status']['f:indexes']).toEqual(b['f:status']['f:indexes']);
    // Equal, but neither they nor their parents are looked up: a table holding them would keep
    // every old version of such a map alive.
    expect(a['f:status']['f:indexes']).not.toBe(b['f:status']['f:indexes']);
    expect(a['f:status']).not.toBe(b['f:status']);
    expect(a['f:status']['f:lastUpdated']).toBe(b['f:status']['f:lastUpdated']);
  });
});
