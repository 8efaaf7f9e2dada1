/**
 * Malformed messages, mixed into one batch with good ones, through the dispatch core every runtime
 * wraps, with the real cores and the embedded API server (that each runtime dead-letters what
 * dispatch calls malformed, with its reason, is the runtime contract suite's part:
 * test/integration/runtimes/):
 *   - not JSON, wrong schema, unknown function, unknown kind, oversized, a message for another
 *     function: each is malformed with its reason, and no core runs for it;
 *   - a message naming an object that does not exist is done and writes nothing;
 *   - a machine with bad input gets its terminal error on the object;
 *   - no batch-mate suffers: the good machine gets its host;
 *   - nothing partial: the only BareMetalHost writes are those of the good machine's host.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FUNCTIONS } from '../../bin/function-table.ts';
import { createSampleHosts } from '../../infra/local/sim/bmo.ts';
import { envelopeOf, R } from '../../shared/api/resources.ts';
import type { ReconcileContext } from '../../shared/reconcile/context.ts';
import { dispatch } from '../../shared/runtimes/dispatch.ts';
import { startTestCluster, type TestCluster } from '../helpers/cluster.ts';
import { createCluster, createMachinePair } from '../helpers/hosts.ts';
import { poisons } from '../helpers/poisons.ts';
import { envelopeFor, makeCtx, NS, statusOf, writes } from './harness.ts';

let tc: TestCluster;
let ctx: ReconcileContext;

beforeAll(async () => {
  tc = await startTestCluster();
  ctx = makeCtx(tc.client);
  await createCluster(tc.client);
  await createSampleHosts(tc.client, NS, 4);
});
afterAll(async () => {
  await tc?.stop();
});

const machineMsg = (name: string) => JSON.stringify(envelopeFor('selectHost', R.Metal3Machine, name));

/** The good machine holds exactly one host; the bad one failed terminally and holds none. */
async function expectMachines(good: string, bad: string): Promise<string> {
  const g = await tc.client.get(envelopeOf(R.Metal3Machine), NS, good);
  const hostKey = g?.metadata.annotations?.['metal3.io/BareMetalHost'];
  expect(hostKey, `${good} should hold a host`).toBeDefined();
  const host = await tc.client.get(R.BareMetalHost, NS, hostKey!.split('/')[1]!);
  expect((host?.spec as { consumerRef?: { name?: string } } | undefined)?.consumerRef?.name).toBe(good);
  expect((host?.spec as { image?: { url?: string } } | undefined)?.image?.url).toBeTruthy();
  const b = await tc.client.get(envelopeOf(R.Metal3Machine), NS, bad); // it fails its schema
  expect(statusOf(b)).toMatchObject({ failureReason: 'InvalidConfiguration' });
  expect(String(statusOf(b).failureMessage)).toMatch(/image\.checksum/);
  expect(b?.metadata.annotations?.['metal3.io/BareMetalHost']).toBeUndefined();
  return hostKey!.split('/')[1]!;
}

function expectOnlyHostWrites(hostName: string): void {
  const hostWrites = writes(tc.server.log, ['baremetalhosts']);
  expect(hostWrites.length).toBeGreaterThan(0);
  expect(hostWrites.filter((w) => w.name !== hostName).map((w) => `${w.verb} ${w.name}`)).toEqual([]);
  // The message naming a machine that does not exist read it once and wrote nothing about it.
  expect(tc.server.log.entries.filter((e) => e.name === 'ghost' && e.verb !== 'get')).toEqual([]);
}

describe('a batch mixing good and malformed messages', () => {
  it('poison is malformed with its reason before any core runs, bad input terminal on the object, batch-mates succeed', async () => {
    await createMachinePair(tc.client, 'good-l');
    await createMachinePair(tc.client, 'bad-l', {
      m3mSpec: { image: { url: 'http://172.22.0.1/node.img' } },
    });
    const bad = poisons(
      envelopeFor('selectHost', R.Metal3Machine, 'x'),
      envelopeFor('renderData', R.Metal3Data, 'nodepool-0'),
    );
    tc.server.log.reset();
    // One batch, at once, as a runtime hands its records to dispatch.
    const [good, badInput, ghost, ...poisoned] = await Promise.all(
      [machineMsg('good-l'), machineMsg('bad-l'), machineMsg('ghost'), ...bad.map((p) => p.body)].map(
        (body) => dispatch(FUNCTIONS, ctx, body, { expect: 'selectHost' }),
      ),
    );
    expect(good!.kind).toBe('done');
    expect(badInput).toMatchObject({ kind: 'terminal', reason: 'InvalidConfiguration' });
    expect(ghost!.kind).toBe('done');
    poisoned.forEach((out, i) => {
      expect(out, bad[i]!.label).toMatchObject({
        kind: 'malformed',
        reason: expect.stringMatching(bad[i]!.reason),
      });
    });
    const host = await expectMachines('good-l', 'bad-l');
    expectOnlyHostWrites(host);
  });
});
