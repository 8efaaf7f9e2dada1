/**
 * A quiet watch across the server's compactions (ADR 023): the embedded server, like the
 * kube-apiserver's cacher, ends a watch at its timeout with a last bookmark carrying the current
 * revision, so a kind nobody writes resumes from a revision the window still covers, and the
 * relay's watcher does not re-list it. Periodic bookmarks are a minute apart here (the cacher's
 * frequency), longer than the test: only the last bookmark can move the quiet watch forward.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResourceWatcher } from '../../../functions/relay/watcher.ts';
import { envelopeOf, R } from '../../../shared/api/resources.ts';
import type { WatchEvent } from '../../../shared/kube/client.ts';
import { ObjectStore } from '../../../shared/routing/cache.ts';
import { startTestCluster, type TestCluster } from '../../helpers/cluster.ts';
import { eventually } from '../../helpers/wait.ts';

const NS = 'metal3';
/** Short, so compactions pass during the test; each compacts to what the previous one recorded. */
const COMPACTION_INTERVAL_MS = 1_500;
let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startTestCluster({
    bookmarkIntervalMs: 60_000,
    compactionIntervalMs: COMPACTION_INTERVAL_MS,
  });
});
afterAll(async () => {
  await cluster?.stop();
});

/** How a watch from `resourceVersion` starts: its first event's type and Status code. */
async function resumeFrom(resourceVersion: string): Promise<{ type: string; code: unknown }> {
  return new Promise((resolve, reject) => {
    let ctl: AbortController | undefined;
    let first = true;
    const onEvent = (ev: WatchEvent) => {
      if (!first) return;
      first = false;
      ctl?.abort();
      resolve({ type: ev.type, code: ev.object.code });
    };
    cluster.client
      .watch(R.Metal3Machine, NS, { resourceVersion, timeoutSeconds: 1 }, onEvent, () => {
        if (first) resolve({ type: 'END', code: undefined });
      })
      .then((c) => {
        ctl = c;
        if (!first) c.abort();
      }, reject);
  });
}

describe('relay watcher: a quiet kind across compactions', () => {
  it('reconnects from the last bookmark at each watch timeout and never re-lists', async () => {
    await cluster.client.create(envelopeOf(R.Metal3Machine), {
      metadata: { name: 'quiet', namespace: NS },
      spec: {},
    });
    const w = new ResourceWatcher({
      client: cluster.client,
      kind: 'Metal3Machine',
      namespace: NS,
      store: new ObjectStore(),
      onEvent: () => {},
      resyncMs: 0,
      watchTimeoutSeconds: 1,
    });
    await w.start();
    try {
      const listedAt = w.resourceVersion;
      // Other objects change (the revision moves, the compactor ticks on writes) while the
      // machine watch stays quiet, until the window has left the list's revision behind.
      let i = 0;
      await eventually(
        async () => {
          await cluster.client.create(R.BareMetalHost, {
            metadata: { name: `busy-${i++}`, namespace: NS },
            spec: {},
          });
          const resume = await resumeFrom(listedAt);
          return resume.type === 'ERROR' && resume.code === 410 && w.counts.watches >= 3 ? true : undefined;
        },
        'the list revision compacted away and the watch reconnected',
        60_000,
      );
      // Two more reconnects, both after the compaction.
      const watches = w.counts.watches;
      await eventually(
        () => (w.counts.watches >= watches + 2 ? true : undefined),
        'two more watches',
        10_000,
      );
      expect(w.relistsByCause).toEqual({ start: 1, gone: 0, error: 0 });
      expect(w.counts.gones).toBe(0);
      expect(Number(w.resourceVersion)).toBeGreaterThan(Number(listedAt));
    } finally {
      await w.stop();
    }
  });
});
