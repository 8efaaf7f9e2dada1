/**
 * The built Lambda bundles, each in a fresh Node process as Lambda runs them: built by
 * scripts/build.ts into a temporary folder, loaded, one SQS event handled against the embedded API
 * server over https (RBAC on, so a request without the right credentials fails the record). What
 * the build defers to first use (docs/adr/011-cold-start.md) must still work when used, e.g. the
 * OIDC auth provider (a stand-in that loads client-node's own on the first request), or renderData's
 * YAML writer (a chunk imported on the first render).
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FUNCTION_NAMES, type FunctionName } from '../../events/envelope.ts';
import { type ApiServerHandle, startApiServer } from '../../infra/local/apiserver/index.ts';
import { R } from '../../shared/api/resources.ts';
import { startTestCluster } from '../helpers/cluster.ts';
import {
  allocate,
  createMachine,
  makeCtx,
  NS,
  POOL_1,
  POOL6_1,
  render,
  seedTemplate,
} from '../helpers/data.ts';
import { runNode as node } from '../helpers/node.ts';
import { sqsEventFor } from '../helpers/sqs-event.ts';

const TOKEN = 'lambda-bundle-admin';

/** Loads the bundle (built into `dir`) in a fresh process and hands it one SQS event; prints the response. */
function handleOne(dir: string, fn: FunctionName, name: string, kubeconfig: string, namespace?: string) {
  const event = sqsEventFor(fn, name, namespace);

  const bundle = join(dir, 'lambda', fn, 'index.mjs');
  const script = `const m = await import(${JSON.stringify(bundle)}); console.log(JSON.stringify(await m.handler(${JSON.stringify(event)})));`;
  const { NODE_COMPILE_CACHE: _c, ...env } = process.env;
  return node(['--input-type=module', '-e', script], {
    ...env,
    METAL3FN_KUBECONFIG: kubeconfig,
    NODE_EXTRA_CA_CERTS: '',
    AWS_REGION: 'us-east-1',
    LOG_LEVEL: 'error',
  });
}

