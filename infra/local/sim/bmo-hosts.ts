/**
 * Sample BareMetalHosts for tests, benchmarks and `metal3fn dev`: a BMC credentials Secret, a host
 * with bootMACAddress and labels, and its status seeded through /status as a registered host
 * (state available, hardware NICs [{name, mac, ip}] and hostname, powered off).
 */
import type { BareMetalHost } from '../../../shared/api/baremetalhost.ts';
import { R } from '../../../shared/api/resources.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { isAlreadyExists, isConflict } from '../../../shared/kube/errors.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';

export interface SampleHostOptions {
  /** Host name prefix (default `host`): names are `<prefix>-<i>` with i zero-padded to 4 digits. */
  prefix?: string;
  /** First index (default 0). */
  start?: number;
  /** Labels per host. */
  labels?: (i: number) => Record<string, string>;
  /** Create the BMC credentials Secret (default true). */
  bmcSecrets?: boolean;
  /** Initial provisioning state (default `available`). */
  state?: string;
  /** Concurrent creates (default 16). */
  concurrency?: number;
}

export const sampleMac = (i: number): string =>
  `52:54:00:${((i >> 16) & 0xff).toString(16).padStart(2, '0')}:${((i >> 8) & 0xff).toString(16).padStart(2, '0')}:${(i & 0xff).toString(16).padStart(2, '0')}`;

export const sampleIp = (i: number): string => `192.168.${111 + Math.floor(i / 250)}.${(i % 250) + 2}`;

export async function createSampleHosts(
  client: KubeClient,
  ns: string,
  n: number,
  opts: SampleHostOptions = {},
): Promise<KubeObject[]> {
  const prefix = opts.prefix ?? 'host';
  const start = opts.start ?? 0;
  const out: KubeObject[] = new Array(n);
  let next = 0;
  const worker = async () => {
    for (;;) {
      const k = next++;
      if (k >= n) return;
      out[k] = await createOne(
        client,
        ns,
        `${prefix}-${String(start + k).padStart(4, '0')}`,
        start + k,
        opts,
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, opts.concurrency ?? 16) }, worker));
  return out;
}

async function createOne(
  client: KubeClient,
  ns: string,
  name: string,
  i: number,
  opts: SampleHostOptions,
): Promise<KubeObject> {
  const credentialsName = `${name}-bmc-secret`;
  if (opts.bmcSecrets ?? true) {
    try {
      await client.create(R.Secret, {
        metadata: { name: credentialsName, namespace: ns },
        type: 'Opaque',
        data: {
          username: Buffer.from('admin').toString('base64'),
          password: Buffer.from('password').toString('base64'),
        },
      });
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
    }
  }
  const mac = sampleMac(i);
  let host: BareMetalHost;
  try {
    host = await client.create(R.BareMetalHost, {
      metadata: { name, namespace: ns, labels: opts.labels?.(i) ?? {} },
      spec: {
        online: false,
        bootMACAddress: mac,
        bmc: { address: `ipmi://192.168.111.1:${6230 + (i % 1000)}`, credentialsName },
      },
    });
  } catch (e) {
    if (!isAlreadyExists(e)) throw e;
    host = (await client.get(R.BareMetalHost, ns, name))!;
  }
  const status = {
    provisioning: { state: opts.state ?? 'available', ID: `sim-${i}` },
    operationalStatus: 'OK',
    errorMessage: '',
    poweredOn: false,
    hardware: { hostname: name, nics: [{ name: 'eth0', mac, ip: sampleIp(i) }] },
  };
  // The baremetal-operator simulator may already be writing the new host (a 409 on our stale
  // copy): re-read and seed the status again.
  for (let attempt = 0; ; attempt++) {
    try {
      return await client.replaceStatus(R.BareMetalHost, { ...host, status });
    } catch (e) {
      if (!isConflict(e) || attempt >= 20) throw e;
      host = (await client.get(R.BareMetalHost, ns, name)) ?? host;
    }
  }
}
