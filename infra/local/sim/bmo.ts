/**
 * baremetal-operator simulator (test and dev only; never imported by product code). Watches
 * BareMetalHosts through KubeClient.watch and walks each one through the stages of
 * bmo-stages.ts with configurable delays, writing status through /status with resourceVersion
 * preconditions. When a host starts provisioning it renders meta_data as the real operator does
 * and exposes it as the annotation `sim.metal3.io/meta-data` (JSON); a metaData secret that
 * overrides `uuid` gets a Warning Event (the Node label path `metal3.io/uuid` relies on it).
 */
import { parse as parseYaml } from 'yaml';
import { R } from '../../../shared/api/resources.ts';
import type { KubeClient, WatchEvent } from '../../../shared/kube/client.ts';
import { optimisticUpdate, SKIP } from '../../../shared/kube/optimistic.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { createEventRecorder } from '../../../shared/observability/events.ts';
import type { Logger } from '../../../shared/observability/logger.ts';
import { type BmoDelays, buildMetaData, nextStage, type StageName } from './bmo-stages.ts';

export { createSampleHosts, type SampleHostOptions } from './bmo-hosts.ts';
export type { BmoDelays } from './bmo-stages.ts';

export const META_DATA_ANNOTATION = 'sim.metal3.io/meta-data';

export interface BmoSimulatorOptions {
  client: KubeClient;
  delays?: BmoDelays;
  /** Probability that a provisioning run ends in an error (status.errorMessage). Default 0. */
  errorRate?: number;
  random?: () => number;
  /** Restrict to one namespace (default all). */
  namespace?: string;
  log?: Logger;
}

export interface BmoSimulator {
  stop(): void;
  /** Resolves once the watch is running. */
  ready: Promise<void>;
  /** Resolves when no stage is pending or running (for tests). */
  idle(): Promise<void>;
  /** Stage transitions applied so far, by stage name. */
  stats: Record<string, number>;
}

