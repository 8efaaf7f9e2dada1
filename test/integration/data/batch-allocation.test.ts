/**
 * A pass serialized by its template (the queued runtimes) serves a page of the template's other
 * waiting claims too (ADR 033): one template status write for all, before the claims' statuses;
 * only claims with the claim finalizer and outside the burst registry; a claim deleted mid-batch
 * leaks nothing; a crash part-way leaves what the claims' own passes finish; and a served claim's
 * own pass reads its Metal3Data, not the template.
 */
import { describe, expect, it } from 'vitest';
import { BATCH_CLAIMS } from '../../../functions/allocate-index/batch.ts';
import { R, type Resource } from '../../../shared/api/resources.ts';
import { FINALIZER, REQUESTED_IP_ANNOTATION } from '../../../shared/api/wellknown.ts';
import { KubeClient, type PatchType } from '../../../shared/kube/client.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import type { ReconcileContext } from '../../../shared/reconcile/context.ts';
import { testClient } from '../../helpers/cluster.ts';
import { addressOf, allocate, CLUSTER, makeCtx, NS, pool, release } from '../../helpers/data.ts';
import { runWorkers } from '../../helpers/workers.ts';
import { useDataCluster } from './use-data-cluster.ts';

type Status = { renderedData?: { name?: string }; errorMessage?: string };
type TemplateStatus = { indexes?: Record<string, string>; dataNames?: Record<string, string> };

const tc = useDataCluster({ timeout: 30_000 });

const claimName = (t: string, i: number) => `${t}-c${String(i).padStart(2, '0')}`;
const inGroup = (client: KubeClient, template: string): ReconcileContext => ({
  ...makeCtx(client),
  serializedBy: { kind: 'Metal3DataTemplate', namespace: NS, name: template },
});

/** A template and `n` claims of it; with the claim finalizer unless `bare` says otherwise. */
async function seed(t: string, n: number, bare: (i: number) => boolean = () => false): Promise<string[]> {
  await tc.client.create(R.Metal3DataTemplate, { metadata: { name: t, namespace: NS }, spec: {} });
  const names = Array.from({ length: n }, (_, i) => claimName(t, i));
  await runWorkers(names, 8, (name) =>
    tc.client.create(R.Metal3DataClaim, {
      metadata: {
        name,
        namespace: NS,
        labels: { 'cluster.x-k8s.io/cluster-name': CLUSTER },
        ...(bare(names.indexOf(name)) ? {} : { finalizers: [FINALIZER.dataClaim] }),
      },
      spec: { template: { name: t } },
    }),
  );
  return names;
}

const datasOf = async (t: string) =>
  (await tc.client.list(R.Metal3Data, NS)).items.filter(
    (d) => (d.spec as { template: { name: string } }).template.name === t,
  );
/** claim name -> indexes of the Metal3Data naming it. */
async function indexesByClaim(t: string): Promise<Map<string, number[]>> {
  const out = new Map<string, number[]>();
  for (const d of await datasOf(t)) {
    const spec = d.spec as { index: number; claim: { name: string } };
    out.set(spec.claim.name, [...(out.get(spec.claim.name) ?? []), spec.index]);
  }
  return out;
}
const statusOf = async (name: string) =>
  ((await tc.client.get(R.Metal3DataClaim, NS, name))?.status ?? {}) as Status;
const templateStatus = async (t: string) =>
  ((await tc.client.get(R.Metal3DataTemplate, NS, t))!.status ?? {}) as TemplateStatus;
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/** Every claim served by one Metal3Data of its own, its status naming it, indexes 0..n-1. */
async function expectDenseAndServed(t: string, names: string[]) {
  const byClaim = await indexesByClaim(t);
  for (const n of names) {
    expect(byClaim.get(n), n).toHaveLength(1);
    expect((await statusOf(n)).renderedData?.name).toBe(`${t}-${byClaim.get(n)![0]}`);
  }
  expect([...byClaim.values()].flat().sort((a, b) => a - b)).toEqual(range(names.length));
  const status = await templateStatus(t);
  expect(Object.keys(status.indexes ?? {})).toHaveLength(names.length);
  for (const [claim, [index]] of byClaim) expect(status.indexes?.[String(index)]).toBe(claim);
}

