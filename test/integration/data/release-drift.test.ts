/**
 * ADR 035's fallback: a release removes its claim's status-map entries with a JSON patch whose
 * `test`s check them; when an entry is not what the release held (drift: someone rewrote or
 * removed it), the patch is refused whole (422, nothing written) and the release goes the general
 * way, a read-modify-write conditioned on resourceVersion, which removes what still names the
 * claim and nothing else. Each case releases its own machine.
 */
import { describe, expect, it } from 'vitest';
import { R } from '../../../shared/api/resources.ts';
import { templateMaps as mapsOf, NS, release, type TemplateMaps } from '../../helpers/data.ts';
import { useRenderedMachines } from './use-data-cluster.ts';

const MACHINES = ['m-a', 'm-b', 'm-c', 'm-d'];

const tc = useRenderedMachines(MACHINES);

const templateMaps = () => mapsOf(tc.client);
const poolIndexes = async (): Promise<Record<string, string>> => {
  const p = await tc.client.get(R.IPPool, NS, 'pool-1');
  return { ...(p?.status as { indexes?: Record<string, string> } | undefined)?.indexes };
};
const indexOf = (maps: TemplateMaps, claim: string) =>
  Object.keys(maps.indexes).find((i) => maps.indexes[i] === claim)!;
const statusWrites = (resource: string) =>
  tc.server.log.entries
    .filter((e) => e.resource === `${resource}/status` && (e.verb === 'patch' || e.verb === 'update'))
    .map((e) => `${e.verb} ${e.status}`);

describe('release with drifted status maps (ADR 035 fallback)', () => {
  it('a template index entry rewritten to another claim: the tested patch is refused, the release removes only what names its claim', async () => {
    const before = await templateMaps();
    const idx = indexOf(before, 'm-a');
    await tc.client.patch(
      R.Metal3DataTemplate,
      NS,
      'nodepool-1',
      { status: { indexes: { [idx]: 'someone-else' } } },
      'merge',
      { status: true },
    );
    await tc.client.delete(R.Metal3DataClaim, NS, 'm-a');
    tc.server.log.reset();
    expect(await release(tc.ctx, R.Metal3DataClaim, 'm-a')).toMatchObject({ kind: 'done' });
    // The patch whose test failed wrote nothing; the general way read the template and wrote it once.
    expect(statusWrites('metal3datatemplates')).toEqual(['patch 422', 'update 200']);
    expect(tc.server.log.count('get', 'metal3datatemplates')).toBe(1);
    // The pool's entry was as held: its patch went through, no read.
    expect(statusWrites('ippools')).toContain('patch 200');
    const after = await templateMaps();
    // m-a's Metal3Data name is gone; the rewritten index names someone else and is left to the
    // template's own rebuild; every other claim's entries are untouched.
    const { 'm-a': _gone, ...othersNames } = before.dataNames;
    expect(after.dataNames).toEqual(othersNames);
    expect(after.indexes).toEqual({ ...before.indexes, [idx]: 'someone-else' });
  });

  it('a pool entry already removed: that pool’s tested patch is refused, the general way finds nothing more to remove there', async () => {
    const claim = `${(await templateMaps()).dataNames['m-b']}-pool-1`;
    const before = await poolIndexes();
    expect(before[claim]).toBeDefined();
    await tc.client.patch(R.IPPool, NS, 'pool-1', { status: { indexes: { [claim]: null } } }, 'merge', {
      status: true,
    });
    await tc.client.delete(R.Metal3DataClaim, NS, 'm-b');
    tc.server.log.reset();
    expect(await release(tc.ctx, R.Metal3DataClaim, 'm-b')).toMatchObject({ kind: 'done' });
    tc.server.settle();
    // pool-1: refused whole (nothing written), then read, and nothing of the claim left to write;
    // the other pool's entry was as held (one patch, no read).
    const poolWrites = tc.server.log.entries.filter((e) => e.resource === 'ippools/status');
    expect(poolWrites.map((e) => `${e.verb} ${e.name} ${e.status}`).sort()).toEqual([
      'patch pool-1 422',
      'patch pool6-1 200',
    ]);
    expect(
      tc.server.log.entries.filter((e) => e.verb === 'get' && e.resource === 'ippools').map((e) => e.name),
    ).toEqual(['pool-1']);
    const { [claim]: _gone, ...others } = before;
    expect(await poolIndexes()).toEqual(others);
    expect(await tc.client.get(R.IPClaim, NS, claim)).toBeUndefined();
  });

  it('entries as held: one patch each, no read, and the claim is gone', async () => {
    const before = await templateMaps();
    await tc.client.delete(R.Metal3DataClaim, NS, 'm-d');
    tc.server.log.reset();
    expect(await release(tc.ctx, R.Metal3DataClaim, 'm-d')).toMatchObject({ kind: 'done' });
    expect(statusWrites('metal3datatemplates')).toEqual(['patch 200']);
    expect(tc.server.log.count('get', 'metal3datatemplates')).toBe(0);
    const idx = indexOf(before, 'm-d');
    const { [idx]: _i, ...indexes } = before.indexes;
    const { 'm-d': _d, ...dataNames } = before.dataNames;
    expect(await templateMaps()).toEqual({ indexes, dataNames });
  });
});
