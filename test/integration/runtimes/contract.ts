/**
 * The runtime contract: one suite every adapter (Lambda, worker, direct, HTTP) runs through a small
 * harness of its own (hono's router suite style: `runtimeContract({ name, make, skip })`). What the
 * transport must do with each outcome of the dispatch core:
 *
 *   done / terminal        acknowledged once, never delivered again
 *   requeue-after          acknowledged, and sent round again after the asked delay
 *   retry                  back after its backoff (1 s at the first receive), then it succeeds
 *   malformed              dead-lettered with its reason before any core runs; batch-mates go on
 *   FIFO group on failure  later messages of the group wait for the failed one; other groups go on
 *   last receive           the failing message is dead-lettered with its error; those held behind run
 *   outage                 shorter than the receive budget: nothing dead-lettered, held-back included
 *   duplicate delivery     two deliveries of one key never run at once; both acknowledged
 *
 * Every core here is scripted by the message name, so the suite needs no cluster.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { MessageEnvelope } from '../../../events/envelope.ts';
import { messageKey } from '../../../shared/queue/message.ts';
import type { ReconcileFn } from '../../../shared/reconcile/context.ts';
import { TransientError } from '../../../shared/reconcile/errors.ts';
import { done, requeueAfter, terminal } from '../../../shared/reconcile/result.ts';
import type { DispatchOutcome, FunctionTable } from '../../../shared/runtimes/dispatch.ts';
import { processExclusion } from '../../../shared/runtimes/exclusive.ts';
import { envelope } from '../../helpers/messages.ts';
import { poisons } from '../../helpers/poisons.ts';
import { until } from '../../helpers/wait.ts';

export interface Delivery {
  /** The message body as the transport carries it (a JSON envelope, or anything for poisons). */
  body: string;
  /** Its FIFO group (transports without groups ignore it). */
  group: string;
}

export interface Limits {
  /** Receives (attempts) before a failing message is dead-lettered. */
  maxReceiveCount: number;
  /** Wait after a failure by receive count; absent: the product's 1, 2, 4 … 300 s. */
  retryBackoffSeconds?: (receiveCount: number) => number;
}

export interface Observed {
  /** The object name of the message (the body for one that does not parse). */
  name: string;
  kind: DispatchOutcome['kind'];
}

/** One adapter under test, started per test with the cores and limits the test needs. */
export interface RuntimeHarness {
  start(fns: FunctionTable, limits: Limits): Promise<void>;
  /** Hands messages to the transport as the relay would, in this order; resolves once handed over. */
  deliver(items: readonly Delivery[]): Promise<void>;
  /** Every outcome the adapter reported, in order. */
  readonly outcomes: readonly Observed[];
  /** Dead letters so far: the body and the reason it carries. */
  deadLetters(): Promise<{ body: string; reason: string }[]>;
  /** Requeue-after messages scheduled and not yet due. */
  requeuesScheduled(): Promise<number>;
  /** Messages the transport still holds (not acknowledged); 0 once everything is. */
  inTransport(): Promise<number>;
  stop(): Promise<void>;
}

export interface ContractOptions {
  name: string;
  make: () => RuntimeHarness;
  /**
   * Deliveries of two FIFO groups run at the same time in this adapter (false for Lambda: one
   * invocation runs its batch a record at a time, and invocations do not share a process).
   */
  groupsOverlap: boolean;
  /** Tests this adapter cannot run, and why (hono's `skip`). */
  skip?: { reason: string; tests: string[] }[];
}

export const TESTS = {
  done: 'done: acknowledged once, never delivered again',
  requeue: 'requeue-after: acknowledged, and sent round again after the asked delay',
  retry: 'retry: back after its backoff (1 s at the first receive), then it succeeds',
  terminal: 'terminal: acknowledged, never retried',
  malformed: 'malformed: each poison dead-lettered with its reason before any core runs; batch-mates go on',
  group:
    'FIFO group held on failure: later messages of the group wait for the failed one; other groups go on',
  lastReceive: 'last receive: the failing message is dead-lettered with its error; those held behind it run',
  outage: 'an outage shorter than the receive budget dead-letters nothing, held-back messages included',
  duplicate: 'duplicate delivery: two deliveries of one key never run at once; both acknowledged',
} as const;

interface Run {
  name: string;
  start: number;
  end?: number;
  outcome?: 'done' | 'threw' | 'requeue' | 'terminal';
}

/** Cores scripted by the message name, recording every run. */
class Script {
  readonly runs: Run[] = [];
  /** Until when every `outage-*` message fails (ms since epoch). */
  outageUntil = 0;
  private readonly failedOnce = new Set<string>();
  private gateOpen!: () => void;
  private readonly gate = new Promise<void>((r) => {
    this.gateOpen = r;
  });
  running = 0;
  maxRunningPerKey = 0;
  private readonly runningByName = new Map<string, number>();