export function startBmoSimulator(opts: BmoSimulatorOptions): BmoSimulator {
  const { client, log } = opts;
  const delays = opts.delays ?? {};
  const random = opts.random ?? Math.random;
  const events = createEventRecorder(client, 'baremetal-operator-sim', log);
  const pending = new Map<string, { stage: StageName | 'retry'; timer: NodeJS.Timeout }>(); // host key -> scheduled stage
  const running = new Set<Promise<void>>();
  const stats: Record<string, number> = {};
  let stopped = false;
  let watch: AbortController | undefined;
  let idleWaiters: (() => void)[] = [];

  const keyOf = (h: KubeObject) => `${h.metadata.namespace}/${h.metadata.name}`;
  const checkIdle = () => {
    if (pending.size === 0 && running.size === 0) {
      const w = idleWaiters;
      idleWaiters = [];
      for (const f of w) f();
    }
  };

  function schedule(h: KubeObject): void {
    if (stopped) return;
    const key = keyOf(h);
    const stage = nextStage(h, delays, false);
    const cur = pending.get(key);
    if (cur && cur.stage === stage?.name) return; // already scheduled
    if (cur) {
      clearTimeout(cur.timer);
      pending.delete(key);
    }
    if (!stage) {
      checkIdle();
      return;
    }
    const timer = setTimeout(() => {
      pending.delete(key);
      const p = fire(h.metadata.namespace!, h.metadata.name!, stage.name)
        .catch((e: unknown) => {
          log?.warn('bmo sim: stage failed, retrying', {
            host: key,
            stage: stage.name,
            error: (e as Error).message,
          });
          retryLater(h.metadata.namespace!, h.metadata.name!);
        })
        .finally(() => {
          running.delete(p);
          checkIdle();
        });
      running.add(p);
    }, stage.delayMs);
    pending.set(key, { stage: stage.name, timer });
  }

  /** After a failed write (5xx, repeated conflicts): re-read the host and schedule again. */
  function retryLater(ns: string, name: string): void {
    if (stopped) return;
    const key = `${ns}/${name}`;
    const timer = setTimeout(() => {
      pending.delete(key);
      const p = client
        .get(R.BareMetalHost, ns, name)
        .then((h) => {
          if (h) schedule(h);
        })
        .catch(() => retryLater(ns, name))
        .finally(() => {
          running.delete(p);
          checkIdle();
        });
      running.add(p);
    }, 50);
    pending.set(key, { stage: 'retry', timer });
  }

  async function fire(ns: string, name: string, expected: StageName): Promise<void> {
    if (stopped) return;
    const fail = expected === 'provisioned' && (opts.errorRate ?? 0) > 0 && random() < (opts.errorRate ?? 0);
    if (expected === 'provision') await exposeMetaData(ns, name);
    const res = await optimisticUpdate(
      client,
      R.BareMetalHost,
      ns,
      name,
      (h) => {
        const stage = nextStage(h, delays, fail);
        // The host changed since scheduling: its own event schedules what comes next.
        if (!stage || (stage.name !== expected && !(fail && stage.name === 'provision-error'))) return SKIP;
        stage.apply(h);
      },
      { status: true, retries: 10 },
    );
    if (res.outcome === 'updated') {
      const applied = fail ? 'provision-error' : expected;
      stats[applied] = (stats[applied] ?? 0) + 1;
      log?.debug('bmo sim: stage applied', { host: `${ns}/${name}`, stage: applied });
      // Our own write comes back as a watch event; scheduling from the written object is the same.
      schedule(res.object);
    }
  }

  async function exposeMetaData(ns: string, name: string): Promise<void> {
    const h = await client.get(R.BareMetalHost, ns, name);
    if (!h) return;
    const ref = (h.spec as { metaData?: { name?: string; namespace?: string } } | undefined)?.metaData;
    let data: Record<string, unknown> | undefined;
    if (ref?.name) {
      const secret = await client.get(R.Secret, ref.namespace || ns, ref.name);
      const d = (secret?.data ?? {}) as Record<string, string>;
      const b64 = d.metaData ?? d.value;
      if (b64) {
        const parsed = parseYaml(Buffer.from(b64, 'base64').toString('utf8')) as unknown;
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
          data = parsed as Record<string, unknown>;
      }
    }
    const meta = buildMetaData(h, data);
    if (data && Object.hasOwn(data, 'uuid') && String(data.uuid) !== h.metadata.uid) {
      await events.record(
        h,
        'Warning',
        'MetaDataUUIDOverridden',
        `metaData secret ${ref?.name} overrides "uuid" (${String(data.uuid)}): Nodes labelled metal3.io/uuid will not match this host's uid`,
      );
    }
    const json = JSON.stringify(meta);
    await optimisticUpdate(client, R.BareMetalHost, ns, name, (x) => {
      if (x.metadata.annotations?.[META_DATA_ANNOTATION] === json) return SKIP;
      x.metadata.annotations = { ...(x.metadata.annotations ?? {}), [META_DATA_ANNOTATION]: json };
    });
  }

  const onEvent = (ev: WatchEvent) => {
    if (ev.type === 'ADDED' || ev.type === 'MODIFIED') schedule(ev.object);
    else if (ev.type === 'DELETED') {
      const cur = pending.get(keyOf(ev.object));
      if (cur) clearTimeout(cur.timer);
      pending.delete(keyOf(ev.object));
      checkIdle();
    }
  };

  const start = async (): Promise<void> => {
    if (stopped) return;
    watch = await client.watch(R.BareMetalHost, opts.namespace, {}, onEvent, (err) => {
      if (stopped) return;
      if (err) log?.debug('bmo sim: watch ended, restarting', { error: (err as Error).message });
      setTimeout(() => void start().catch(() => {}), err ? 200 : 0);
    });
  };
  const ready = start();

  return {
    ready,
    stats,
    stop() {
      stopped = true;
      watch?.abort();
      for (const p of pending.values()) clearTimeout(p.timer);
      pending.clear();
      checkIdle();
    },
    idle: () =>
      new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        checkIdle();
      }),
  };
}
