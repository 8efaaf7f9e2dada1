/**
 * The in-process runtime keeps the queues' semantics: FIFO order and one-at-a-time per group,
 * coalescing of pending messages, deduplication, requeue-after, and malformed messages dead-lettered
 * without hurting batch-mates. Retries, held groups and the last attempt are in the runtime contract
 * suite (test/integration/runtimes/).
 */
import { describe, expect, it } from 'vitest';
import type { MessageEnvelope } from '../../../events/envelope.ts';
import type { RoutedMessage } from '../../../shared/queue/message.ts';
import type { ReconcileFn } from '../../../shared/reconcile/context.ts';
import { done, requeueAfter } from '../../../shared/reconcile/result.ts';
import { DirectRunner } from '../../../shared/runtimes/direct.ts';
import { offlineContext } from '../../helpers/context.ts';
import { envelope } from '../../helpers/messages.ts';
import { until } from '../../helpers/wait.ts';

const routed = (over: Partial<MessageEnvelope>, group?: string): RoutedMessage => {
  const msg = envelope(over);
  return { msg, group: group ?? `${msg.kind}/${msg.namespace}/${msg.name}` };
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('DirectRunner', () => {
  it('runs one message at a time per group, in order, and groups in parallel', async () => {
    let running = 0;
    let maxRunning = 0;
    const perGroup = new Map<string, number>();
    let overlapInGroup = false;
    const order: string[] = [];
    const fn: ReconcileFn = async (_ctx, msg) => {
      const g = msg.name.split('-')[0]!;
      running++;
      maxRunning = Math.max(maxRunning, running);
      perGroup.set(g, (perGroup.get(g) ?? 0) + 1);
      if (perGroup.get(g)! > 1) overlapInGroup = true;
      await sleep(5);
      order.push(msg.name);
      perGroup.set(g, perGroup.get(g)! - 1);
      running--;
      return done();
    };
    const r = new DirectRunner({ fns: { allocateIndex: fn }, context: offlineContext(), concurrency: 4 });
    const msgs: RoutedMessage[] = [];
    for (const g of ['a', 'b', 'c'])
      for (let i = 0; i < 4; i++)
        msgs.push(
          routed(
            { function: 'allocateIndex', kind: 'Metal3DataClaim', name: `${g}-${i}`, uid: `${g}${i}` },
            g,
          ),
        );
    r.enqueue(msgs);
    await r.flush();
    expect(overlapInGroup).toBe(false);
    expect(maxRunning).toBe(3); // three groups, concurrency 4: one per group at a time
    for (const g of ['a', 'b', 'c'])
      expect(order.filter((n) => n.startsWith(`${g}-`))).toEqual([0, 1, 2, 3].map((i) => `${g}-${i}`));
    expect(r.runStats.done).toBe(12);
    await r.close();
  });

  it('respects the concurrency limit across groups', async () => {
    let running = 0;
    let maxRunning = 0;
    const fn: ReconcileFn = async () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      await sleep(5);
      running--;
      return done();
    };
    const r = new DirectRunner({ fns: { selectHost: fn }, context: offlineContext(), concurrency: 2 });
    r.enqueue(Array.from({ length: 10 }, (_, i) => routed({ name: `m-${i}`, uid: `u${i}` })));
    await r.flush();
    expect(maxRunning).toBe(2);
    expect(r.runStats.done).toBe(10);
    await r.close();
  });

  it('coalesces a pending message with a newer one for the same key, and drops duplicates', async () => {
    const seen: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const fn: ReconcileFn = async (_ctx, msg) => {
      if (msg.name === 'blocker') await gate;
      seen.push(`${msg.name}@${msg.resourceVersion}`);
      return done();
    };
    const r = new DirectRunner({ fns: { selectHost: fn }, context: offlineContext(), concurrency: 1 });
    r.enqueue([routed({ name: 'blocker', uid: 'b' })]);
    // While the only slot is busy, three versions of m-0 arrive (and one exact duplicate).
    r.enqueue([routed({ resourceVersion: '1' }), routed({ resourceVersion: '2' })]);
    r.enqueue([routed({ resourceVersion: '3' }), routed({ resourceVersion: '3' })]);
    release();
    await r.flush();
    expect(seen).toEqual(['blocker@1', 'm-0@3']);
    expect(r.stats.coalesced).toBe(2);
    expect(r.runStats.deduplicated).toBe(1);
    // A message already handled (same uid/rv/function) is a duplicate within the window.
    r.enqueue([routed({ resourceVersion: '3' })]);
    await r.flush();
    expect(seen).toHaveLength(2);
    await r.close();
  });

  it('requeues after the asked delay with a requeue envelope', async () => {
    const calls: MessageEnvelope[] = [];
    const fn: ReconcileFn = async (_ctx, msg) => {
      calls.push(msg);
      return calls.length === 1 ? requeueAfter(0.05, 'waiting') : done();
    };
    const r = new DirectRunner({ fns: { selectHost: fn }, context: offlineContext() });
    const t0 = Date.now();
    r.enqueue([routed({})]);
    await until(() => calls.length === 2 || undefined, 5_000);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(45);
    expect(calls[1]).toMatchObject({ name: 'm-0', reason: 'requeue', attempt: 1 });
    // A requeue is observed when it was decided: its pass reads nothing older than the first pass did.
    expect(calls[1]!.observedAt).toBeGreaterThanOrEqual(t0);
    expect(r.runStats).toMatchObject({ requeued: 1, done: 1 });
    await r.close();
  });

  it('dead-letters malformed messages without failing their batch-mates', async () => {
    const fn: ReconcileFn = async () => done();
    const r = new DirectRunner({ fns: { selectHost: fn }, context: offlineContext() });
    r.enqueue([
      routed({ kind: 'Widget', apiVersion: 'example.com/v1', name: 'w', uid: 'w' }),
      routed({ name: 'ok', uid: 'ok' }),
      // No function served: dropped and counted, as the queue sender drops a function without a queue.
      routed({ function: 'renderData', kind: 'Metal3Data', name: 'd', uid: 'd' }),
    ]);
    await r.flush();
    expect(r.runStats).toMatchObject({ deadLettered: 1, done: 1 });
    expect(r.stats.dropped).toBe(1);
    await r.close();
  });

  it('close() drops pending timers and refuses new messages', async () => {
    let calls = 0;
    const fn: ReconcileFn = async () => {
      calls++;
      return requeueAfter(0.05, 'later');
    };
    const r = new DirectRunner({ fns: { selectHost: fn }, context: offlineContext() });
    r.enqueue([routed({})]);
    await r.flush();
    expect(r.scheduledCount).toBe(1);
    await r.close();
    await sleep(100);
    expect(calls).toBe(1);
    expect(() => r.enqueue([routed({ name: 'late', uid: 'late' })])).toThrow(/closed/);
  });
});
