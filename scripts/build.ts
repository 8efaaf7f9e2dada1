/**
 * `npm run build`: esbuild, one minified ESM bundle per function (a Lambda handler for its SQS
 * queue), one for the requeue forwarder, one for the relay and one for the CLI; target node22,
 * each in its own folder so it zips as is. Prints the sizes (the README's table comes from here).
 *
 * Lambda bundles are split: `index.mjs` plus `chunks/`, where code used only sometimes (the AWS
 * SDK) waits in chunks loaded on first use. "loaded at start" is what an import of index.mjs
 * parses; cold start time follows it (see test/bench/coldstart.ts). BUILD_METAFILE=1 writes
 * esbuild's metafile next to each bundle, to see what is in it.
 *
 * The CLI bundle is self-contained: the data files it reads (infra/local/assets.ts: CRDs, the
 * sample, the RBAC roles) are copied to `dist/cli/assets/` under their repository paths. The
 * Lambda and relay bundles read no data files; the build fails if one of them would.
 *
 *   node scripts/build.ts [--out DIR] [BUNDLE ...]
 *
 * `prod` is the CLI's production commands alone (bin/metal3fn-prod.ts, the container image's entry:
 * no embedded servers or simulators, no data files).
 *
 * BUNDLE names what to build (`cli`, `prod`, `relay`, `lambda`, `lambda/<function>`; default all) into
 * DIR (default dist/). A full build writes DIR/sizes.json; into dist/ it empties dist/ first,
 * otherwise only the folders it builds are replaced.
 */
import { cp, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { builtinModules, createRequire } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type BuildOptions, build, type Plugin } from 'esbuild';
import { FUNCTION_DIRS } from '../bin/function-table.ts';
import { ASSETS } from '../infra/local/assets.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
/** The folder beside the CLI bundle that holds its data files (infra/local/assets.ts). */
const CLI_ASSETS = 'assets';

/**
 * Node built-ins imported with `import` (ESM) go through `require` instead. An ESM import of a
 * built-in builds its ESM facade, which reads every export: on Node 22 `node:http`'s lazy
 * `WebSocket`/`CloseEvent`/`MessageEvent` getters then load Node's internal undici, ~40 ms of a
 * cold start for classes we never use. Through require the exports are read only when used.
 */
const builtinsViaRequire: Plugin = {
  name: 'builtins-via-require',
  setup(b) {
    const names = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
    b.onResolve({ filter: /^[a-z_:/0-9]+$/ }, (args) => {
      // Static imports only: a dynamic import() of a built-in stays one (it is lazy already, and
      // through require its named exports would be lost on the namespace).
      if (!names.has(args.path) || args.kind !== 'import-statement') return undefined;
      return { path: args.path.replace(/^node:/, ''), namespace: 'builtin-cjs' };
    });
    b.onLoad({ filter: /.*/, namespace: 'builtin-cjs' }, (args) => ({
      contents: lazyBuiltin(args.path),
      loader: 'js',
    }));
  },
};

const requireHere = createRequire(import.meta.url);

/**
 * A built-in whose exports are a plain object loads on the first read of one of them, not at
 * import: a cold start then loads only the built-ins it uses. Node loads most of its own modules
 * (child_process, dgram, fs/promises, crypto, perf_hooks, ...) from source on first require, and a
 * bundle's static imports pulled in every one that anything in it might use (docs/adr/011). The
 * names come from this Node (the build's, the runtime's major); each getter reads the real module,
 * so identities and values are the real ones. A built-in whose exports are a function (assert,
 * events, stream, ...) may be called or extended at import: it is required at once, as before.
 */
function lazyBuiltin(name: string): string {
  const id = JSON.stringify(`node:${name}`);
  const real = requireHere(`node:${name}`) as object;
  if (typeof real !== 'object' || real === null) return `module.exports = require(${id});`;
  const names = Object.getOwnPropertyNames(real).filter((k) => k !== '__proto__');
  return `let real;
const lazy = {};
for (const k of ${JSON.stringify(names)})
  Object.defineProperty(lazy, k, { get: () => (real ??= require(${id}))[k], enumerable: true });
module.exports = lazy;`;
}