describe('batch allocation in a serialized pass', () => {
  it('serves its claim and a page more with one template status write, before the claims', async () => {
    const t = 'b1';
    const names = await seed(t, BATCH_CLAIMS + 5);
    const from = tc.server.log.entries.length;
    const own = names.at(-1)!;
    expect(await allocate(inGroup(testClient(tc.kubeconfig), t), R.Metal3DataClaim, own)).toMatchObject({
      kind: 'done',
      note: expect.stringContaining(`${BATCH_CLAIMS} more claims served`),
    });
    const byClaim = await indexesByClaim(t);
    expect(byClaim.get(own)).toEqual([0]);
    expect(byClaim.size).toBe(BATCH_CLAIMS + 1);
    expect([...byClaim.values()].flat().sort((a, b) => a - b)).toEqual(range(BATCH_CLAIMS + 1));
    const log = tc.server.log.entries.slice(from);
    const templateWrites = log.flatMap((e, i) =>
      e.resource.startsWith('metal3datatemplates') && e.verb !== 'get' && e.verb !== 'list' ? [i] : [],
    );
    // One write of the template: its status, for every claim served (the finalizer and cluster
    // label went on in the same pass: one metadata write first, as before).
    expect(templateWrites.map((i) => `${log[i]!.verb} ${log[i]!.resource}`)).toEqual([
      'update metal3datatemplates',
      'patch metal3datatemplates/status',
    ]);
    const claimStatusWrites = log.flatMap((e, i) =>
      e.resource === 'metal3dataclaims/status' && e.verb === 'update' ? [i] : [],
    );
    expect(claimStatusWrites).toHaveLength(BATCH_CLAIMS + 1);
    expect(Math.min(...claimStatusWrites)).toBeGreaterThan(templateWrites.at(-1)!);

    // The rest, each in its own serialized pass: the served ones read no template.
    for (const n of names)
      expect(await allocate(inGroup(tc.client, t), R.Metal3DataClaim, n)).toMatchObject({ kind: 'done' });
    await expectDenseAndServed(t, names);
  });

  it("a served claim's pass reads its Metal3Data only: no template, no list, no write", async () => {
    const t = 'b2';
    const names = await seed(t, 3);
    await allocate(inGroup(tc.client, t), R.Metal3DataClaim, names[0]!);
    const client = testClient(tc.kubeconfig);
    // Served by the batch, and by its own pass.
    for (const n of [names[1]!, names[0]!]) {
      expect(await allocate(inGroup(client, t), R.Metal3DataClaim, n)).toMatchObject({ kind: 'done' });
    }
    expect(client.stats.byResource.get('get metal3datatemplates') ?? 0).toBe(0);
    expect(client.stats.byResource.get('get metal3datas')).toBe(2);
    expect(client.stats.listedItems).toBe(0);
    expect(client.stats.writes).toBe(0);

    // Its status naming another claim's Metal3Data: not served, the full pass mends the status.
    const other = (await statusOf(names[1]!)).renderedData!.name!;
    const c = (await tc.client.get(R.Metal3DataClaim, NS, names[2]!))!;
    await tc.client.replaceStatus(R.Metal3DataClaim, {
      ...c,
      status: { renderedData: { name: other, namespace: NS } },
    });
    const mending = testClient(tc.kubeconfig);
    expect(await allocate(makeCtx(mending), R.Metal3DataClaim, names[2]!)).toMatchObject({ kind: 'done' });
    expect(mending.stats.byResource.get('get metal3datatemplates')).toBe(1);
    expect((await statusOf(names[2]!)).renderedData?.name).not.toBe(other);
    await expectDenseAndServed(t, names);
  });

  it('claims without the claim finalizer, or in the burst registry, are left to their own pass', async () => {
    const t = 'b3';
    // c01 has no finalizer; c02 is being allocated by an unserialized runtime (in the registry).
    const names = await seed(t, 4, (i) => i === 1);
    await tc.client.patch(
      R.Metal3DataTemplate,
      NS,
      t,
      { status: { allocating: { [names[2]!]: new Date().toISOString() } } },
      'merge',
      { status: true },
    );
    expect(await allocate(inGroup(tc.client, t), R.Metal3DataClaim, names[0]!)).toMatchObject({
      kind: 'done',
    });
    const byClaim = await indexesByClaim(t);
    // Index 0 is left to the registry's claim; c00 takes 1, the batch serves c03 only, at 2.
    expect(Object.fromEntries(byClaim)).toEqual({ [names[0]!]: [1], [names[3]!]: [2] });
    expect((await statusOf(names[1]!)).renderedData).toBeUndefined();
    // Their own passes: the registry's claim (unserialized) then the bare one (adds its finalizer).
    expect(await allocate(makeCtx(tc.client), R.Metal3DataClaim, names[2]!)).toMatchObject({ kind: 'done' });
    expect(await allocate(inGroup(tc.client, t), R.Metal3DataClaim, names[1]!)).toMatchObject({
      kind: 'done',
    });
    await expectDenseAndServed(t, names);
  });
});

