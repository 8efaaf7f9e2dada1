/** The cache of parsed managedFields sets (fieldpath.ts): bounded by what the sets hold, not by how many. */
import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { FieldSet, fieldPE, LARGEST_PARSED_SET, MAX_PARSED_ELEMENTS } from './fieldpath.ts';

/** fieldsV1 of a status map with an entry per machine, as a data template's manager owns it. */
const perMachine = (machines: number, tag: number) =>
  Object.freeze({
    'f:status': {
      'f:indexes': Object.fromEntries(Array.from({ length: machines }, (_, i) => [`f:m${tag}-${i}`, {}])),
    },
  });

describe('parsed managedFields sets', () => {
  it('are parsed once while in use', () => {
    const v = perMachine(10, 0);
    expect(FieldSet.fromJSON(v)).toBe(FieldSet.fromJSON(v));
  });

  it('of large objects are not all kept: the cache holds about MAX_PARSED_ELEMENTS path elements', async () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    // 50 versions of a 4,000-entry map: 200,000 elements, twice the bound.
    const sets: WeakRef<FieldSet>[] = [];
    for (let tag = 0; tag < 50; tag++) sets.push(new WeakRef(FieldSet.fromJSON(perMachine(4000, tag))));
    gc();
    await new Promise((r) => setTimeout(r, 0));
    gc();
    const kept = sets.filter((w) => w.deref() !== undefined).length;
    expect(kept * 4000).toBeLessThanOrEqual(MAX_PARSED_ELEMENTS);
    // The most recent are the ones kept.
    expect(sets.at(-1)!.deref()).toBeDefined();
  });

  it('of a map larger than LARGEST_PARSED_SET are not kept: parsed again, they die young', async () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const small = perMachine(LARGEST_PARSED_SET - 10, 1);
    const large = perMachine(LARGEST_PARSED_SET, 2);
    const kept = new WeakRef(FieldSet.fromJSON(small));
    const notKept = new WeakRef(FieldSet.fromJSON(large));
    await new Promise((r) => setTimeout(r, 0));
    gc();
    expect(kept.deref()).toBeDefined();
    expect(notKept.deref()).toBeUndefined();
    expect(FieldSet.fromJSON(large).has([fieldPE('status'), fieldPE('indexes'), fieldPE('m2-0')])).toBe(true);
  });
});