/**
 * @kubernetes/client-node's ESM modules have no import-time side effects we rely on (its only one,
 * polyfill.js, sets a `File` global that Node 22 already has), but the package does not say so in
 * its package.json. Saying it here lets esbuild drop the modules we never reach (exec, attach,
 * cp, port-forward, informers, metrics, ...) with the CommonJS dependencies they pull in (ws,
 * tar-fs, socks, ...), instead of bundling, parsing and running all of them at every cold start.
 */
const clientNodeWithoutSideEffects: Plugin = {
  name: 'client-node-side-effect-free',
  setup(b) {
    const inPackage = /[\\/]node_modules[\\/]@kubernetes[\\/]client-node[\\/]dist[\\/]/;
    b.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData === 'side-effects-checked') return undefined;
      if (
        args.path !== '@kubernetes/client-node' &&
        !args.path.startsWith('@kubernetes/client-node/') &&
        !(inPackage.test(args.importer) && args.path.startsWith('.'))
      )
        return undefined;
      const r = await b.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: 'side-effects-checked',
      });
      if (r.errors.length > 0 || !inPackage.test(r.path) || r.path.endsWith('polyfill.js')) return r;
      return { ...r, sideEffects: false };
    });
  },
};

/**
 * What client-node's KubeConfig (config.js) imports for rare configurations waits until one is
 * met, so a cold start neither parses nor runs it (docs/adr/011-cold-start.md):
 *
 * - the Azure, GCP and OIDC auth providers (with jsonpath-plus, openid-client, oauth4webapi): in
 *   their place, classes that answer `isAuthProvider` as the real ones do (the build checks the
 *   real source still says so) and load the real provider on the first `applyAuthentication`;
 * - `socks` (a kubeconfig `proxy-url: socks5://...`): loaded on the first proxied connection;
 * - `socks-proxy-agent` and `hpagent`: used only by `KubeConfig.createAgent`, which only client-node's
 *   WebSocket and protobuf clients reach (exec, attach, port-forward, ...), none in our bundles.
 *   Constructing one throws.
 *
 * Lambda bundles only: they are split, so what is deferred sits in chunks of its own. In a
 * single-file bundle a dynamic import saves nothing, and esbuild then wraps config.js and what it
 * imports, which keeps every generated model of client-node (+330 KB in the relay).
 */
const clientNodeRareParts: Plugin = {
  name: 'client-node-rare-parts',
  setup(b) {
    const configJs = /[\\/]node_modules[\\/]@kubernetes[\\/]client-node[\\/]dist[\\/]config\.js$/;
    const auth: Record<string, { cls: string; isAuthProvider: string }> = {
      './azure_auth.js': {
        cls: 'AzureAuth',
        isAuthProvider: `if (!user || !user.authProvider) {
            return false;
        }
        return user.authProvider.name === 'azure';`,
      },
      './gcp_auth.js': {
        cls: 'GoogleCloudPlatformAuth',
        isAuthProvider: `if (!user || !user.authProvider) {
            return false;
        }
        return user.authProvider.name === 'gcp';`,
      },
      './oidc_auth.js': {
        cls: 'OpenIDConnectAuth',
        isAuthProvider: `if (!user.authProvider) {
            return false;
        }
        return user.authProvider.name === 'oidc';`,
      },
    };
    const unreachable = (names: string[]) =>
      names
        .map(
          (n) =>
            `export class ${n} { constructor() { throw new Error('${n} is not in this bundle: KubeConfig.createAgent (client-node WebSocket/protobuf clients) is never used here'); } }`,
        )
        .join('\n');
    b.onResolve(
      { filter: /^(socks|socks-proxy-agent|hpagent|\.\/(azure|gcp|oidc)_auth\.js)$/ },
      async (args) => {
        if (args.pluginData === 'side-effects-checked' || !configJs.test(args.importer)) return undefined;
        const real = await b.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: 'side-effects-checked',
        });
        if (real.errors.length > 0) return real;
        return { path: real.path, namespace: 'client-node-rare', pluginData: args.path };
      },
    );
    b.onLoad({ filter: /.*/, namespace: 'client-node-rare' }, async (args) => {
      const spec = args.pluginData as string;
      const real = JSON.stringify(args.path);
      let contents: string;
      if (spec === 'socks') {
        contents = `export const SocksClient = {
  createConnection(options, callback) {
    import(${real}).then((m) => m.SocksClient.createConnection(options, callback), (err) => callback(err));
  },
};`;
      } else if (spec === 'socks-proxy-agent') {
        contents = unreachable(['SocksProxyAgent']);
      } else if (spec === 'hpagent') {
        contents = unreachable(['HttpProxyAgent', 'HttpsProxyAgent']);
      } else {
        const { cls, isAuthProvider } = auth[spec]!;
        // The stand-in answers isAuthProvider itself: fail the build if the real one changed.
        const source = await readFile(args.path, 'utf8');
        if (!source.includes(`isAuthProvider(user) {\n        ${isAuthProvider}\n    }`))
          throw new Error(`${args.path}: isAuthProvider is not what the lazy ${cls} stand-in assumes`);
        contents = `export class ${cls} {
  isAuthProvider(user) {
    ${isAuthProvider}
  }
  async applyAuthentication(user, opts) {
    const m = await import(${real});
    this.real ??= new m.${cls}();
    return this.real.applyAuthentication(user, opts);
  }
}`;
      }
      return { contents, loader: 'js', resolveDir: dirname(args.path) };
    });
  },
};