  readonly core: ReconcileFn = async (_ctx, msg) => {
    const run: Run = { name: msg.name, start: Date.now() };
    this.runs.push(run);
    const n = (this.runningByName.get(msg.name) ?? 0) + 1;
    this.runningByName.set(msg.name, n);
    this.maxRunningPerKey = Math.max(this.maxRunningPerKey, n);
    try {
      if (msg.name.startsWith('dup-') && this.runs.filter((r) => r.name === msg.name).length === 1)
        await this.gate;
      if (msg.name.startsWith('wait-')) return this.end(run, 'requeue', requeueAfter(30, 'waiting for host'));
      if (msg.name.startsWith('bad-'))
        return this.end(run, 'terminal', terminal('InvalidConfiguration', 'bad selector'));
      if (msg.name.startsWith('flaky-') && !this.failedOnce.has(msg.name)) {
        this.failedOnce.add(msg.name);
        throw new TransientError('conflict, try again');
      }
      if (msg.name.startsWith('down-')) throw new TransientError('API down');
      if (msg.name.startsWith('outage-') && Date.now() < this.outageUntil)
        throw new TransientError('API down');
      return this.end(run, 'done', done());
    } catch (e) {
      run.end = Date.now();
      run.outcome = 'threw';
      throw e;
    } finally {
      this.runningByName.set(msg.name, this.runningByName.get(msg.name)! - 1);
    }
  };

  private end<T>(run: Run, outcome: Run['outcome'], v: T): T {
    run.end = Date.now();
    run.outcome = outcome;
    return v;
  }

  open(): void {
    this.gateOpen();
  }

  of(name: string): Run[] {
    return this.runs.filter((r) => r.name === name);
  }
}

const msg = (name: string, over: Partial<MessageEnvelope> = {}) =>
  envelope({ name, uid: `uid-${name}`, resourceVersion: '1', ...over });
const body = (name: string, over: Partial<MessageEnvelope> = {}) => JSON.stringify(msg(name, over));
const fast: Limits = { maxReceiveCount: 3, retryBackoffSeconds: () => 0 };