/** The claim a Metal3Data or IPAddress names. */
const claimOf = (o: KubeObject | undefined) =>
  (o?.spec as { claim?: { name?: string } } | undefined)?.claim?.name;

/** A client that runs `before` once, right before its first request matching `when`. */
class RacingClient extends KubeClient {
  before:
    | { when: (verb: string, t: Resource, obj: KubeObject | undefined) => boolean; run: () => Promise<void> }
    | undefined;
  private async race(verb: string, t: Resource, obj?: KubeObject) {
    const b = this.before;
    if (b?.when(verb, t, obj)) {
      this.before = undefined;
      await b.run();
    }
  }
  override async create<T extends KubeObject>(
    t: Resource<T>,
    obj: T,
    opts: { dryRun?: boolean } = {},
  ): Promise<T> {
    await this.race('create', t, obj);
    return super.create(t, obj, opts);
  }
  override async patch<T extends KubeObject>(
    t: Resource<T>,
    namespace: string | undefined,
    name: string,
    patch: unknown,
    type?: PatchType,
    opts?: { status?: boolean },
  ): Promise<T> {
    await this.race('patch', t);
    return super.patch(t, namespace, name, patch, type, opts);
  }
}

describe('a batched claim deleted mid-batch leaks nothing', () => {
  const cases = [
    {
      when: 'before its Metal3Data is created, and released (nothing to release yet)',
      at: (victim: string) => (verb: string, t: Resource, obj?: KubeObject) =>
        verb === 'create' && t.kind === 'Metal3Data' && claimOf(obj) === victim,
      released: true,
    },
    {
      when: 'after its Metal3Data is created, and released, before the template status write',
      at: () => (verb: string, t: Resource) => verb === 'patch' && t.kind === 'Metal3DataTemplate',
      released: true,
    },
    {
      when: 'after its Metal3Data is created, not yet released (its finalizer holds it)',
      at: () => (verb: string, t: Resource) => verb === 'patch' && t.kind === 'Metal3DataTemplate',
      released: false,
    },
  ];
  it.each(cases.map((c, i) => ({ ...c, i })))('deleted $when', async ({ at, released, i }) => {
    const t = `d${i}`;
    const names = await seed(t, 4);
    const victim = names[2]!;
    const racing = new RacingClient(tc.client.kc);
    racing.before = {
      when: at(victim),
      run: async () => {
        await tc.client.delete(R.Metal3DataClaim, NS, victim);
        if (released) {
          expect(await release(tc.ctx, R.Metal3DataClaim, victim)).toMatchObject({ kind: 'done' });
          expect(await tc.client.get(R.Metal3DataClaim, NS, victim)).toBeUndefined();
        }
      },
    };
    expect(await allocate(inGroup(racing, t), R.Metal3DataClaim, names[0]!)).toMatchObject({ kind: 'done' });
    expect(racing.before).toBeUndefined(); // the race ran
    tc.server.settle();
    expect(await tc.client.get(R.Metal3DataClaim, NS, victim)).toBeUndefined();
    const byClaim = await indexesByClaim(t);
    expect(byClaim.has(victim)).toBe(false);
    const status = await templateStatus(t);
    expect(Object.values(status.indexes ?? {})).not.toContain(victim);
    expect(status.dataNames?.[victim]).toBeUndefined();
    const rest = names.filter((n) => n !== victim);
    expect([...byClaim.keys()].sort()).toEqual(rest);
    for (const n of rest) expect((await statusOf(n)).renderedData?.name).toBeDefined();
  });
});