/**
 * client-node imports only `Agent`, `ProxyAgent` and `fetch` from undici, whose CommonJS index
 * requires everything (WebSocket, EventSource, mocks, caches, cookies, interceptors, ...) and so
 * cannot be tree-shaken. Its imports resolve here to an index of just those three, built from the
 * same undici files the package index uses. Undici's experimental Milo HTTP/1 parser (150 KB of
 * inlined WASM, used only when opted into, which client-node never does) is left out; llhttp,
 * undici's default parser, stays.
 *
 * Two parts wait for their first use (docs/adr/011-cold-start.md): `fetch` (client-node's default
 * http library, Watch, ...; our requests go through Dispatcher#request, shared/kube/transport.ts)
 * is a chunk of its own, imported on the first call; the HTTP/2 client (and `node:http2`, ~5 ms
 * to load) runs on the first connection that negotiates h2 (TLS with ALPN), not at start.
 */
const narrowUndici: Plugin = {
  name: 'narrow-undici',
  setup(b) {
    // client-node, and our http library under it (shared/kube/transport.ts: Agent, Dispatcher#request).
    const fromClientNode =
      /[\\/]node_modules[\\/]@kubernetes[\\/]client-node[\\/]|[\\/]shared[\\/]kube[\\/]transport\.ts$/;
    const undiciDir = dirname(fileURLToPath(import.meta.resolve('undici')));
    b.onResolve({ filter: /^undici$/ }, (args) =>
      fromClientNode.test(args.importer) ? { path: 'undici', namespace: 'undici-narrow' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'undici-narrow' }, () => ({
      resolveDir: undiciDir,
      loader: 'js',
      contents: `
const Dispatcher = require('./lib/dispatcher/dispatcher');
Object.assign(Dispatcher.prototype, require('./lib/api'));
exports.Agent = require('./lib/dispatcher/agent');
exports.ProxyAgent = require('./lib/dispatcher/proxy-agent');
let fetchImpl;
exports.fetch = async function fetch(init, options = undefined) {
  fetchImpl ??= (await import('./lib/web/fetch/index.js')).fetch;
  return fetchImpl(init, options).catch((err) => {
    if (err && typeof err === 'object') Error.captureStackTrace(err, exports.fetch);
    throw err;
  });
};
`,
    }));
    // client.js requires './client-h2.js'.
    b.onResolve({ filter: /(^|[\\/])client-h2\.js$/ }, (args) =>
      args.importer.startsWith(undiciDir) && args.namespace !== 'undici-lazy-h2'
        ? { path: join(undiciDir, 'lib/dispatcher/client-h2.js'), namespace: 'undici-lazy-h2' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'undici-lazy-h2' }, (args) => ({
      resolveDir: dirname(args.path),
      loader: 'js',
      // client.js calls connectH2(client, socket) only; this require runs then, not at start.
      contents: `module.exports = function connectH2(client, socket) { return require(${JSON.stringify(args.path)})(client, socket); };`,
    }));
    b.onResolve({ filter: /[\\/]milo[\\/](no-)?simd\.js$/ }, (args) =>
      args.importer.startsWith(undiciDir) ? { path: args.path, namespace: 'undici-no-milo' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'undici-no-milo' }, () => ({
      loader: 'js',
      contents: `throw new Error('undici: the Milo parser is not in this bundle (llhttp is)');`,
    }));
  },
};

