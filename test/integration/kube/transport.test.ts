/**
 * The HTTP library under our client (shared/kube/transport.ts) over the wire that matters in
 * production: https with the kubeconfig's CA, a bearer token, typed errors with the server's
 * status, request bodies, and many calls on one connection pool.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiServerHandle, startApiServer } from '../../../infra/local/apiserver/index.ts';
import { R } from '../../../shared/api/resources.ts';
import { KubeApiError } from '../../../shared/kube/errors.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { testClient } from '../../helpers/cluster.ts';

let server: ApiServerHandle;
beforeAll(async () => {
  server = await startApiServer({
    tls: true,
    rbac: { tokens: { 'reader-token': { user: 'reader' } }, adminToken: 'admin-token' },
  });
});
afterAll(() => server.stop());

describe('client over https with RBAC', () => {
  it('verifies the server with the kubeconfig CA and authenticates with the token', async () => {
    const admin = testClient(server.kubeconfig({ token: 'admin-token' }));
    const secret: KubeObject = {
      metadata: { name: 's1', namespace: 'default', labels: { a: 'b' } },
      stringData: { k: 'v' },
    };
    const created = await admin.create(R.Secret, secret);
    expect(created.metadata.uid).toBeTruthy();
    const got = await admin.get(R.Secret, 'default', 's1');
    expect(got?.metadata.labels).toEqual({ a: 'b' });
    const patched = await admin.patch(R.Secret, 'default', 's1', { metadata: { labels: { a: 'c' } } });
    expect(patched.metadata.labels).toEqual({ a: 'c' });
    expect(await admin.get(R.Secret, 'default', 'absent')).toBeUndefined();
  });

  it('turns a refusal into a typed error with the status and the server message', async () => {
    const reader = testClient(server.kubeconfig({ token: 'reader-token' }));
    const err = await reader.list(R.Secret, 'default').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect((err as KubeApiError).code).toBe(403);
    expect((err as KubeApiError).message).toContain('reader');
    const anon = testClient(server.kubeconfig({ token: 'wrong' }));
    expect(((await anon.list(R.Secret, 'default').catch((e: unknown) => e)) as KubeApiError).code).toBe(401);
  });

  it('refuses a server whose certificate the kubeconfig does not trust', async () => {
    const other = await startApiServer({ tls: true });
    try {
      // The other server's address with this server's CA: the TLS handshake must fail.
      const yaml = server.kubeconfig({ token: 'admin-token' }).replace(server.url, other.url);
      const client = testClient(yaml);
      const err = await client.get(R.Secret, 'default', 's1').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Error);
      expect(err).not.toBeInstanceOf(KubeApiError);
    } finally {
      await other.stop();
    }
  });

  it('keeps answering through many concurrent calls on one pool', async () => {
    const admin = testClient(server.kubeconfig({ token: 'admin-token' }));
    const names = Array.from({ length: 200 }, (_, i) => `many-${i}`);
    await Promise.all(
      names.map((name) => admin.create(R.ConfigMap, { metadata: { name, namespace: 'default' } })),
    );
    const got = await Promise.all(names.map((n) => admin.get(R.ConfigMap, 'default', n)));
    expect(got.map((o) => o?.metadata.name)).toEqual(names);
    // Counters: every call counted once; a paged list counts each page and every object it returned.
    const before = admin.stats.snapshot();
    const cmBefore = admin.stats.listedByResource.get('configmaps') ?? 0;
    const listed = await admin.list(R.ConfigMap, 'default', { limit: 64 });
    const after = admin.stats.snapshot();
    expect((admin.stats.listedByResource.get('configmaps') ?? 0) - cmBefore).toBe(listed.items.length);
    expect(listed.items.length).toBeGreaterThanOrEqual(200);
    expect(after.listedItems - before.listedItems).toBe(listed.items.length);
    expect(after.requests - before.requests).toBe(Math.ceil(listed.items.length / 64));
    expect(before.requests).toBe(400);
  });
});