export function runtimeContract(opts: ContractOptions): void {
  const skipped = new Map<string, string>();
  for (const s of opts.skip ?? []) for (const t of s.tests) skipped.set(t, s.reason);
  const test = (name: string, fn: () => Promise<void>, timeout = 60_000) => {
    const why = skipped.get(name);
    if (why) it.skip(`${name} (skipped: ${why})`, fn);
    else it(name, fn, timeout);
  };

  describe(`runtime contract: ${opts.name}`, () => {
    let h: RuntimeHarness | undefined;
    let script: Script;
    const start = async (limits: Limits = { maxReceiveCount: 12 }) => {
      script = new Script();
      h = opts.make();
      await h.start({ selectHost: script.core }, limits);
      return h;
    };
    afterEach(async () => {
      await h?.stop();
      h = undefined;
    });
    const outcomesOf = (name: string) => h!.outcomes.filter((o) => o.name === name).map((o) => o.kind);

    test(TESTS.done, async () => {
      const rt = await start();
      await rt.deliver([{ body: body('ok-1'), group: 'g-1' }]);
      await until(() => outcomesOf('ok-1').length === 1);
      await until(async () => (await rt.inTransport()) === 0);
      expect(outcomesOf('ok-1')).toEqual(['done']);
      expect(script.of('ok-1')).toHaveLength(1);
      expect(await rt.deadLetters()).toEqual([]);
    });

    test(TESTS.requeue, async () => {
      const rt = await start();
      await rt.deliver([{ body: body('wait-1'), group: 'g-1' }]);
      await until(() => outcomesOf('wait-1').length === 1);
      expect(outcomesOf('wait-1')).toEqual(['requeue']);
      await until(async () => (await rt.requeuesScheduled()) === 1);
      // The requeue waits for its 30 s elsewhere: the message itself is acknowledged.
      await until(async () => (await rt.inTransport()) === 0);
      expect(script.of('wait-1')).toHaveLength(1);
    });

    test(TESTS.retry, async () => {
      const rt = await start();
      await rt.deliver([{ body: body('flaky-1'), group: 'g-1' }]);
      await until(() => outcomesOf('flaky-1').includes('done'));
      expect(outcomesOf('flaky-1')).toEqual(['retry', 'done']);
      const [failed, retried] = script.of('flaky-1');
      // Not sooner than the first receive's backoff (1 s; a little slack for timer granularity).
      expect(retried!.start - failed!.end!).toBeGreaterThanOrEqual(900);
      await until(async () => (await rt.inTransport()) === 0);
      expect(await rt.deadLetters()).toEqual([]);
    });

    test(TESTS.terminal, async () => {
      const rt = await start();
      await rt.deliver([{ body: body('bad-1'), group: 'g-1' }]);
      await until(() => outcomesOf('bad-1').length === 1);
      await until(async () => (await rt.inTransport()) === 0);
      expect(outcomesOf('bad-1')).toEqual(['terminal']);
      expect(script.of('bad-1')).toHaveLength(1);
      expect(await rt.deadLetters()).toEqual([]);
    });

    test(TESTS.malformed, async () => {
      const rt = await start();
      const bad = poisons(
        msg('poison'),
        envelope({ function: 'renderData', kind: 'Metal3Data', name: 'd-0' }),
      );
      await rt.deliver([
        { body: body('ok-1'), group: 'g-ok-1' },
        ...bad.map((p, i) => ({ body: p.body, group: `g-${i}` })),
        { body: body('ok-2'), group: 'g-ok-2' },
      ]);
      await until(() => h!.outcomes.length === bad.length + 2, 20_000);
      expect(h!.outcomes.filter((o) => o.kind === 'malformed')).toHaveLength(bad.length);
      expect(outcomesOf('ok-1')).toEqual(['done']);
      expect(outcomesOf('ok-2')).toEqual(['done']);
      expect(script.runs.map((r) => r.name).sort()).toEqual(['ok-1', 'ok-2']);
      const dead = await until(async () => {
        const d = await rt.deadLetters();
        return d.length >= bad.length && d;
      });
      expect(dead).toHaveLength(bad.length);
      for (const p of bad) {
        const d = dead.find((x) => x.body === p.body);
        expect(d, `${p.label} should be dead-lettered`).toBeDefined();
        expect(d!.reason, p.label).toMatch(p.reason);
      }
      await until(async () => (await rt.inTransport()) === 0);
    });

    test(TESTS.group, async () => {
      const rt = await start();
      await rt.deliver([
        { body: body('flaky-a'), group: 'G' },
        { body: body('ok-b'), group: 'G' },
        { body: body('ok-c'), group: 'H' },
      ]);
      await until(() => outcomesOf('ok-b').includes('done'), 20_000);
      const inG = script.runs.filter((r) => r.name !== 'ok-c').map((r) => `${r.name}:${r.outcome}`);
      expect(inG).toEqual(['flaky-a:threw', 'flaky-a:done', 'ok-b:done']);
      const [aFailed] = script.of('flaky-a');
      const [b] = script.of('ok-b');
      // ok-b waited for the group's backoff with flaky-a; ok-c (another group) did not.
      expect(b!.start - aFailed!.end!).toBeGreaterThanOrEqual(900);
      expect(outcomesOf('ok-c')).toEqual(['done']);
      await until(async () => (await rt.inTransport()) === 0);
      expect(await rt.deadLetters()).toEqual([]);
    });

    test(TESTS.lastReceive, async () => {
      const rt = await start(fast);
      await rt.deliver([
        { body: body('down-a'), group: 'G' },
        { body: body('ok-b'), group: 'G' },
      ]);
      await until(() => outcomesOf('ok-b').includes('done'), 30_000);
      expect(script.of('down-a')).toHaveLength(fast.maxReceiveCount);
      expect(outcomesOf('ok-b')).toEqual(['done']);
      const dead = await until(async () => {
        const d = await rt.deadLetters();
        return d.length >= 1 && d;
      });
      expect(dead.map((d) => JSON.parse(d.body).name)).toEqual(['down-a']);
      expect(dead[0]!.reason).toMatch(/API down/);
      await until(async () => (await rt.inTransport()) === 0);
      expect(await rt.deadLetters()).toHaveLength(1);
    });

    test(TESTS.outage, async () => {
      // The product's schedule with a budget of 4 receives: 1 + 2 + 4 = 7 s of backoff before the
      // 4th. An outage of 5 s fails at most the first three (ADR 017 makes the same argument
      // for 12 receives and 15 minutes).
      const rt = await start({ maxReceiveCount: 4 });
      script.outageUntil = Date.now() + 5_000;
      await rt.deliver(['outage-a', 'outage-b', 'outage-c'].map((n) => ({ body: body(n), group: 'G' })));
      await until(() => outcomesOf('outage-c').includes('done'), 40_000);
      for (const n of ['outage-a', 'outage-b', 'outage-c']) expect(outcomesOf(n).at(-1)).toBe('done');
      expect(script.of('outage-a').filter((r) => r.outcome === 'threw').length).toBeLessThan(4);
      await until(async () => (await rt.inTransport()) === 0);
      expect(await rt.deadLetters()).toEqual([]);
    }, 60_000);

    test(TESTS.duplicate, async () => {
      const rt = await start();
      // One key in two groups (its own, and a related object's): a transport may hand both out at once.
      await rt.deliver([
        { body: body('dup-1', { resourceVersion: '1' }), group: 'g-1' },
        { body: body('dup-1', { resourceVersion: '2' }), group: 'g-2' },
      ]);
      await until(() => script.of('dup-1').length === 1);
      if (opts.groupsOverlap) {
        // The second delivery is under way and waits for the first: it has not started.
        await until(() => processExclusion.waiting(messageKey(msg('dup-1'))) === 1);
        expect(script.of('dup-1')).toHaveLength(1);
      }
      script.open();
      await until(() => outcomesOf('dup-1').length === 2);
      expect(outcomesOf('dup-1')).toEqual(['done', 'done']);
      expect(script.maxRunningPerKey).toBe(1);
      await until(async () => (await rt.inTransport()) === 0);
    });
  });
}
