/**
 * What a write of a large object costs the server's heap beyond the object: a status write of a
 * Metal3DataTemplate whose status maps have an entry per machine (~1 MB of JSON at 10,000
 * machines, written once per allocation batch). Whatever the write allocates and does not keep
 * is collected, but at 10,000 machines a write ran through several young-generation collections,
 * each moving what the write still held into the old generation, where it waited for a full
 * collection; the pages that collection emptied stay with V8 (its page pool) until a
 * memory-reducing one. A burst of such writes took the server's peak above 1 GiB
 * (docs/benchmarks.md, "Map writes"; ADR 036).
 */
import { request } from 'node:http';
import { Session } from 'node:inspector/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { R } from '../../../shared/api/resources.ts';
import { KubeClient } from '../../../shared/kube/client.ts';
import { loadCrdFiles } from './crds.ts';
import { type ApiServerHandle, startApiServer } from './index.ts';

const ENTRIES = 10_000;
const NS = 'metal3';
const PATH = `/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/${NS}/metal3datatemplates/md-0-template`;

/** The template's status with an entry per machine, the `n`th write's: entry n moved to a new machine. */
function status(n: number): Record<string, unknown> {
  const indexes: Record<string, string> = {};
  const dataNames: Record<string, string> = {};
  for (let i = 0; i < ENTRIES; i++) {
    const machine =
      i === n % ENTRIES ? `md-0-r${n}-${i.toString(36)}` : `md-0-${(i * 7919).toString(36).padStart(5, 'q')}`;
    indexes[String(i)] = machine;
    dataNames[machine] = `md-0-template-${i}`;
  }
  return {
    indexes,
    dataNames,
    lastUpdated: new Date(Date.UTC(2026, 11, 7, 0, 0, n)).toISOString().replace(/\.\d+Z$/, 'Z'),
  };
}

/**
 * A status PUT of a body whose text (without its resourceVersion) is ready as bytes, so the client
 * side allocates next to nothing on the heap; the answer is drained unread.
 */
function put(server: ApiServerHandle, head: Buffer, tail: Buffer): Promise<number> {
  const body = Buffer.concat([head, Buffer.from(String(server.resourceVersion())), tail]);
  return new Promise((ok, fail) => {
    const req = request(
      `${server.url}${PATH}/status?fieldManager=metal3-functions`,
      {
        method: 'PUT',
        headers: {
          authorization: `Bearer ${server.adminToken}`,
          'content-type': 'application/json',
          'content-length': body.length,
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => ok(res.statusCode ?? 0));
        res.on('error', fail);
      },
    );
    req.on('error', fail);
    req.end(body);
  });
}

describe('a status write of a map object with an entry per machine', () => {
  let server: ApiServerHandle;
  beforeAll(async () => {
    server = await startApiServer({ port: 0 });
    const client = KubeClient.fromString(server.kubeconfig());
    const crd = loadCrdFiles().find(
      (c) => c.metadata.name === 'metal3datatemplates.infrastructure.cluster.x-k8s.io',
    );
    await client.create(R.CustomResourceDefinition, crd);
    server.settle();
    await client.create(R.Namespace, { metadata: { name: NS } });
    await client.create(R.Metal3DataTemplate, {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
      kind: 'Metal3DataTemplate',
      metadata: { name: 'md-0-template', namespace: NS },
      spec: { clusterName: 'cluster-0' },
    });
  });
  afterAll(() => server?.stop());

  it('allocates a small multiple of its size: not copies of the object for each step of the write', async () => {
    const writes = 8;
    const bodies = Array.from({ length: writes + 2 }, (_, n) => {
      const text = JSON.stringify({
        apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
        kind: 'Metal3DataTemplate',
        metadata: { name: 'md-0-template', namespace: NS, resourceVersion: '@RV@' },
        spec: { clusterName: 'cluster-0' },
        status: status(n),
      });
      const [head, tail] = text.split('@RV@') as [string, string];
      return { head: Buffer.from(head), tail: Buffer.from(tail), bytes: text.length };
    });
    // Two writes first: the object has its status and its status manager's fields, code is compiled.
    for (const b of bodies.slice(0, 2)) expect(await put(server, b.head, b.tail)).toBe(200);

    const session = new Session();
    session.connect();
    await session.post('HeapProfiler.enable');
    // Every allocation sampled, also what young- and old-generation collections took back since.
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 4096,
      includeObjectsCollectedByMinorGC: true,
      includeObjectsCollectedByMajorGC: true,
    });
    for (const b of bodies.slice(2)) expect(await put(server, b.head, b.tail)).toBe(200);
    const { profile } = await session.post('HeapProfiler.stopSampling');
    session.disconnect();
    let allocated = 0;
    const sum = (node: typeof profile.head): void => {
      allocated += node.selfSize;
      for (const c of node.children) sum(c);
    };
    sum(profile.head);
    const perWrite = allocated / writes;
    const bodyBytes = bodies[2]!.bytes;
    // Measured (bytes allocated a write over the body's 543 KB, under vitest): 105x before (copies
    // of the body and of the status it replaces, CEL rule walks of a schema without rules, a path
    // and an entry array per map entry in validation and pruning, the managedFields sets parsed
    // again, the duplicate-key scan's sets, the answer flattened into a copy); ~48x after (the
    // body's text and parse, the status manager's fieldsV1 parsed again: lru.ts keeps no set that
    // large, ownership, the answer).
    expect(perWrite / bodyBytes).toBeLessThan(70);
  });
});