// Both builds (scripts/build.ts): the bundles as shipped, and a plain build without the plugins
// that change how dependencies behave, so a fault can be pinned on a plugin (issue 21).
describe.each([
  { build: 'shipped', flags: [] as string[], rewritten: true },
  { build: 'plain', flags: ['--plain'], rewritten: false },
])('the Lambda bundles ($build build), each in a fresh process', ({ flags, rewritten }) => {
  let dir: string;
  let server: ApiServerHandle;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'metal3fn-lambda-'));
    const b = await node(['scripts/build.ts', '--out', dir, ...flags, 'lambda']);
    expect(b.out).not.toContain('build failed');
    expect(b.code).toBe(0);
    server = await startApiServer({ tls: true, rbac: { tokens: {}, adminToken: TOKEN } });
  }, 300_000);

  afterAll(async () => {
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('is the build it says: the narrow-undici stand-in for the Milo parser is there only when shipped', async () => {
    const files = await readdir(join(dir, 'lambda', 'selectHost'), { recursive: true });
    const texts = await Promise.all(
      files
        .filter((f) => f.endsWith('.mjs'))
        .map((f) => readFile(join(dir, 'lambda', 'selectHost', f), 'utf8')),
    );
    expect(texts.some((t) => t.includes('the Milo parser is not in this bundle'))).toBe(rewritten);
  });

  it.each(FUNCTION_NAMES)(
    '%s handles an event over https with a token, and writes its EMF metrics',
    async (fn) => {
      const r = await handleOne(dir, fn, 'absent', server.kubeconfig({ token: TOKEN }));
      expect(r.code, r.out).toBe(0);
      const lines = r.out.trim().split('\n');
      expect(JSON.parse(lines.at(-1)!)).toEqual({ batchItemFailures: [] });
      // Powertools Metrics, loaded from its chunk on the first event: the outcome, as EMF.
      const emf = lines.filter((l) => l.startsWith('{"_aws"')).map((l) => JSON.parse(l));
      expect(emf).toContainEqual(
        expect.objectContaining({ function: fn, outcome: 'done', metal3fn_messages_total: 1 }),
      );
    },
  );

  it('a bad setting fails the INIT: loading the bundle throws, naming it, and no record runs', async () => {
    const bundle = join(dir, 'lambda', 'selectHost', 'index.mjs');
    const { NODE_COMPILE_CACHE: _c, ...env } = process.env;
    const r = await node(
      ['--input-type=module', '-e', `await import(${JSON.stringify(bundle)}); console.log('loaded');`],
      {
        ...env,
        AWS_REGION: 'us-east-1',
        SAFETY_REQUEUE_SECONDS: '-1',
      },
    );
    expect(r.code).not.toBe(0);
    expect(r.out).toContain("SAFETY_REQUEUE_SECONDS='-1': expected a whole number of seconds ≥ 1");
    expect(r.out).not.toContain('loaded');
  });

  it('a wrong token fails the record (the check above means something)', async () => {
    const r = await handleOne(dir, 'renderData', 'absent', server.kubeconfig({ token: 'wrong' }));
    expect(r.code, r.out).toBe(0);
    expect(JSON.parse(r.out.trim().split('\n').at(-1)!)).toEqual({
      batchItemFailures: [{ itemIdentifier: 'm-1' }],
    });
  });

  it('renderData renders in the bundle, byte-identical to the sources (yaml loaded on first render)', async () => {
    const tc = await startTestCluster({ tls: true, rbac: { tokens: {}, adminToken: TOKEN } });
    try {
      const ctx = makeCtx(tc.client);
      for (const p of [POOL_1, POOL6_1]) await tc.client.create(R.IPPool, p);
      await tc.client.create(R.Metal3DataTemplate, seedTemplate('nodepool-1'));
      await createMachine(tc.client, 'worker-a', 'nodepool-1');
      // Up to the render: the Metal3Data, its IPClaims (a first renderData run) and their addresses.
      await allocate(ctx, R.Metal3DataClaim, 'worker-a');
      expect((await render(ctx, 'nodepool-1-0')).kind).toBe('requeue');
      for (const c of ['nodepool-1-0-pool-1', 'nodepool-1-0-pool6-1']) await allocate(ctx, R.IPClaim, c);

      const r = await handleOne(
        dir,
        'renderData',
        'nodepool-1-0',
        tc.server.kubeconfig({ token: TOKEN }),
        NS,
      );
      expect(r.code, r.out).toBe(0);
      expect(JSON.parse(r.out.trim().split('\n').at(-1)!)).toEqual({ batchItemFailures: [] });
      const secrets = ['worker-a-metadata-0', 'worker-a-networkdata-0'];
      const fromBundle = await Promise.all(secrets.map((n) => tc.client.get(R.Secret, NS, n)));
      expect(fromBundle.every(Boolean)).toBe(true);
      // The same Secrets rendered by the sources in this process.
      for (const n of secrets) await tc.client.delete(R.Secret, NS, n);
      expect(await render(ctx, 'nodepool-1-0')).toMatchObject({ kind: 'done' });
      const fromSources = await Promise.all(secrets.map((n) => tc.client.get(R.Secret, NS, n)));
      expect(fromBundle.map((s) => s!.data)).toEqual(fromSources.map((s) => s!.data));
    } finally {
      await tc.stop();
    }
  });

  it('authenticates with an OIDC id-token (the provider is loaded on first use)', async () => {
    const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const idToken = `${b64({ alg: 'none' })}.${b64({ exp: Math.floor(Date.now() / 1000) + 3600 })}.sig`;
    await server.stop();
    server = await startApiServer({ tls: true, rbac: { tokens: {}, adminToken: idToken } });
    const kubeconfig = server
      .kubeconfig({ token: idToken })
      .replace(
        `    token: ${idToken}\n`,
        [
          '    auth-provider:',
          '      name: oidc',
          '      config:',
          `        id-token: ${idToken}`,
          '        client-id: metal3fn',
          '        idp-issuer-url: https://issuer.invalid',
          '',
        ].join('\n'),
      );
    expect(kubeconfig).toContain('name: oidc');
    expect(kubeconfig).not.toContain(`\n    token: ${idToken}`);
    const r = await handleOne(dir, 'reconcileCluster', 'absent', kubeconfig);
    expect(r.code, r.out).toBe(0);
    expect(JSON.parse(r.out.trim().split('\n').at(-1)!)).toEqual({ batchItemFailures: [] });
  });
});
