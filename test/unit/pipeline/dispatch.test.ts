/**
 * The dispatch core every runtime wraps: results and errors mapped to transport actions, malformed
 * messages refused before any core runs, one delivery of a key at a time in the process, and the
 * object the transport serializes a delivery by handed to the core.
 */
import { describe, expect, it } from 'vitest';
import type { MessageEnvelope } from '../../../events/envelope.ts';
import { type DeliveryReads, SharedReadScopes, type SharedReads } from '../../../shared/kube/shared-reads.ts';
import { messageKey } from '../../../shared/queue/message.ts';
import type { ObjectKey, ReconcileFn } from '../../../shared/reconcile/context.ts';
import { TerminalError, TransientError } from '../../../shared/reconcile/errors.ts';
import { done, requeueAfter } from '../../../shared/reconcile/result.ts';
import { dispatch } from '../../../shared/runtimes/dispatch.ts';
import { KeyedExclusion, processExclusion } from '../../../shared/runtimes/exclusive.ts';
import { PipelineMetrics } from '../../../shared/runtimes/metrics.ts';
import { offlineContext } from '../../helpers/context.ts';
import { envelope } from '../../helpers/messages.ts';
import { until } from '../../helpers/wait.ts';

/** A core whose behaviour is chosen by the message's name. */
function scriptedCore(seen: MessageEnvelope[]): ReconcileFn {
  return async (_ctx, msg) => {
    seen.push(msg);
    if (msg.name.startsWith('fail')) throw new TransientError('try again');
    if (msg.name.startsWith('boom')) throw new Error('unexpected');
    if (msg.name.startsWith('wait')) return requeueAfter(30, 'waiting for host');
    if (msg.name.startsWith('bad-input')) throw new TerminalError('InvalidConfiguration', 'bad selector');
    return done();
  };
}

/** A gate the test opens: a core awaiting it runs until the test says so (no sleeps). */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((r) => {
    open = r;
  });
  return { wait, open };
}

const ctx = offlineContext();

describe('dispatch', () => {
  const seen: MessageEnvelope[] = [];
  const fns = { selectHost: scriptedCore(seen) };

  it('maps results and errors to transport actions', async () => {
    const metrics = new PipelineMetrics();
    const run = (over: Partial<MessageEnvelope>) =>
      dispatch(fns, ctx, JSON.stringify(envelope(over)), { metrics });
    expect((await run({ name: 'ok' })).kind).toBe('done');
    expect(await run({ name: 'wait-1' })).toMatchObject({ kind: 'requeue', afterSeconds: 30 });
    expect(await run({ name: 'bad-input' })).toMatchObject({
      kind: 'terminal',
      reason: 'InvalidConfiguration',
    });
    expect(await run({ name: 'fail-1' })).toMatchObject({ kind: 'retry', errorClass: 'transient' });
    expect(await run({ name: 'boom-1' })).toMatchObject({ kind: 'retry', errorClass: 'unknown' });
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/metal3fn_messages_total\{function="selectHost",outcome="retry"\} 2/);
  });

  it('rejects malformed messages with a reason naming the fault, before any core runs', async () => {
    const before = seen.length;
    expect(await dispatch(fns, ctx, 'not json')).toMatchObject({ kind: 'malformed', reason: /not JSON/ });
    expect(await dispatch(fns, ctx, JSON.stringify({ ...envelope(), name: 'Bad_Name' }))).toMatchObject({
      kind: 'malformed',
      reason: /name/,
    });
    expect(await dispatch(fns, ctx, JSON.stringify(envelope({ function: 'renderData' })))).toMatchObject({
      kind: 'malformed',
      reason: /not served here/,
    });
    expect(await dispatch(fns, ctx, JSON.stringify(envelope()), { expect: 'deprovision' })).toMatchObject({
      kind: 'malformed',
    });
    expect(seen.length).toBe(before);
  });

  it('sends an early requeue message round again instead of running it', async () => {
    const now = 1_000_000;
    const out = await dispatch(fns, ctx, envelope({ reason: 'requeue', notBefore: now + 60_000 }), {
      now: () => now,
    });
    expect(out).toMatchObject({ kind: 'requeue', afterSeconds: 60 });
  });
});

describe('what the core is told it is serialized by', () => {
  const seenBy = async (group: string | undefined): Promise<ObjectKey | undefined> => {
    let by: ObjectKey | undefined;
    const core: ReconcileFn = async (c) => {
      by = c.serializedBy;
      return done();
    };
    await dispatch({ selectHost: core }, ctx, envelope(), group === undefined ? {} : { group });
    return by;
  };

  it('the object whose FIFO group the message came in', async () => {
    expect(await seenBy('Metal3DataTemplate/metal3/nodepool-1')).toEqual({
      kind: 'Metal3DataTemplate',
      namespace: 'metal3',
      name: 'nodepool-1',
    });
    expect(await seenBy('IPPool/metal3/pool-1')).toEqual({
      kind: 'IPPool',
      namespace: 'metal3',
      name: 'pool-1',
    });
  });

  it('nothing where the transport gives no group, or one that names no object', async () => {
    expect(await seenBy(undefined)).toBeUndefined();
    expect(await seenBy('g1')).toBeUndefined();
    // A key longer than a MessageGroupId holds is hashed: it cannot be read back.
    expect(
      await seenBy(`Metal3DataTemplate/metal3/${'t'.repeat(100)}~AbCdEfGhIjKlMnOpQrStUv`),
    ).toBeUndefined();
  });
});

