/**
 * ADR 038: the tested removals of one map object's entries (ADR 035) are coalesced: while a patch
 * of the object is in flight, the removals asked for meanwhile go together in the next one; a
 * combined patch refused (one entry not as held) writes nothing and each removal is tried alone.
 * Calls made in one turn are deterministic: the first starts a patch alone, the rest join the next.
 */
import { describe, expect, it } from 'vitest';
import { V } from '../../../shared/allocation/views.ts';
import { R } from '../../../shared/api/resources.ts';
import { removeHeldEntries } from '../../../shared/release/held-entries.ts';
import {
  converge,
  createMachine,
  templateMaps as mapsOf,
  NS,
  release,
  type TemplateMaps,
} from '../../helpers/data.ts';
import { useRenderedMachines } from './use-data-cluster.ts';

const MACHINES = ['m-a', 'm-b', 'm-c', 'm-d', 'm-e'];

const tc = useRenderedMachines(MACHINES);

const templateMaps = () => mapsOf(tc.client);
/** The entries a claim's release holds in the template: its index and its Metal3Data's name. */
const heldOf = (maps: TemplateMaps, claim: string) => [
  { path: ['indexes', Object.keys(maps.indexes).find((i) => maps.indexes[i] === claim)!], value: claim },
  { path: ['dataNames', claim], value: maps.dataNames[claim]! },
];
const templatePatches = () =>
  tc.server.log.entries
    .filter((e) => e.verb === 'patch' && e.resource === 'metal3datatemplates/status')
    .map((e) => e.status);
const remove = (held: ReturnType<typeof heldOf>) =>
  removeHeldEntries(tc.client, V.Metal3DataTemplate, NS, 'nodepool-1', held);

describe('coalesced removals of held entries (ADR 038)', () => {
  it('removals asked for while a patch is in flight go together in the next one', async () => {
    const before = await templateMaps();
    tc.server.log.reset();
    const results = await Promise.all(['m-a', 'm-b', 'm-c'].map((c) => remove(heldOf(before, c))));
    expect(results).toEqual([true, true, true]);
    expect(templatePatches()).toEqual([200, 200]);
    const after = await templateMaps();
    expect(Object.values(after.indexes).sort()).toEqual(['m-d', 'm-e']);
    expect(Object.keys(after.dataNames).sort()).toEqual(['m-d', 'm-e']);
  });

  it('a combined patch with one entry not as held writes nothing; each is then tried alone', async () => {
    const maps = await templateMaps();
    const held = {
      'm-d': heldOf(maps, 'm-d'),
      'm-e': heldOf(maps, 'm-e'),
    };
    const stale = [
      { path: ['indexes', '97'], value: 'm-x' },
      { path: ['dataNames', 'm-x'], value: 'nodepool-1-97' },
    ];
    tc.server.log.reset();
    const results = await Promise.all([remove(held['m-d']), remove(stale), remove(held['m-e'])]);
    expect(results).toEqual([true, false, true]);
    // m-d alone; then m-x and m-e together (refused: nothing written); then each alone.
    expect(templatePatches()).toEqual([200, 422, 422, 200]);
    expect(await templateMaps()).toEqual({ indexes: {}, dataNames: {} });
  });

  it('nothing to expect, or an object that is gone: false, nothing written', async () => {
    tc.server.log.reset();
    expect(await remove([])).toBe(false);
    expect(
      await removeHeldEntries(tc.client, V.Metal3DataTemplate, NS, 'no-such-template', [
        { path: ['indexes', '0'], value: 'm-a' },
      ]),
    ).toBe(false);
    expect(tc.server.log.entries.filter((e) => e.verb === 'patch').map((e) => e.status)).toEqual([404]);
  });
});

describe('concurrent releases (the scale-down)', () => {
  it('releasing several claims at once removes every entry of theirs and nothing else', async () => {
    for (const m of ['m-f', 'm-g', 'm-h', 'm-i']) await createMachine(tc.client, m, 'nodepool-1');
    await converge(tc.ctx);
    for (const m of ['m-f', 'm-g', 'm-h']) await tc.client.delete(R.Metal3DataClaim, NS, m);
    const done = await Promise.all(['m-f', 'm-g', 'm-h'].map((m) => release(tc.ctx, R.Metal3DataClaim, m)));
    expect(done.map((r) => r.kind)).toEqual(['done', 'done', 'done']);
    // The template's own pass (converge) rebuilt the entries the cases above removed by hand from
    // the Metal3Data that are still there; of these four, only m-i's are left.
    const maps = await templateMaps();
    expect(Object.values(maps.indexes)).toContain('m-i');
    expect(Object.keys(maps.dataNames)).toContain('m-i');
    for (const m of ['m-f', 'm-g', 'm-h']) {
      expect(Object.values(maps.indexes)).not.toContain(m);
      expect(Object.keys(maps.dataNames)).not.toContain(m);
    }
  });
});