describe('a failure part-way leaves what the claims own passes finish', () => {
  const cases = [
    { where: 'the template status write', verb: 'patch', resource: 'metal3datatemplates/status' },
    { where: "the pass's own claim status", verb: 'update', resource: 'metal3dataclaims/status' },
  ];
  it.each(cases.map((c, i) => ({ ...c, i })))('fails at $where', async ({ verb, resource, i }) => {
    const t = `f${i}`;
    const names = await seed(t, 6);
    tc.server.faults.failNext({ verb, resource }, 503);
    await expect(allocate(inGroup(tc.client, t), R.Metal3DataClaim, names[0]!)).rejects.toThrow();
    tc.server.faults.clear();
    // Created, not all recorded: each claim has its Metal3Data already, and no second one comes.
    expect((await datasOf(t)).length).toBe(names.length);
    for (const n of [...names].reverse())
      expect(await allocate(inGroup(tc.client, t), R.Metal3DataClaim, n)).toMatchObject({ kind: 'done' });
    await expectDenseAndServed(t, names);
  });
});

describe('serialized per template, templates concurrently, with duplicate deliveries', () => {
  it('indexes dense and distinct, one Metal3Data per claim, every claim served', async () => {
    const templates = ['s1', 's2', 's3'];
    const claims = new Map<string, string[]>();
    for (const t of templates) claims.set(t, await seed(t, 40));
    // Each template's FIFO group: its deliveries one at a time, every fifth delivered twice.
    const group = async (t: string) => {
      const client = testClient(tc.kubeconfig);
      for (const [i, n] of claims.get(t)!.entries()) {
        for (let k = 0; k < (i % 5 === 0 ? 2 : 1); k++) {
          expect(await allocate(inGroup(client, t), R.Metal3DataClaim, n)).toMatchObject({ kind: 'done' });
        }
      }
      return client;
    };
    const clients = await Promise.all(templates.map(group));
    for (const t of templates) await expectDenseAndServed(t, claims.get(t)!);
    // Few template reads: one per pass that allocates (not one per claim).
    const templateGets = clients.reduce(
      (s, c) => s + (c.stats.byResource.get('get metal3datatemplates') ?? 0),
      0,
    );
    expect(templateGets).toBeLessThanOrEqual(templates.length * Math.ceil(40 / (BATCH_CLAIMS + 1)));
    expect(clients.reduce((s, c) => s + c.stats.conflicts, 0)).toBe(0);
  });
});

