/**
 * Which writes lose races: the product's 409s by function, verb and resource, and its 422s (a
 * guarded JSON patch whose `test` failed is a 422, ADR 026; so is a write the server refuses). The functions share
 * one client (and its RequestStats) in a dev run, so the function a request belongs to is carried
 * by the async context of its invocation; a request outside any invocation is the relay's.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { RequestStats } from '../../../shared/kube/stats.ts';
import type { FunctionTable } from '../../../shared/runtimes/dispatch.ts';

const largestFirst = (m: Map<string, number>): Record<string, number> =>
  Object.fromEntries([...m].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)));

export class ConflictAccount {
  private readonly running = new AsyncLocalStorage<string>();
  private readonly counts = new Map<string, number>();
  private readonly refused = new Map<string, number>();

  /** The same table, each function run inside its own name. */
  wrap(fns: FunctionTable): FunctionTable {
    const wrapped: FunctionTable = {};
    for (const [name, fn] of Object.entries(fns) as [
      keyof FunctionTable,
      FunctionTable[keyof FunctionTable],
    ][]) {
      if (fn) wrapped[name] = (ctx, msg) => this.running.run(name, () => fn(ctx, msg));
    }
    return wrapped;
  }

  /** Counts the 409s and 422s `stats` records from now on; returns the function that stops it. */
  observe(stats: RequestStats): () => void {
    return stats.observe((o) => {
      const into = o.code === 409 ? this.counts : o.code === 422 ? this.refused : undefined;
      if (!into) return;
      const key = `${this.running.getStore() ?? 'relay'} ${o.verb} ${o.resource}`;
      into.set(key, (into.get(key) ?? 0) + 1);
    });
  }

  /** `<function> <verb> <resource>` → 409s, largest first. */
  byKey(): Record<string, number> {
    return largestFirst(this.counts);
  }

  /** `<function> <verb> <resource>` → 422s, largest first. */
  refusedByKey(): Record<string, number> {
    return largestFirst(this.refused);
  }
}
