/**
 * ApiServerSource routing cost: objects read from the API per ApiServerSource event, at 1,000 hosts.
 *
 *   node test/bench/run.ts --only apiserversource     (or: node test/bench/apiserversource.ts)
 *
 * A fleet of 1,000 BareMetalHosts in one namespace, 800 provisioned for 800 Metal3Machines and 200
 * available. Each host sends a status heartbeat (`poweredOn` flips, nothing any function reads),
 * delivered as a Resource-mode CloudEvent to the six function Services (one `metal3fn http` app
 * per function, as infra/knative/apiserversource deploys them, each with its own memory). Counted
 * with the routing client's own request counters: objects read = objects returned by LISTs +
 * objects returned by GETs, summed over the six Services, per event. `first` is a host's first
 * heartbeat a Service sees (no previous state: after a cold start), `again` its next one.
 */
import { FUNCTION_NAMES } from '../../events/envelope.ts';
import { apiVersionOf, envelopeOf, R } from '../../shared/api/resources.ts';
import { KubeClient } from '../../shared/kube/client.ts';
import { done } from '../../shared/reconcile/result.ts';
import { createHttpApp } from '../../shared/runtimes/http.ts';
import { powerHeartbeat, resourceUpdateEvent } from '../helpers/apiserversource.ts';
import { startTestCluster } from '../helpers/cluster.ts';
import { clusterContext } from '../helpers/context.ts';
import { runWorkers } from '../helpers/workers.ts';

const NS = 'metal3';

export interface ApiServerSourceBenchOptions {
  hosts?: number;
  /** Hosts with a consumer machine (the rest are available). */
  consumed?: number;
  /** Heartbeats measured (spread evenly over the fleet). */
  events?: number;
}

export async function benchApiServerSource(
  opts: ApiServerSourceBenchOptions = {},
): Promise<Record<string, number>> {
  const hosts = opts.hosts ?? 1000;
  const consumed = opts.consumed ?? Math.round(hosts * 0.8);
  const events = Math.min(opts.events ?? 50, hosts);
  const tc = await startTestCluster();
  try {
    const names = Array.from({ length: hosts }, (_, i) => String(i).padStart(4, '0'));
    await runWorkers(names, 32, async (n) => {
      const i = Number(n);
      const has = i < consumed;
      if (has)
        await tc.client.create(envelopeOf(R.Metal3Machine), {
          metadata: { name: `m-${n}`, namespace: NS },
          spec: {},
        });
      const h = await tc.client.create(envelopeOf(R.BareMetalHost), {
        metadata: { name: `h-${n}`, namespace: NS },
        spec: {
          online: has,
          bootMACAddress: `00:00:00:00:${n.slice(0, 2)}:${n.slice(2)}`,
          ...(has
            ? {
                consumerRef: {
                  apiVersion: apiVersionOf(R.Metal3Machine),
                  kind: 'Metal3Machine',
                  name: `m-${n}`,
                  namespace: NS,
                },
              }
            : {}),
        },
      });
      await tc.client.replaceStatus(envelopeOf(R.BareMetalHost), {
        ...h,
        status: {
          provisioning: { state: has ? 'provisioned' : 'available' },
          operationalStatus: 'OK',
          poweredOn: has,
        },
      });
    });

    // Six Services, one routing client (its counters are what we measure).
    const router = KubeClient.fromString(tc.kubeconfig);
    const apps = FUNCTION_NAMES.map((fn) =>
      createHttpApp({
        fns: { [fn]: async () => done() },
        functions: [fn],
        context: clusterContext(router),
        auth: { allowUnauthenticated: true },
      }),
    );
    const sample = Array.from({ length: events }, (_, k) => names[Math.floor((k * hosts) / events)]!);
    const heartbeat = async (n: string): Promise<void> => {
      const { headers, body } = resourceUpdateEvent(await powerHeartbeat(tc.client, NS, `h-${n}`));
      for (const app of apps) {
        const r = await app.request('/', { method: 'POST', headers, body });
        if (r.status !== 200) throw new Error(`heartbeat of h-${n}: ${r.status} ${await r.text()}`);
      }
    };
    const measure = async () => {
      const s0 = router.stats.snapshot();
      for (const n of sample) await heartbeat(n);
      const s1 = router.stats.snapshot();
      const gets = (s1.byVerb.get ?? 0) - (s0.byVerb.get ?? 0);
      const misses = s1.errors - s0.errors;
      return {
        objects: (s1.listedItems - s0.listedItems + gets - misses) / sample.length,
        requests: (s1.requests - s0.requests) / sample.length,
        lists: ((s1.byVerb.list ?? 0) - (s0.byVerb.list ?? 0)) / sample.length,
      };
    };
    const first = await measure();
    const again = await measure();
    return {
      apiserversourceHosts: hosts,
      apiserversourceObjectsReadPerEventFirst: first.objects,
      apiserversourceObjectsReadPerEvent: again.objects,
      apiserversourceRequestsPerEventFirst: first.requests,
      apiserversourceRequestsPerEvent: again.requests,
      apiserversourceListsPerEvent: again.lists,
    };
  } finally {
    await tc.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(`${JSON.stringify(await benchApiServerSource(), null, 2)}\n`);
}
