/**
 * An SQS endpoint for tests and local runs, real wherever possible:
 *   1. an endpoint the user names (`--sqs-endpoint` / AWS_ENDPOINT_URL_SQS): used as is;
 *   2. LocalStack through testcontainers, when a container runtime answers (SQS_TEST_BACKEND=localstack
 *      forces it, =fauxqs skips the probe);
 *   3. fauxqs in-process on 127.0.0.1 (port 0): the default here, where no container runtime exists.
 * The probe never hangs: a dynamic import in try/catch, then the runtime check raced against 5 s.
 */
export interface LocalSqs {
  endpoint: string;
  /** Which backend answers: for logs and for tests that skip what a backend cannot do. */
  backend: 'fauxqs' | 'localstack' | 'external';
  stop(): Promise<void>;
}

export interface StartLocalSqsOptions {
  /** An endpoint to use as is (wins over everything). */
  endpoint?: string | undefined;
  backend?: 'fauxqs' | 'localstack' | 'auto' | undefined;
}

const PROBE_TIMEOUT_MS = 5_000;

export async function startLocalSqs(opts: StartLocalSqsOptions = {}): Promise<LocalSqs> {
  const endpoint = opts.endpoint ?? process.env.AWS_ENDPOINT_URL_SQS;
  if (endpoint) return { endpoint, backend: 'external', stop: async () => {} };
  const backend = opts.backend ?? (process.env.SQS_TEST_BACKEND as StartLocalSqsOptions['backend']) ?? 'auto';
  if (backend === 'localstack') {
    const ls = await startLocalstack();
    if (!ls) throw new Error('SQS_TEST_BACKEND=localstack but no container runtime answered');
    return ls;
  }
  if (backend === 'auto') {
    const ls = await startLocalstack().catch(() => undefined);
    if (ls) return ls;
  }
  return startFauxqsLoopback();
}

/** fauxqs bound to the loopback interface only (its startFauxqs() listens on 0.0.0.0). */
export async function startFauxqsLoopback(): Promise<LocalSqs> {
  // fauxqs is a devDependency, left out of the bundles: the bundled CLI finds it through Node's
  // module resolution from its own folder (a node_modules beside or above it), or not at all.
  let buildApp: typeof import('fauxqs').buildApp;
  try {
    ({ buildApp } = await import('fauxqs'));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw e;
    throw new Error(
      'no SQS server: the embedded one (the package fauxqs) cannot be loaded; install it where Node ' +
        'finds it from here (npm install fauxqs, beside the bundle or above it), or name a server with ' +
        `--sqs-endpoint URL (AWS_ENDPOINT_URL_SQS). ${(e as Error).message}`,
    );
  }
  // No `host` option: queue URLs then carry the request's own Host (127.0.0.1:PORT), which resolves.
  const app = buildApp({ logger: false });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    endpoint: address,
    backend: 'fauxqs',
    stop: async () => {
      await app.close();
    },
  };
}

/** LocalStack via testcontainers, or undefined when the package or a container runtime is missing. */
async function startLocalstack(): Promise<LocalSqs | undefined> {
  // Module names in variables: neither package is a dependency unless someone installs it.
  const tcName = 'testcontainers';
  const lsName = '@testcontainers/localstack';
  let tc: any;
  let lsMod: any;
  try {
    tc = await import(tcName);
    lsMod = await import(lsName);
  } catch {
    return undefined;
  }
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), PROBE_TIMEOUT_MS);
  });
  try {
    const runtime = await Promise.race([tc.getContainerRuntimeClient().catch(() => undefined), timeout]);
    if (!runtime) return undefined;
  } finally {
    clearTimeout(timer);
  }
  const container = await new lsMod.LocalstackContainer('localstack/localstack:4').start();
  return {
    endpoint: container.getConnectionUri(),
    backend: 'localstack',
    stop: async () => {
      await container.stop();
    },
  };
}
