/**
 * `npm run build`: esbuild, one minified ESM bundle per function (a Lambda handler for its SQS
 * queue), one for the requeue forwarder, one for the relay and one for the CLI; target node22,
 * each in its own folder so it zips as is. Prints the sizes (the README's table comes from here).
 */
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist');

/** FunctionName -> folder of its core (kept here and in functions/registry.ts). */
const FUNCTIONS: Record<string, string> = {
  selectHost: 'select-host',
  allocateIndex: 'allocate-index',
  renderData: 'render-data',
  resolveProviderID: 'resolve-provider-id',
  deprovision: 'deprovision',
  reconcileCluster: 'metal3-cluster',
};

const lambdaEntry = (fn: string, dir: string) => `
import { SQSClient } from '@aws-sdk/client-sqs';
import { createSqsHandler } from './shared/runtimes/lambda.ts';
import { buildContext } from './shared/runtimes/context.ts';
import { reconcile } from './functions/${dir}/core.ts';
let context;
export const handler = createSqsHandler({
  fns: { ${fn}: reconcile },
  context: () => (context ??= buildContext({ component: '${fn}' })),
  sqs: new SQSClient({}),
  naming: { prefix: process.env.QUEUE_PREFIX },
  requeueUrl: process.env.REQUEUE_QUEUE_URL ?? '',
});
`;

const forwarderEntry = `
import { SQSClient } from '@aws-sdk/client-sqs';
import { createRequeueForwarder } from './shared/runtimes/lambda.ts';
export const handler = createRequeueForwarder({ sqs: new SQSClient({}), naming: { prefix: process.env.QUEUE_PREFIX } });
`;

const common: BuildOptions = {
  bundle: true,
  minify: true,
  platform: 'node',
  target: 'node22',
  format: 'esm',
  sourcemap: 'linked',
  legalComments: 'none',
  // Some dependencies are CommonJS and call require(); give ESM bundles one.
  banner: {
    js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
  },
  logLevel: 'warning',
  // Development-only backends, loaded dynamically when present (never in Lambda bundles).
  external: ['testcontainers', '@testcontainers/localstack', 'fauxqs'],
};

async function main(): Promise<void> {
  await rm(out, { recursive: true, force: true });
  const jobs: { name: string; file: string; options: BuildOptions }[] = [];
  for (const [fn, dir] of Object.entries(FUNCTIONS)) {
    const file = join(out, 'lambda', fn, 'index.mjs');
    jobs.push({
      name: `lambda/${fn}`,
      file,
      options: { stdin: { contents: lambdaEntry(fn, dir), resolveDir: root, loader: 'ts' } },
    });
  }
  jobs.push({
    name: 'lambda/requeueForwarder',
    file: join(out, 'lambda', 'requeueForwarder', 'index.mjs'),
    options: { stdin: { contents: forwarderEntry, resolveDir: root, loader: 'ts' } },
  });
  jobs.push({
    name: 'relay',
    file: join(out, 'relay', 'index.mjs'),
    options: { entryPoints: [join(root, 'functions/relay/main.ts')] },
  });
  jobs.push({
    name: 'cli',
    file: join(out, 'cli', 'metal3fn.mjs'),
    options: { entryPoints: [join(root, 'bin/metal3fn.ts')] },
  });

  const sizes: { name: string; bytes: number }[] = [];
  for (const job of jobs) {
    await mkdir(dirname(job.file), { recursive: true });
    await build({ ...common, ...job.options, outfile: job.file });
    sizes.push({ name: job.name, bytes: (await stat(job.file)).size });
  }
  await writeFile(
    join(out, 'sizes.json'),
    `${JSON.stringify(Object.fromEntries(sizes.map((s) => [s.name, s.bytes])), null, 2)}\n`,
  );
  const w = Math.max(...sizes.map((s) => s.name.length));
  for (const s of sizes)
    process.stdout.write(`${s.name.padEnd(w)}  ${(s.bytes / 1024).toFixed(0).padStart(6)} KiB\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`build failed: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 1;
});
