import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { type ApiServerHandle, startApiServer } from '../../infra/local/apiserver/index.ts';
import { renderCrdFiles } from '../../scripts/gen-crds.ts';
import { resourceFor } from '../../shared/api/index.ts';
import { loadSeed, seedFiles } from '../helpers/seed-fixtures.ts';

// The generated CRDs installed in the embedded API server, and every whole-object seed fixture
// created through it: accepted, and read back with nothing pruned or changed.

const ROOT = join(import.meta.dirname, '..', '..');
let server: ApiServerHandle;

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${server.adminToken}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

// Owners before dependents: the Metal3Data fixture is owned by the Metal3DataTemplate fixture.
const ORDER = ['metal3datatemplate', 'metal3machine', 'metal3cluster'];
const rank = (f: string) => {
  const i = ORDER.findIndex((k) => f.endsWith(`-${k}.yaml`));
  return i < 0 ? ORDER.length : i;
};
const wholeObjects = seedFiles()
  .filter((f) => {
    const o = loadSeed(f);
    return o.apiVersion && o.kind && resourceFor(o.apiVersion, o.kind);
  })
  .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));

function collectionPath(obj: any): string {
  const r = resourceFor(obj.apiVersion, obj.kind)!;
  return `/apis/${r.group}/${r.version}/namespaces/${obj.metadata.namespace}/${r.plural}`;
}

/** Owners the seed examples name but do not define, created minimal so their uid can be filled in. */
const STAND_IN_OWNERS: Record<string, (name: string, namespace: string) => any> = {
  Metal3Cluster: (name, namespace) => ({ spec: {}, metadata: { name, namespace } }),
  Metal3Machine: (name, namespace) => ({
    spec: { customDeploy: { method: 'stand-in' } },
    metadata: { name, namespace },
  }),
};

/**
 * The seeds' ownerReferences carry no uid (the API server requires one): resolve each owner in
 * the object's namespace, creating a stand-in when the seeds do not define it, and fill the uid in.
 */
async function withOwnerUids(obj: any): Promise<any> {
  const refs = obj.metadata.ownerReferences as any[] | undefined;
  if (!refs) return obj;
  const resolved = [];
  for (const ref of refs) {
    const owner = {
      apiVersion: ref.apiVersion,
      kind: ref.kind,
      metadata: { namespace: obj.metadata.namespace },
    };
    const url = `${collectionPath(owner)}/${ref.name}`;
    let got = await call('GET', url);
    if (got.status === 404) {
      const standIn = STAND_IN_OWNERS[ref.kind]!(ref.name, obj.metadata.namespace);
      got = await call('POST', collectionPath(owner), {
        apiVersion: ref.apiVersion,
        kind: ref.kind,
        ...standIn,
      });
      expect(got.status, JSON.stringify(got.body)).toBe(201);
    }
    resolved.push({ ...ref, uid: got.body.metadata.uid });
  }
  return { ...obj, metadata: { ...obj.metadata, ownerReferences: resolved } };
}

describe('seed fixtures applied to the embedded API server with the generated CRDs', () => {
  beforeAll(async () => {
    server = await startApiServer();
    for (const path of renderCrdFiles().keys()) {
      const crd = parse(readFileSync(join(ROOT, path), 'utf8'));
      const res = await call('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
      expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(201);
    }
    server.settle();
    for (const ns of ['metal3']) {
      const res = await call('POST', '/api/v1/namespaces', { metadata: { name: ns } });
      expect(res.status).toBe(201);
    }
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('covers the whole-object fixtures', () => {
    expect(wholeObjects.length).toBeGreaterThanOrEqual(13);
  });

  it.each(wholeObjects)('%s is created and read back unchanged', async (file) => {
    const obj = loadSeed(file);
    const base = collectionPath(obj);
    const created = await call('POST', base, await withOwnerUids(obj));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    let stored = created.body;
    if (obj.status) {
      const updated = await call('PUT', `${base}/${obj.metadata.name}/status`, {
        ...stored,
        status: obj.status,
      });
      expect(updated.status, JSON.stringify(updated.body)).toBe(200);
      stored = updated.body;
    }
    const read = await call('GET', `${base}/${obj.metadata.name}`);
    expect(read.status).toBe(200);
    expect(read.body.spec).toEqual(obj.spec);
    expect(read.body.status).toEqual(obj.status);
    expect(read.body.metadata.labels).toEqual(obj.metadata.labels);
  });

  it('refuses a change to a Metal3DataTemplate spec (immutable)', async () => {
    const tpl = loadSeed('001-metal3datatemplate.yaml');
    const url = `${collectionPath(tpl)}/${tpl.metadata.name}`;
    const current = (await call('GET', url)).body;
    current.spec.metaData.strings[0].value = 'changed';
    const res = await call('PUT', url, current);
    expect(res.status).toBe(422);
    expect(res.body.message).toContain('spec is immutable');
  });

  it('keeps the interface name of every kind of link (nothing pruned), and refuses an invalid one', async () => {
    const tpl = loadSeed('001-metal3datatemplate.yaml');
    tpl.metadata = { name: 'named-links', namespace: 'metal3' };
    const links = tpl.spec.networkData.links;
    links.ethernets[0].name = 'prov0';
    links.bonds[0].name = 'bond0';
    links.vlans = [{ id: 'v5', name: 'vlan5', mtu: 1500, vlanID: 5, vlanLink: links.bonds[0].id }];
    const created = await call('POST', collectionPath(tpl), tpl);
    expect(created.status).toBe(201);
    const read = (await call('GET', `${collectionPath(tpl)}/named-links`)).body;
    expect(read.spec.networkData.links.ethernets[0].name).toBe('prov0');
    expect(read.spec.networkData.links.bonds[0].name).toBe('bond0');
    expect(read.spec.networkData.links.vlans[0].name).toBe('vlan5');
    const bad = loadSeed('001-metal3datatemplate.yaml');
    bad.metadata = { name: 'bad-link-name', namespace: 'metal3' };
    bad.spec.networkData.links.ethernets[0].name = 'a-name-longer-than-15';
    const refused = await call('POST', collectionPath(bad), bad);
    expect(refused.status).toBe(422);
    expect(JSON.stringify(refused.body)).toContain('ethernets[0].name');
  });

  it('refuses an unknown bond mode and a bad operator at the API server', async () => {
    const tpl = loadSeed('001-metal3datatemplate.yaml');
    tpl.metadata = { name: 'bad-bond', namespace: 'metal3' };
    tpl.spec.networkData.links.bonds[0].bondMode = 'lacp';
    const bond = await call('POST', collectionPath(tpl), tpl);
    expect(bond.status).toBe(422);
    expect(JSON.stringify(bond.body)).toContain('bondMode');
    const m3m = loadSeed('001-metal3machine.yaml');
    m3m.metadata.name = 'bad-operator';
    m3m.spec.hostSelector.matchExpressions[0].operator = 'like';
    const op = await call('POST', collectionPath(m3m), m3m);
    expect(op.status).toBe(422);
    expect(JSON.stringify(op.body)).toContain('operator');
  });
});
