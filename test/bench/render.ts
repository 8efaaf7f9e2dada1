/**
 * Micro-benchmark of rendering and IP allocation (pure code, no I/O).
 *
 *   node test/bench/render.ts
 *
 * Absolute figures depend on the machine; the ratios are the point: allocation cost must grow
 * with the number of used addresses (O(used)), not with the size of the pool.
 */
import { performance } from 'node:perf_hooks';
import { parse } from 'yaml';
import { parseMetal3DataTemplate } from '../../shared/api/index.ts';
import { allocateAddress, type IPPoolSpec, UsedAddresses } from '../../shared/ipam/allocate.ts';
import { referencedPools, renderData } from '../../shared/render/index.ts';
import { serializeMetaData, serializeNetworkData } from '../../shared/render/serialize.ts';
import { inputs } from '../helpers/render.ts';
import { SEED_TEMPLATE_REAL_MACS } from '../helpers/seed001-template.ts';

/**
 * µs per call of `fn`: the best of 5 rounds of `iterations` calls, after a warm-up round (best,
 * not mean, because a shared machine only ever adds noise).
 */
function microsPerCall(iterations: number, fn: (i: number) => unknown): number {
  for (let i = 0; i < iterations; i++) fn(i);
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 5; round++) {
    const start = performance.now();
    for (let i = 0; i < iterations; i++) fn(i);
    best = Math.min(best, ((performance.now() - start) * 1000) / iterations);
  }
  return best;
}

function usedV4(count: number): string[] {
  // 10.0.0.1 upwards: the subnet-only entry's first candidates, all taken
  return Array.from(
    { length: count },
    (_, i) => `10.${(i + 1) >> 16}.${((i + 1) >> 8) & 255}.${(i + 1) & 255}`,
  );
}

const round = (n: number) => Math.round(n * 100) / 100;

export async function benchRender(): Promise<Record<string, number>> {
  const template = parseMetal3DataTemplate(parse(SEED_TEMPLATE_REAL_MACS)).spec;
  const renderInputs = inputs({ index: 0 });

  const renderUs = microsPerCall(5_000, (i) => renderData(template, { ...renderInputs, index: i }));
  const renderSerializeUs = microsPerCall(500, (i) => {
    const out = renderData(template, { ...renderInputs, index: i });
    return serializeMetaData(out.metaData) + serializeNetworkData(out.networkData!);
  });
  const poolsUs = microsPerCall(5_000, () => referencedPools(template, renderInputs));

  const pool: IPPoolSpec = { namePrefix: 'bench', pools: [{ subnet: '10.0.0.0/8' }], prefix: 8 };
  const used10k = usedV4(10_000);
  const used1k = usedV4(1_000);
  // From strings each time: what a reconcile does after listing the IPAddresses.
  const alloc10kUs = microsPerCall(50, () => allocateAddress(pool, used10k, { name: 'c' }));
  const alloc1kUs = microsPerCall(500, () => allocateAddress(pool, used1k, { name: 'c' }));
  const alloc0Us = microsPerCall(5_000, () => allocateAddress(pool, [], { name: 'c' }));
  // With a prepared set: the scan alone (10,000 taken candidates before the first free one).
  const prepared = new UsedAddresses(used10k);
  const allocPreparedUs = microsPerCall(200, () => allocateAddress(pool, prepared, { name: 'c' }));
  // A /64 IPv6 entry (2^64 candidates) with 10,000 used: size of the pool must not matter.
  const pool6: IPPoolSpec = { namePrefix: 'bench6', pools: [{ subnet: '2001:db8::/64' }], prefix: 64 };
  const used6 = Array.from({ length: 10_000 }, (_, i) => `2001:db8::${(i + 1).toString(16)}`);
  const alloc6Us = microsPerCall(50, () => allocateAddress(pool6, used6, { name: 'c' }));

  return {
    renderSeedTemplateUs: round(renderUs),
    renderAndSerializeSeedTemplateUs: round(renderSerializeUs),
    referencedPoolsSeedTemplateUs: round(poolsUs),
    allocationsPerSecondUsed10k: Math.round(1e6 / alloc10kUs),
    allocationsPerSecondUsed10kPreparedSet: Math.round(1e6 / allocPreparedUs),
    allocationsPerSecondIpv6Slash64Used10k: Math.round(1e6 / alloc6Us),
    allocationsPerSecondUsed1k: Math.round(1e6 / alloc1kUs),
    allocationsPerSecondUsed0: Math.round(1e6 / alloc0Us),
    /** ~10 when allocation is linear in the used count. */
    ratioAllocUsed10kToUsed1k: round(alloc10kUs / alloc1kUs),
  };
}

if (import.meta.main) {
  const results = await benchRender();
  console.log(JSON.stringify(results, null, 2));
}
