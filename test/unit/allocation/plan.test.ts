import { describe, expect, it } from 'vitest';
import { planAddress } from '../../../functions/allocate-index/plan-address.ts';
import { planIndex } from '../../../functions/allocate-index/plan-index.ts';
import { templateMaps } from '../../../functions/allocate-index/template.ts';
import { joinedBefore, oldEntries, STALE_ENTRY_MS } from '../../../shared/allocation/registry.ts';
import type {
  IPAddress,
  IPClaim,
  IPPool,
  Metal3Data,
  Metal3DataClaim,
  Metal3DataTemplate,
} from '../../../shared/api/index.ts';

const template = (name: string, templateReference?: string) =>
  ({
    metadata: { name, namespace: 'ns', uid: `t-${name}` },
    spec: templateReference ? { templateReference } : {},
  }) as Metal3DataTemplate;
const claim = (name: string, extra: Partial<Metal3DataClaim> = {}) =>
  ({
    metadata: { name, namespace: 'ns', uid: `c-${name}` },
    spec: { template: { name: 'tpl' } },
    ...extra,
  }) as Metal3DataClaim;
const data = (
  tpl: string,
  index: number,
  claimName: string,
  opts: { ref?: string; owner?: string; deleting?: boolean } = {},
) =>
  ({
    metadata: {
      name: `${tpl}-${index}`,
      namespace: 'ns',
      ...(opts.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
      ownerReferences: [
        { apiVersion: 'x/v1', kind: 'Metal3DataClaim', name: claimName, uid: opts.owner ?? `c-${claimName}` },
      ],
    },
    spec: {
      index,
      template: { name: tpl },
      claim: { name: claimName },
      ...(opts.ref ? { templateReference: opts.ref } : {}),
    },
  }) as Metal3Data;

describe('planIndex', () => {
  it('takes the lowest free index over the data of all three links', () => {
    const datas = [
      data('tpl', 0, 'a'),
      data('other', 1, 'b', { ref: 'r' }),
      data('old', 2, 'c'),
      data('unrelated', 3, 'd'),
    ];
    const plan = planIndex({
      template: template('tpl', 'r'),
      claim: claim('x'),
      datas,
      claims: [claim('x')],
    });
    expect(plan).toEqual({ kind: 'create', index: 2, rank: 0 }); // ways 1 and 2 (old-2 is not linked)
    const plan2 = planIndex({ template: template('tpl', 'old'), claim: claim('x'), datas, claims: [] });
    expect(plan2).toMatchObject({ kind: 'create', index: 1 });
  });

  it('reuses the Metal3Data already serving the claim (crash between create and status write)', () => {
    const d = data('tpl', 4, 'x');
    expect(planIndex({ template: template('tpl'), claim: claim('x'), datas: [d], claims: [] })).toEqual({
      kind: 'reuse',
      data: d,
    });
  });

  it('does not reuse the Metal3Data of an earlier claim with the same name; its index stays used', () => {
    const d = data('tpl', 0, 'x', { owner: 'old-uid' });
    expect(planIndex({ template: template('tpl'), claim: claim('x'), datas: [d], claims: [] })).toMatchObject(
      { kind: 'create', index: 1 },
    );
  });

  it('waits while the claim’s own Metal3Data is being deleted', () => {
    const d = data('tpl', 0, 'x', { deleting: true });
    expect(planIndex({ template: template('tpl'), claim: claim('x'), datas: [d], claims: [] }).kind).toBe(
      'wait',
    );
  });

  it('ranks among pending claims so concurrent claims pick distinct, dense indexes', () => {
    const claims = ['m-0', 'm-1', 'm-2'].map((n) => claim(n));
    const datas = [data('tpl', 1, 'z')];
    const picks = claims.map((c) => planIndex({ template: template('tpl'), claim: c, datas, claims }));
    expect(picks.map((p) => (p.kind === 'create' ? p.index : -1))).toEqual([0, 2, 3]);
  });

  it('without spreading (spreadByRank false, the benchmark baseline) every claim aims at the lowest free index', () => {
    const claims = ['m-0', 'm-1', 'm-2'].map((n) => claim(n));
    const datas = [data('tpl', 1, 'z')];
    const picks = claims.map((c) =>
      planIndex({ template: template('tpl'), claim: c, datas, claims, spreadByRank: false }),
    );
    expect(picks.map((p) => (p.kind === 'create' ? p.index : -1))).toEqual([0, 0, 0]);
  });

  it('ignores deleting, failed and served claims when ranking, and skips tried indexes', () => {
    const claims = [
      claim('a', { metadata: { name: 'a', namespace: 'ns', deletionTimestamp: 'x' } }),
      claim('b', { status: { errorMessage: 'bad' } }),
      claim('c'),
      claim('d'),
    ];
    const datas = [data('tpl', 0, 'c')];
    expect(
      planIndex({ template: template('tpl'), claim: claim('d'), datas, claims, tried: new Set([1]) }),
    ).toEqual({
      kind: 'create',
      index: 2,
      rank: 0,
    });
  });
});

describe('planIndex with the template status map (narrow reads, ADR 009)', () => {
  const pending = ['a', 'b', 'c', 'd'].map((n) => claim(n));
  it.each<[string, Record<string, string>, Metal3Data[], string, number, number]>([
    ['mapped indexes are used; mapped claims are served, not waiting', { '0': 'a', '1': 'b' }, [], 'd', 3, 1],
    ['a gap in the map is free', { '0': 'a', '2': 'b' }, [], 'c', 1, 0],
    [
      'an unrendered Metal3Data not mapped yet counts as used and serves its claim',
      { '0': 'a' },
      [data('tpl', 1, 'b')],
      'c',
      2,
      0,
    ],
    [
      'map keys that are not indexes are ignored (a map in another format)',
      { a: '0', '0': 'a' },
      [],
      'b',
      1,
      0,
    ],
  ])('%s', (_what, mapped, datas, who, index, rank) => {
    expect(
      planIndex({ template: template('tpl'), claim: claim(who), datas, claims: pending, mapped }),
    ).toEqual({
      kind: 'create',
      index,
      rank,
    });
  });
});

describe('templateMaps', () => {
  it('maps index -> claim and claim -> data name for linked data only', () => {
    const maps = templateMaps(template('tpl'), [data('tpl', 1, 'b'), data('tpl', 0, 'a'), data('x', 5, 'q')]);
    expect(maps).toEqual({ indexes: { '0': 'a', '1': 'b' }, dataNames: { a: 'tpl-0', b: 'tpl-1' } });
  });
});

const pool = (spec: Partial<IPPool['spec']> = {}) =>
  ({
    metadata: { name: 'pool-1', namespace: 'ns', uid: 'p' },
    spec: {
      namePrefix: 'p1',
      pools: [{ start: '10.0.0.10', end: '10.0.0.12' }],
      prefix: 24,
      gateway: '10.0.0.1',
      ...spec,
    },
  }) as IPPool;
const ipClaim = (name: string, annotations?: Record<string, string>) =>
  ({
    metadata: { name, namespace: 'ns', uid: `u-${name}`, ...(annotations ? { annotations } : {}) },
    spec: { pool: { name: 'pool-1' } },
  }) as IPClaim;
const address = (ip: string, claimName: string) =>
  ({
    metadata: {
      name: `p1-${ip}`,
      namespace: 'ns',
      ownerReferences: [{ apiVersion: 'a/v1', kind: 'IPClaim', name: claimName, uid: `u-${claimName}` }],
    },
    spec: { address: ip, prefix: 24, pool: { name: 'pool-1' }, claim: { name: claimName } },
  }) as IPAddress;

describe('planAddress', () => {
  it('takes the lowest free address, with the pool prefix and gateway', () => {
    const plan = planAddress({
      pool: pool(),
      claim: ipClaim('c'),
      addresses: [address('10.0.0.10', 'a')],
      claims: [],
    });
    expect(plan).toEqual({
      kind: 'create',
      allocated: { address: '10.0.0.11', prefix: 24, gateway: '10.0.0.1', dnsServers: [] },
    });
  });

  it('reuses the IPAddress whose spec.claim is this claim', () => {
    const mine = address('10.0.0.12', 'c');
    expect(planAddress({ pool: pool(), claim: ipClaim('c'), addresses: [mine], claims: [] })).toEqual({
      kind: 'reuse',
      address: mine,
    });
  });

  it("never hands out another claim's pre-allocated address; honours the requested one", () => {
    const p = pool({ preAllocations: { other: '10.0.0.10' } });
    expect(planAddress({ pool: p, claim: ipClaim('c'), addresses: [], claims: [] })).toMatchObject({
      allocated: { address: '10.0.0.11' },
    });
    const req = ipClaim('c', { ipAddress: '10.0.0.12' });
    expect(planAddress({ pool: p, claim: req, addresses: [], claims: [] })).toMatchObject({
      allocated: { address: '10.0.0.12' },
    });
  });

  it('compares addresses canonically (IPv6)', () => {
    const p = pool({ pools: [{ start: '2001:db8::1', end: '2001:db8::3' }], prefix: 64, gateway: undefined });
    const used = address('2001:0db8:0000::0001', 'a');
    expect(planAddress({ pool: p, claim: ipClaim('c'), addresses: [used], claims: [] })).toMatchObject({
      allocated: { address: '2001:db8::2' },
    });
  });

  it('throws the upstream message when the pool is exhausted', () => {
    const addresses = ['10.0.0.10', '10.0.0.11', '10.0.0.12'].map((ip, i) => address(ip, `x${i}`));
    expect(() => planAddress({ pool: pool(), claim: ipClaim('c'), addresses, claims: [] })).toThrow(
      'Exhausted IP Pools',
    );
  });

  describe('narrow reads: the given addresses from the pool status (mapped)', () => {
    const cases: {
      name: string;
      mapped: Record<string, string>;
      claims?: string[];
      claim?: string;
      want: string;
    }[] = [
      { name: 'mapped addresses are taken', mapped: { a: '10.0.0.10' }, want: '10.0.0.11' },
      {
        name: "the claim's own entry (no address backs it) is not taken",
        mapped: { c: '10.0.0.10', a: '10.0.0.11' },
        want: '10.0.0.10',
      },
      {
        // `x` is mapped (served): it does not rank ahead of `c` although it lists as waiting.
        name: 'a mapped claim still listed as waiting does not rank',
        mapped: { x: '10.0.0.10' },
        claims: ['x', 'c'],
        want: '10.0.0.11',
      },
      {
        name: 'an unmapped waiting claim ahead keeps its rank',
        mapped: { a: '10.0.0.10' },
        claims: ['b', 'c'],
        want: '10.0.0.12',
      },
      {
        name: 'an entry that is no address takes nothing',
        mapped: { a: '10.0.0.10', z: 'not-an-ip' },
        want: '10.0.0.11',
      },
    ];
    it.each(cases)('$name', ({ mapped, claims = [], claim = 'c', want }) => {
      const plan = planAddress({
        pool: pool(),
        claim: ipClaim(claim),
        addresses: [],
        claims: claims.map((n) => ipClaim(n)),
        mapped,
      });
      expect(plan).toMatchObject({ kind: 'create', allocated: { address: want } });
    });

    it('every address mapped: exhausted', () => {
      const mapped = { a: '10.0.0.10', b: '10.0.0.11', d: '10.0.0.12' };
      expect(() =>
        planAddress({ pool: pool(), claim: ipClaim('c'), addresses: [], claims: [], mapped }),
      ).toThrow('Exhausted IP Pools');
    });
  });

  it('spreads pending claims over distinct addresses', () => {
    const claims = ['a', 'b', 'c'].map((n) => ipClaim(n));
    const picks = claims.map((c) => planAddress({ pool: pool(), claim: c, addresses: [], claims }));
    expect(picks.map((p) => (p.kind === 'create' ? p.allocated.address : ''))).toEqual([
      '10.0.0.10',
      '10.0.0.11',
      '10.0.0.12',
    ]);
  });
});

describe('planIndex in a burst (ADR 012)', () => {
  const base = { template: template('tpl'), claim: claim('z'), datas: [], claims: [] };
  it.each<{ ahead: string[]; mapped: Record<string, string>; index: number; rank: number; why: string }>([
    { ahead: [], mapped: {}, index: 0, rank: 0, why: 'first to join: the lowest free index' },
    { ahead: ['a', 'b'], mapped: {}, index: 2, rank: 2, why: 'two unserved ahead: the third free index' },
    {
      ahead: ['a', 'b'],
      mapped: { '0': 'a' },
      index: 2,
      rank: 1,
      why: 'one ahead already served: index 0 is taken',
    },
    {
      ahead: ['a', 'b', 'b'],
      mapped: { '1': 'x' },
      index: 3,
      rank: 2,
      why: 'names counted once; taken indexes skipped',
    },
  ])('$why', ({ ahead, mapped, index, rank }) => {
    expect(planIndex({ ...base, ahead, mapped })).toEqual({ kind: 'create', index, rank });
  });

  it('ignores the waiting claims it was given: the registry ranks', () => {
    const plan = planIndex({ ...base, claims: [claim('a'), claim('b'), claim('c')], ahead: [] });
    expect(plan).toEqual({ kind: 'create', index: 0, rank: 0 });
  });

  it('a Metal3Data of the claim is still reused', () => {
    const mine = data('tpl', 7, 'z');
    expect(planIndex({ ...base, datas: [mine], ahead: ['a'] })).toEqual({ kind: 'reuse', data: mine });
  });
});

describe('joinedBefore', () => {
  const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
  it.each<{ registry: Record<string, string>; name: string; before: string[] }>([
    { registry: { a: at(1), b: at(2), z: at(3) }, name: 'z', before: ['a', 'b'] },
    { registry: { a: at(4), z: at(3) }, name: 'z', before: [] },
    { registry: { a: at(3), y: at(3), zz: at(3) }, name: 'y', before: ['a'] },
    { registry: { a: at(1) }, name: 'absent', before: ['a'] },
  ])('$name in $registry', ({ registry, name, before }) => {
    expect(joinedBefore(registry, name).sort()).toEqual(before);
  });
});

describe('planAddress in a burst (ADR 012)', () => {
  const plan = (ahead: string[], mapped: Record<string, string> = {}, claim = ipClaim('z')) =>
    planAddress({ pool: pool(), claim, addresses: [], claims: [ipClaim('a'), ipClaim('b')], ahead, mapped });
  it.each<{ ahead: string[]; mapped: Record<string, string>; address: string; why: string }>([
    { ahead: [], mapped: {}, address: '10.0.0.10', why: 'first to join: the lowest free address' },
    { ahead: ['a', 'b'], mapped: {}, address: '10.0.0.12', why: 'two unserved ahead: the third free one' },
    { ahead: ['a', 'b'], mapped: { a: '10.0.0.10' }, address: '10.0.0.12', why: 'one ahead served' },
  ])('$why', ({ ahead, mapped, address: ip }) => {
    expect(plan(ahead, mapped)).toMatchObject({ kind: 'create', allocated: { address: ip } });
  });

  it('more ahead than free addresses: probes the last free one (the create arbitrates)', () => {
    expect(plan(['a', 'b', 'c', 'd'])).toMatchObject({ allocated: { address: '10.0.0.12' } });
  });

  it('a claim with a requested address is not ranked', () => {
    const req = ipClaim('z', { ipAddress: '10.0.0.11' });
    expect(plan(['a', 'b'], {}, req)).toMatchObject({ allocated: { address: '10.0.0.11' } });
  });
});

describe('oldEntries', () => {
  const now = new Date(Date.UTC(2026, 0, 1, 12));
  const ago = (ms: number) => new Date(now.getTime() - ms).toISOString();
  it('the entries older than STALE_ENTRY_MS, and those whose time does not parse', () => {
    const owner = {
      metadata: { name: 't' },
      status: {
        allocating: {
          fresh: ago(1000),
          edge: ago(STALE_ENTRY_MS),
          old: ago(STALE_ENTRY_MS + 1),
          garbage: 'yesterday',
          empty: '',
        },
      },
    };
    expect(oldEntries(owner, now).sort()).toEqual(['empty', 'garbage', 'old']);
    expect(oldEntries({ metadata: { name: 't' } }, now)).toEqual([]);
  });
});