describe('address batch in a pass serialized by its pool', () => {
  const inPool = (client: KubeClient, p: string): ReconcileContext => ({
    ...makeCtx(client),
    serializedBy: { kind: 'IPPool', namespace: NS, name: p },
  });
  /** A pool 10.<octet>.0.1-100 and `n` IPClaims of it, with the IPAM finalizer unless `bare`. */
  async function seedPool(p: string, octet: number, n: number, bare: (i: number) => boolean = () => false) {
    await tc.client.create(
      R.IPPool,
      pool(p, { pools: [{ start: `10.${octet}.0.1`, end: `10.${octet}.0.100` }], prefix: 24 }),
    );
    const names = Array.from({ length: n }, (_, i) => claimName(p, i));
    await runWorkers(names, 8, (name) =>
      tc.client.create(R.IPClaim, {
        metadata: {
          name,
          namespace: NS,
          ...(bare(names.indexOf(name)) ? {} : { finalizers: [FINALIZER.ipClaim] }),
        },
        spec: { pool: { name: p } },
      }),
    );
    return names;
  }
  const addressesOf = async (p: string) => {
    const out = new Map<string, string[]>();
    for (const a of (await tc.client.list(R.IPAddress, NS)).items) {
      const spec = a.spec as { address: string; pool: { name: string }; claim: { name: string } };
      if (spec.pool.name !== p) continue;
      out.set(spec.claim.name, [...(out.get(spec.claim.name) ?? []), spec.address]);
    }
    return out;
  };
  const poolIndexes = async (p: string) =>
    (((await tc.client.get(R.IPPool, NS, p))!.status ?? {}) as { indexes?: Record<string, string> })
      .indexes ?? {};
  /** Every claim served by one address of its own, its status and the pool's naming it; the lowest ones. */
  async function expectLowestAndServed(p: string, names: string[]) {
    const byClaim = await addressesOf(p);
    const indexes = await poolIndexes(p);
    for (const n of names) {
      expect(byClaim.get(n), n).toHaveLength(1);
      expect(await addressOf(tc.client, n)).toBe(byClaim.get(n)![0]);
      expect(indexes[n]).toBe(byClaim.get(n)![0]);
    }
    const last = (ip: string) => Number(ip.split('.')[3]);
    expect(
      [...byClaim.values()]
        .flat()
        .map(last)
        .sort((a, b) => a - b),
    ).toEqual(range(names.length).map((i) => i + 1));
    expect(Object.keys(indexes).sort()).toEqual([...names].sort());
  }

  it('serves its IPClaim and a page more with one pool status write, before the claims; served passes read no pool', async () => {
    const p = 'ipb1';
    const names = await seedPool(p, 21, BATCH_CLAIMS + 5);
    const from = tc.server.log.entries.length;
    expect(await allocate(inPool(testClient(tc.kubeconfig), p), R.IPClaim, names.at(-1)!)).toMatchObject({
      kind: 'done',
      note: expect.stringContaining(`${BATCH_CLAIMS} more claims served`),
    });
    expect(await addressOf(tc.client, names.at(-1)!)).toBe('10.21.0.1');
    expect((await addressesOf(p)).size).toBe(BATCH_CLAIMS + 1);
    const log = tc.server.log.entries.slice(from);
    const poolWrites = log.flatMap((e, i) =>
      e.resource.startsWith('ippools') && e.verb !== 'get' && e.verb !== 'list' ? [i] : [],
    );
    expect(poolWrites.map((i) => `${log[i]!.verb} ${log[i]!.resource}`)).toEqual([
      'update ippools',
      'patch ippools/status',
    ]);
    const claimWrites = log.flatMap((e, i) =>
      e.resource === 'ipclaims/status' && e.verb === 'update' ? [i] : [],
    );
    expect(claimWrites).toHaveLength(BATCH_CLAIMS + 1);
    expect(Math.min(...claimWrites)).toBeGreaterThan(poolWrites.at(-1)!);

    const client = testClient(tc.kubeconfig);
    for (const n of names)
      expect(await allocate(inPool(client, p), R.IPClaim, n)).toMatchObject({ kind: 'done' });
    // The served ones read their address only; the last 4 allocated in one pass (one pool read).
    expect(client.stats.byResource.get('get ippools')).toBe(1);
    await expectLowestAndServed(p, names);
  });

  it('claims without the IPAM finalizer, with a requested address, or in the registry are left to their own pass', async () => {
    const p = 'ipb2';
    const names = await seedPool(p, 22, 5, (i) => i === 1);
    const c2 = (await tc.client.get(R.IPClaim, NS, names[2]!))!;
    await tc.client.replace(R.IPClaim, {
      ...c2,
      metadata: { ...c2.metadata, annotations: { [REQUESTED_IP_ANNOTATION]: '10.22.0.50' } },
    });
    await tc.client.patch(
      R.IPPool,
      NS,
      p,
      { status: { allocating: { [names[3]!]: new Date().toISOString() } } },
      'merge',
      {
        status: true,
      },
    );
    expect(await allocate(inPool(tc.client, p), R.IPClaim, names[0]!)).toMatchObject({ kind: 'done' });
    // .1 is left to the registry's claim; ip00 takes .2, the batch serves ip04 only, at .3.
    expect(Object.fromEntries(await addressesOf(p))).toEqual({
      [names[0]!]: ['10.22.0.2'],
      [names[4]!]: ['10.22.0.3'],
    });
    expect(await allocate(makeCtx(tc.client), R.IPClaim, names[3]!)).toMatchObject({ kind: 'done' });
    expect(await addressOf(tc.client, names[3]!)).toBe('10.22.0.1');
    for (const n of [names[1]!, names[2]!])
      expect(await allocate(inPool(tc.client, p), R.IPClaim, n)).toMatchObject({ kind: 'done' });
    expect(await addressOf(tc.client, names[1]!)).toBe('10.22.0.4');
    expect(await addressOf(tc.client, names[2]!)).toBe('10.22.0.50');
  });

  it('an IPClaim deleted and released before its address is created: the address is released, its entry dropped', async () => {
    const p = 'ipb3';
    const names = await seedPool(p, 23, 4);
    const victim = names[2]!;
    const racing = new RacingClient(tc.client.kc);
    racing.before = {
      when: (verb, t, obj) => verb === 'create' && t.kind === 'IPAddress' && claimOf(obj) === victim,
      run: async () => {
        await tc.client.delete(R.IPClaim, NS, victim);
        expect(await release(tc.ctx, R.IPClaim, victim)).toMatchObject({ kind: 'done' });
        expect(await tc.client.get(R.IPClaim, NS, victim)).toBeUndefined();
      },
    };
    expect(await allocate(inPool(racing, p), R.IPClaim, names[0]!)).toMatchObject({ kind: 'done' });
    expect(racing.before).toBeUndefined();
    tc.server.settle();
    const byClaim = await addressesOf(p);
    expect([...byClaim.keys()].sort()).toEqual(names.filter((n) => n !== victim));
    expect(Object.keys(await poolIndexes(p)).sort()).toEqual(names.filter((n) => n !== victim));
  });

  it('a failed pool status write leaves what the claims own passes finish: no second address', async () => {
    const p = 'ipb4';
    const names = await seedPool(p, 24, 6);
    tc.server.faults.failNext({ verb: 'patch', resource: 'ippools/status' }, 503);
    await expect(allocate(inPool(tc.client, p), R.IPClaim, names[0]!)).rejects.toThrow();
    tc.server.faults.clear();
    expect((await addressesOf(p)).size).toBe(names.length);
    for (const n of [...names].reverse())
      expect(await allocate(inPool(tc.client, p), R.IPClaim, n)).toMatchObject({ kind: 'done' });
    await expectLowestAndServed(p, names);
  });

  it('serialized per pool, pools concurrently, duplicate deliveries: distinct lowest addresses, one per claim', async () => {
    const pools = [
      ['ipb5', 25],
      ['ipb6', 26],
    ] as const;
    const claims = new Map<string, string[]>();
    for (const [p, octet] of pools) claims.set(p, await seedPool(p, octet, 40));
    await Promise.all(
      pools.map(async ([p]) => {
        const client = testClient(tc.kubeconfig);
        for (const [i, n] of claims.get(p)!.entries())
          for (let k = 0; k < (i % 5 === 0 ? 2 : 1); k++)
            expect(await allocate(inPool(client, p), R.IPClaim, n)).toMatchObject({ kind: 'done' });
        expect(client.stats.byResource.get('get ippools')).toBeLessThanOrEqual(
          Math.ceil(40 / (BATCH_CLAIMS + 1)),
        );
      }),
    );
    for (const [p] of pools) await expectLowestAndServed(p, claims.get(p)!);
  });
});
