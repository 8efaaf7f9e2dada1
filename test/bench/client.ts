/**
 * The cost of one Kubernetes call by HTTP library (ADR 006): the same request context, built and
 * authenticated by client-node from the kubeconfig, sent through client-node's default library
 * (undici `fetch`) and through ours (shared/kube/transport.ts, undici `request`), on the embedded
 * API server in this process. CPU per GET (client and server together, so the difference is the
 * library's) and wall time per sequential GET; rounds alternate and medians are compared. Also
 * one GET through our whole client (KubeClient.get: the library plus error mapping and counters).
 *
 *   node test/bench/client.ts
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  createConfiguration,
  type HttpLibrary,
  HttpMethod,
  IsomorphicFetchHttpLibrary,
  ServerConfiguration,
} from '@kubernetes/client-node';
import { R } from '../../shared/api/resources.ts';
import { undiciRequestLibrary } from '../../shared/kube/transport.ts';
import { startTestCluster } from '../helpers/cluster.ts';
import { median } from './median.ts';

const N = Number(process.env.BENCH_CLIENT_GETS ?? 1000);
const ROUNDS = 5;

async function measure(get: () => Promise<unknown>): Promise<{ cpuUs: number; wallMs: number }> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < N; i++) await get();
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { cpuUs: (cpu.user + cpu.system) / N, wallMs: wall / N };
}

export async function benchClient(): Promise<Record<string, number>> {
  const tc = await startTestCluster();
  try {
    await tc.client.create(R.Secret, { metadata: { name: 'bench', namespace: 'default' } });
    const kc = tc.client.kc;
    const config = createConfiguration({
      baseServer: new ServerConfiguration(kc.getCurrentCluster()!.server, {}),
      authMethods: { default: kc },
    });
    const path = tc.client.path(R.Secret, 'default', 'bench');
    const via = (lib: HttpLibrary) => async () => {
      const ctx = config.baseServer.makeRequestContext(path, HttpMethod.GET);
      ctx.setHeaderParam('Accept', 'application/json');
      await kc.applySecurityAuthentication(ctx);
      const res = await lib.send(ctx).toPromise();
      return JSON.parse(await res.body.text());
    };
    const ours = via(undiciRequestLibrary);
    const theirs = via(new IsomorphicFetchHttpLibrary());
    const whole = () => tc.client.get(R.Secret, 'default', 'bench');
    await measure(ours);
    await measure(theirs); // warm-up
    const a: { cpuUs: number; wallMs: number }[] = [];
    const b: { cpuUs: number; wallMs: number }[] = [];
    const c: { cpuUs: number; wallMs: number }[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      a.push(await measure(ours));
      b.push(await measure(theirs));
      c.push(await measure(whole));
    }
    const round = (x: number, d = 1) => Number(x.toFixed(d));
    const oursCpu = median(a.map((x) => x.cpuUs));
    const fetchCpu = median(b.map((x) => x.cpuUs));
    return {
      httpRequestLibraryGetCpuUs: round(oursCpu),
      httpFetchLibraryGetCpuUs: round(fetchCpu),
      httpRequestVsFetchCpuRatio: round(oursCpu / fetchCpu, 2),
      httpRequestLibraryGetMs: round(median(a.map((x) => x.wallMs)), 3),
      httpFetchLibraryGetMs: round(median(b.map((x) => x.wallMs)), 3),
      kubeClientGetCpuUs: round(median(c.map((x) => x.cpuUs))),
      kubeClientGetMs: round(median(c.map((x) => x.wallMs)), 3),
    };
  } finally {
    await tc.stop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const r = await benchClient();
  for (const [k, v] of Object.entries(r)) process.stdout.write(`${k.padEnd(36)} ${v}\n`);
}
