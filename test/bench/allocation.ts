/**
 * Allocation under contention and renderData cost, against the embedded API server over HTTP.
 *
 *   node test/bench/allocation.ts [--serialized [claims]]
 *
 * - 500 Metal3DataClaims on one template, 16 workers calling the allocateIndex core concurrently
 *   (no queue serialization at all), once with every message delivered once and once with 10%
 *   delivered twice back to back (`...WithDuplicates`; dispatch runs one delivery of a key at a
 *   time per process as client-go's workqueue does), and once more calling the per-kind function directly so the
 *   duplicates race as if in two processes (`...WithCrossProcessDuplicates`). Goal: conflicts (every 409 the server
 *   answered: AlreadyExists on create and Conflict on update) per allocation <= 0.05. Duplicates
 *   racing themselves cost update conflicts on their own claim (the resourceVersion check doing
 *   its job); the FIFO queue never runs two messages of one template at once.
 * - The same for 200 IPClaims on one IPPool.
 * - 500 claims of one template delivered in its FIFO group, one pass at a time (the queued
 *   runtimes; `indexSerialized...`): ms, requests, template reads and status writes per allocation.
 * - renderData per Metal3Data: the reconcile that renders (inputs gathered, addresses read, two
 *   Secrets created, refs and ready written), in ms, sequential.
 */
import { R } from '../../shared/api/resources.ts';
import { startTestCluster } from '../helpers/cluster.ts';
import { addressContention, indexContention, serializedIndexAllocation } from '../helpers/contention.ts';
import {
  allocate,
  createMachine,
  makeCtx,
  NS,
  POOL_1,
  POOL6_1,
  pool,
  render,
  seedTemplate,
} from '../helpers/data.ts';
import { runWorkers } from '../helpers/workers.ts';

const round = (x: number, digits = 3) => Number(x.toFixed(digits));

/** The queued runtimes: one template's claims, one pass at a time in its FIFO group (ADR 033). */
export async function benchSerializedAllocation(claims = 500): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const tc = await startTestCluster();
  try {
    const r = await serializedIndexAllocation(tc.client, { claims });
    out.indexSerializedMsPerAllocation = round(r.ms / r.allocations, 2);
    out.indexSerializedRequestsPerAllocation = round(r.requests / r.allocations, 2);
    out.indexSerializedTemplateGetsPerAllocation = round(r.templateGets / r.allocations, 3);
    out.indexSerializedTemplateStatusWritesPerAllocation = round(r.templateStatusWrites / r.allocations, 3);
    out.indexSerializedConflictsPerAllocation = round(r.http409 / r.allocations);
  } finally {
    await tc.stop();
  }
  return out;
}

export async function benchAllocation(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  {
    // The same without spreading by rank: every worker goes for the plain lowest free index.
    const tc = await startTestCluster();
    try {
      // Without spreading, 16 workers race for one index at a time: a claim loses a create with
      // probability ~15/16 and can run out of attempts several deliveries in a row; let the
      // redeliveries run on (counted) to show the cost rather than stop the run.
      const r = await indexContention(tc.client, {
        claims: 500,
        workers: 16,
        dupRate: 0,
        maxReceives: 100,
        spreadByRank: false,
      });
      out.indexNoSpreadConflictsPerAllocation = round(r.http409 / r.allocations);
      out.indexNoSpreadRedeliveries = r.redeliveries;
      out.indexNoSpreadMsPerAllocation = round(r.ms / r.allocations, 2);
    } finally {
      await tc.stop();
    }
  }
  Object.assign(out, await benchSerializedAllocation());
  const variants = [
    { tag: '', dupRate: 0, crossProcess: false },
    { tag: 'WithDuplicates', dupRate: 0.1, crossProcess: false },
    { tag: 'WithCrossProcessDuplicates', dupRate: 0.1, crossProcess: true },
  ];
  for (const { tag, dupRate, crossProcess } of variants) {
    const tc = await startTestCluster();
    try {
      const r = await indexContention(tc.client, { claims: 500, workers: 16, dupRate, crossProcess });
      out[`index${tag}Deliveries`] = r.deliveries;
      out[`index${tag}ConflictsPerAllocation`] = round(r.http409 / r.allocations);
      out[`index${tag}Redeliveries`] = r.redeliveries;
      out[`index${tag}AlreadyExistsPerAllocation`] = round(r.alreadyExists / r.allocations);
      out[`index${tag}UpdateConflictsPerAllocation`] = round((r.http409 - r.alreadyExists) / r.allocations);
      out[`index${tag}MsPerAllocation`] = round(r.ms / r.allocations, 2);
      // Objects listed per allocation: flat in the burst's size (ADR 012), not the backlog.
      out[`index${tag}ListedPerAllocation`] = round(r.listed / r.allocations, 2);
    } finally {
      await tc.stop();
    }
  }
  for (const { tag, dupRate, crossProcess } of variants) {
    const tc = await startTestCluster();
    try {
      await tc.client.create(
        R.IPPool,
        pool('bench', { pools: [{ start: '10.0.0.1', end: '10.0.3.250' }], prefix: 22 }),
      );
      const r = await addressContention(tc.client, {
        claims: 200,
        workers: 16,
        dupRate,
        crossProcess,
        pool: 'bench',
      });
      out[`address${tag}ConflictsPerAllocation`] = round(r.http409 / r.allocations);
      out[`address${tag}AlreadyExistsPerAllocation`] = round(r.alreadyExists / r.allocations);
      out[`address${tag}MsPerAllocation`] = round(r.ms / r.allocations, 2);
      out[`address${tag}ListedPerAllocation`] = round(r.listed / r.allocations, 2);
    } finally {
      await tc.stop();
    }
  }
  {
    const tc = await startTestCluster();
    const ctx = makeCtx(tc.client);
    const n = 40;
    try {
      await tc.client.create(R.IPPool, POOL_1);
      await tc.client.create(R.IPPool, POOL6_1);
      await tc.client.create(R.Metal3DataTemplate, seedTemplate('nodepool-1'));
      const machines = Array.from({ length: n }, (_, i) => `m-${i}`);
      await runWorkers(machines, 8, (m) => createMachine(tc.client, m, 'nodepool-1'));
      for (const m of machines) await allocate(ctx, R.Metal3DataClaim, m);
      const datas = (await tc.client.list(R.Metal3Data, NS)).items.map((d) => d.metadata.name!);
      for (const d of datas) await render(ctx, d); // creates the IPClaims, waits
      for (const c of (await tc.client.list(R.IPClaim, NS)).items)
        await allocate(ctx, R.IPClaim, c.metadata.name!);
      const started = performance.now();
      for (const d of datas) {
        const r = await render(ctx, d);
        if (r.kind !== 'done') throw new Error(`render ${d}: ${JSON.stringify(r)}`);
      }
      out.renderDataMsPerMetal3Data = round((performance.now() - started) / datas.length, 2);
      const again = performance.now();
      for (const d of datas) await render(ctx, d);
      out.renderDataNoopMsPerMetal3Data = round((performance.now() - again) / datas.length, 2);
    } finally {
      await tc.stop();
    }
  }
  return out;
}

if (import.meta.main) {
  // `--serialized [claims]`: that case alone (seconds, not minutes).
  const at = process.argv.indexOf('--serialized');
  const claims = Number(process.argv[at + 1]) || undefined;
  console.log(
    JSON.stringify(await (at >= 0 ? benchSerializedAllocation(claims) : benchAllocation()), null, 2),
  );
}