/**
 * `import { z } from 'zod'` binds zod's namespace through a re-export, which esbuild cannot shake:
 * every locale (~260 KB) and the JSON-schema converters came along. Our sources import the same
 * namespace module directly (`import * as z`), so only the parts we use are bundled.
 */
const shakableZod: Plugin = {
  name: 'shakable-zod',
  setup(b) {
    const zodExternal = join(dirname(fileURLToPath(import.meta.resolve('zod'))), 'v4/classic/external.js');
    const ours = new RegExp(
      `^${root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}[\\/](?!node_modules[\\/]).*\\.ts$`,
    );
    b.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (!ours.test(args.path)) return undefined;
      const text = await readFile(args.path, 'utf8');
      if (!text.includes("import { z } from 'zod';")) return undefined;
      return {
        contents: text.replaceAll(
          "import { z } from 'zod';",
          `import * as z from ${JSON.stringify(zodExternal)};`,
        ),
        loader: 'ts',
      };
    });
  },
};

/**
 * Every change this build makes to how a dependency behaves is one of the named plugins above, and
 * only through this list: a plain build (`--plain`) bundles the dependencies as published, so a
 * fault can be pinned on a plugin by building both ways (CI runs the Lambda bundle test on both).
 * `clientNodeRareParts` only in split (Lambda) bundles: see its comment.
 */
export function dependencyPlugins(bundle: 'split' | 'single', plain: boolean): Plugin[] {
  if (plain) return [];
  return [
    builtinsViaRequire,
    ...(bundle === 'split' ? [clientNodeRareParts] : []),
    clientNodeWithoutSideEffects,
    narrowUndici,
    shakableZod,
  ];
}

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

export interface BuildBundlesOptions {
  /** Output folder (default dist/ in the repository). */
  out?: string;
  /** A plain build: no plugin that changes how a dependency behaves (see `dependencyPlugins`). */
  plain?: boolean;
  /** Bundles to build: `cli`, `prod`, `relay`, `lambda` or `lambda/<function>` (default all). */
  only?: string[];
}