describe('the shared reads a delivery gets', () => {
  it("its function's shared reads, from the time its message was observed; none without them", async () => {
    const asked: Array<[string, number | undefined]> = [];
    /** Shared reads that say which scope and observation each delivery asked for. */
    class Recording extends SharedReadScopes {
      override scope(name: string): SharedReads {
        const inner = super.scope(name);
        return Object.assign(Object.create(inner) as SharedReads, {
          forMessage: (observedAt: number | undefined) => {
            asked.push([name, observedAt]);
            return inner.forMessage(observedAt);
          },
        });
      }
    }
    const got: Array<DeliveryReads | undefined> = [];
    const core: ReconcileFn = async (c) => {
      got.push(c.reads);
      return done();
    };
    const fns = { selectHost: core, renderData: core };
    const shared = { ...ctx, sharedReads: new Recording(ctx.client, { maxAgeMs: 1000 }) };
    await dispatch(fns, shared, JSON.stringify(envelope({ name: 'a', observedAt: 1_700_000_000_000 })));
    await dispatch(
      fns,
      shared,
      JSON.stringify(envelope({ name: 'c', function: 'renderData', kind: 'Metal3Data' })),
    );
    await dispatch(fns, ctx, JSON.stringify(envelope({ name: 'd' })));
    expect(asked).toEqual([
      ['selectHost', 1_700_000_000_000],
      ['renderData', undefined],
    ]);
    expect(got[0]).toBeDefined();
    expect(got[1]).toBeDefined();
    expect(got[2]).toBeUndefined();
  });
});

describe('one delivery of a key at a time in the process', () => {
  it('a second delivery of a running key waits for it; another key runs meanwhile', async () => {
    const g = gate();
    const log: string[] = [];
    let running = 0;
    let overlap = 0;
    const core: ReconcileFn = async (_c, msg) => {
      running++;
      overlap = Math.max(overlap, running);
      log.push(`${msg.name}@${msg.resourceVersion} start`);
      if (msg.resourceVersion === '1') await g.wait;
      log.push(`${msg.name}@${msg.resourceVersion} end`);
      running--;
      return done();
    };
    const fns = { selectHost: core };
    const first = dispatch(fns, ctx, envelope({ name: 'dup', resourceVersion: '1' }));
    await until(() => log.includes('dup@1 start'));
    // The same key delivered again (a redelivery, another group, an HTTP retry) while it runs.
    const second = dispatch(fns, ctx, envelope({ name: 'dup', resourceVersion: '2' }));
    const key = messageKey(envelope({ name: 'dup' }));
    await until(() => processExclusion.waiting(key) === 1);
    // Another object is not held back by it.
    expect(await dispatch(fns, ctx, envelope({ name: 'other', resourceVersion: '3' }))).toMatchObject({
      kind: 'done',
    });
    expect(log).toEqual(['dup@1 start', 'other@3 start', 'other@3 end']);
    g.open();
    expect((await Promise.all([first, second])).map((o) => o.kind)).toEqual(['done', 'done']);
    expect(log.slice(3)).toEqual(['dup@1 end', 'dup@2 start', 'dup@2 end']);
    expect(overlap).toBe(2); // only 'dup' and 'other' together, never 'dup' twice
    expect(processExclusion.keysInFlight).toBe(0);
  });

  it('the same object for two functions is two keys; a failed delivery does not block the next', async () => {
    const exclusion = new KeyedExclusion();
    const g = gate();
    const started: string[] = [];
    const core: ReconcileFn = async (_c, msg) => {
      started.push(msg.function);
      if (msg.function === 'selectHost') await g.wait;
      if (msg.name === 'fail-1') throw new TransientError('try again');
      return done();
    };
    const fns = { selectHost: core, deprovision: core };
    const a = dispatch(fns, ctx, envelope({ name: 'fail-1' }), { exclusion });
    await until(() => started.includes('selectHost'));
    expect(
      await dispatch(fns, ctx, envelope({ function: 'deprovision', name: 'fail-1' }), { exclusion }),
    ).toMatchObject({ kind: 'retry' });
    const b = dispatch(fns, ctx, envelope({ name: 'fail-1', resourceVersion: '9' }), { exclusion });
    await until(() => exclusion.waiting(messageKey(envelope({ name: 'fail-1' }))) === 1);
    expect(started).toEqual(['selectHost', 'deprovision']);
    g.open();
    expect((await a).kind).toBe('retry');
    expect((await b).kind).toBe('retry');
    expect(started).toEqual(['selectHost', 'deprovision', 'selectHost']);
    expect(exclusion.keysInFlight).toBe(0);
  });
});