/** Inputs of a bundle (esbuild metafile paths, relative to the working directory) under infra/local/ or test/. */
export function localModulesIn(inputs: Record<string, unknown>): string[] {
  return Object.keys(inputs)
    .map((f) => relative(root, resolve(f)).split(sep).join('/'))
    .filter((f) => /^(infra\/local|test)\//.test(f));
}

export async function buildBundles(opts: BuildBundlesOptions = {}): Promise<void> {
  const out = resolve(opts.out ?? join(root, 'dist'));
  const only = opts.only?.length ? opts.only : undefined;
  const jobs: { name: string; file: string; options: BuildOptions }[] = [];
  // Each Lambda's entry is its committed functions/<folder>/lambda.ts.
  const entries: Record<string, string> = { requeueForwarder: 'requeue-forwarder' };
  for (const [fn, dir] of Object.entries(FUNCTION_DIRS)) entries[fn] = dir;
  for (const [fn, dir] of Object.entries(entries)) {
    // Split: what a cold start needs is index.mjs and the chunks it imports statically; the
    // rest (the AWS SDK, ...) sits in chunks loaded by import() when first used.
    jobs.push({
      name: `lambda/${fn}`,
      file: join(out, 'lambda', fn, 'index.mjs'),
      options: {
        entryPoints: [{ in: join(root, 'functions', dir, 'lambda.ts'), out: 'index' }],
        outdir: join(out, 'lambda', fn),
        splitting: true,
        chunkNames: 'chunks/[name]-[hash]',
        outExtension: { '.js': '.mjs' },
        plugins: dependencyPlugins('split', opts.plain === true),
      },
    });
  }
  jobs.push({
    name: 'relay',
    file: join(out, 'relay', 'index.mjs'),
    options: { entryPoints: [join(root, 'functions/relay/main.ts')] },
  });
  jobs.push({
    name: 'cli',
    file: join(out, 'cli', 'metal3fn.mjs'),
    // Tells infra/local/assets.ts that it is in the bundle and where its data files are.
    options: {
      entryPoints: [join(root, 'bin/metal3fn.ts')],
      define: { METAL3FN_BUNDLE_ASSETS: JSON.stringify(CLI_ASSETS) },
    },
  });
  jobs.push({
    name: 'prod',
    file: join(out, 'prod', 'metal3fn.mjs'),
    // No source map: its paths are relative to the output folder, so the image's bundle would
    // differ with where it was built (scripts/image.ts builds it in a temporary folder).
    options: { entryPoints: [join(root, 'bin/metal3fn-prod.ts')], sourcemap: false },
  });

  const selected = only
    ? jobs.filter((j) => only.some((o) => j.name === o || j.name.startsWith(`${o}/`)))
    : jobs;
  const unknown = (only ?? []).filter((o) => !jobs.some((j) => j.name === o || j.name.startsWith(`${o}/`)));
  if (unknown.length > 0)
    throw new Error(
      `unknown bundle ${unknown.join(', ')} (one of cli, prod, relay, lambda, lambda/<function>)`,
    );
  // Only the default dist/ is emptied whole (stale bundles go); a folder named with --out may hold
  // other things, so there only the bundles' own folders are replaced.
  if (!only && !opts.out) await rm(out, { recursive: true, force: true });
  else for (const job of selected) await rm(dirname(job.file), { recursive: true, force: true });

  /** bytes: everything shipped (.mjs); startBytes: what an import loads (the entry and its static imports). */
  const sizes: { name: string; bytes: number; startBytes: number }[] = [];
  for (const job of selected) {
    await mkdir(dirname(job.file), { recursive: true });
    const split = job.options.outdir !== undefined;
    const result = await build({
      ...common,
      plugins: dependencyPlugins('single', opts.plain === true),
      ...job.options,
      ...(split ? {} : { outfile: job.file }),
      metafile: true,
    });
    if (job.name === 'cli') {
      for (const a of ASSETS)
        await cp(join(root, a), join(dirname(job.file), CLI_ASSETS, a), { recursive: true });
    } else {
      // A deployed bundle carries no embedded part (API server, simulators, local assets) and no
      // test code: the import rule (ADR 013) keeps them out of the sources, this keeps them out
      // of what ships.
      const local = localModulesIn(result.metafile.inputs);
      if (local.length > 0)
        throw new Error(`${job.name} bundles modules of infra/local/ or test/: ${local.join(', ')}`);
    }
    if (process.env.BUILD_METAFILE) await writeFile(`${job.file}.meta.json`, JSON.stringify(result.metafile));
    const outputs = result.metafile.outputs;
    const key = (f: string) => relative(process.cwd(), f).split(sep).join('/');
    const seen = new Set<string>();
    const walk = (f: string): number => {
      if (seen.has(f) || !outputs[f]) return 0;
      seen.add(f);
      let n = outputs[f].bytes;
      for (const i of outputs[f].imports) if (i.kind === 'import-statement' && !i.external) n += walk(i.path);
      return n;
    };
    const bytes = Object.entries(outputs)
      .filter(([f]) => f.endsWith('.mjs'))
      .reduce((n, [, o]) => n + o.bytes, 0);
    sizes.push({ name: job.name, bytes, startBytes: walk(key(job.file)) || (await stat(job.file)).size });
  }
  if (!only)
    await writeFile(
      join(out, 'sizes.json'),
      `${JSON.stringify(Object.fromEntries(sizes.map((s) => [s.name, { bytes: s.bytes, startBytes: s.startBytes }])), null, 2)}\n`,
    );
  const w = Math.max(...sizes.map((s) => s.name.length));
  const kib = (n: number) => `${(n / 1024).toFixed(0).padStart(6)} KiB`;
  process.stdout.write(`${'bundle'.padEnd(w)}  ${'loaded at start'.padStart(15)}  ${'total'.padStart(10)}\n`);
  for (const s of sizes)
    process.stdout.write(
      `${s.name.padEnd(w)}  ${kib(s.startBytes).padStart(15)}  ${kib(s.bytes).padStart(10)}\n`,
    );
}

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { out: { type: 'string' }, plain: { type: 'boolean' } },
    allowPositionals: true,
    strict: true,
  });
  await buildBundles({
    ...(values.out ? { out: values.out } : {}),
    plain: values.plain === true,
    only: positionals,
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  main(process.argv.slice(2)).catch((e: unknown) => {
    process.stderr.write(`build failed: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  });
