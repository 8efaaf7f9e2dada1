/**
 * An SQS endpoint for tests and local runs, real wherever possible:
 *   1. an endpoint the user names (`--sqs-endpoint` / AWS_ENDPOINT_URL_SQS): used as is;
 *   2. LocalStack through testcontainers (`SQS_TEST_BACKEND=localstack`: required, an error without
 *      a container runtime; `=auto`: when a container runtime answers, else 3);
 *   3. fauxqs in-process on 127.0.0.1 (port 0): the default (`SQS_TEST_BACKEND` unset or `fauxqs`),
 *      so `npm start` never waits for a container or for testcontainers to load. Its FIFO receives
 *      are made Amazon SQS's (./fauxqs-fifo.ts); `SQS_FAUXQS=plain` runs it as published.
 * The probe never hangs: a dynamic import in try/catch, then the runtime check raced against 5 s.
 */
import { fauxqsStoresAsSqs } from './fauxqs-fifo.ts';

export interface LocalSqs {
  endpoint: string;
  /** Which backend answers: for logs and for tests that skip what a backend cannot do. */
  backend: 'fauxqs' | 'localstack' | 'external';
  /** fauxqs only: its FIFO receives as Amazon SQS's (`sqs`) or as published (`plain`). */
  fauxqs?: FauxqsFifo | undefined;
  stop(): Promise<void>;
}

/**
 * How the embedded fauxqs hands out FIFO messages: `sqs`, as many of a group as a receive asks for,
 * in order, as Amazon SQS (./fauxqs-fifo.ts); `plain`, fauxqs 2.4.1 as published, one per group.
 */
export type FauxqsFifo = 'sqs' | 'plain';

export type SqsBackendSetting = 'fauxqs' | 'localstack' | 'auto';

export interface StartLocalSqsOptions {
  /** An endpoint to use as is (wins over everything). */
  endpoint?: string | undefined;
  /** Default: SQS_TEST_BACKEND, else fauxqs. */
  backend?: SqsBackendSetting | undefined;
  /** Default: SQS_FAUXQS, else `sqs`. */
  fauxqs?: FauxqsFifo | undefined;
}

export type SqsBackendChoice =
  | { kind: 'external'; endpoint: string }
  | { kind: 'localstack'; required: boolean }
  | { kind: 'fauxqs' };

/**
 * Which backend to start (pure): a named endpoint wins, then the option, then SQS_TEST_BACKEND;
 * an unknown SQS_TEST_BACKEND is an error naming the accepted values.
 */
export function chooseSqsBackend(
  opts: StartLocalSqsOptions,
  env: Record<string, string | undefined> = process.env,
): SqsBackendChoice {
  const endpoint = opts.endpoint ?? env.AWS_ENDPOINT_URL_SQS;
  if (endpoint) return { kind: 'external', endpoint };
  const raw = opts.backend ?? (env.SQS_TEST_BACKEND || undefined) ?? 'fauxqs';
  if (raw === 'fauxqs') return { kind: 'fauxqs' };
  if (raw === 'localstack') return { kind: 'localstack', required: true };
  if (raw === 'auto') return { kind: 'localstack', required: false };
  throw new Error(`SQS_TEST_BACKEND must be fauxqs, localstack or auto, not '${raw}'`);
}

/** fauxqs's FIFO receives (pure): the option, then SQS_FAUXQS, else `sqs`; an unknown value is an error. */
export function chooseFauxqsFifo(
  opts: StartLocalSqsOptions,
  env: Record<string, string | undefined> = process.env,
): FauxqsFifo {
  const raw = opts.fauxqs ?? (env.SQS_FAUXQS || undefined) ?? 'sqs';
  if (raw === 'sqs' || raw === 'plain') return raw;
  throw new Error(`SQS_FAUXQS must be sqs or plain, not '${raw}'`);
}

export async function startLocalSqs(opts: StartLocalSqsOptions = {}): Promise<LocalSqs> {
  const choice = chooseSqsBackend(opts);
  if (choice.kind === 'external')
    return { endpoint: choice.endpoint, backend: 'external', stop: async () => {} };
  if (choice.kind === 'localstack') {
    const probe = await probeContainerRuntime();
    if (probe.available) return startLocalstack();
    if (choice.required) throw new Error(`SQS_TEST_BACKEND=localstack, but ${probe.reason}`);
  }
  return startFauxqsLoopback(chooseFauxqsFifo(opts));
}

/**
 * fauxqs bound to the loopback interface only (its startFauxqs() listens on 0.0.0.0), its FIFO
 * receives Amazon SQS's unless `fifo` is `plain`.
 */
export async function startFauxqsLoopback(fifo: FauxqsFifo = 'sqs'): Promise<LocalSqs> {
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
  const app = buildApp({
    logger: false,
    ...(fifo === 'sqs' ? { stores: await fauxqsStoresAsSqs() } : {}),
  });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    endpoint: address,
    backend: 'fauxqs',
    fauxqs: fifo,
    stop: async () => {
      await app.close();
    },
  };
}

type Testcontainers = typeof import('testcontainers');

export type ContainerRuntimeProbe = { available: true } | { available: false; reason: string };

const PROBE_TIMEOUT_MS = 5_000;

/**
 * Whether testcontainers finds a container runtime (Docker, Podman, …), with the reason when not.
 * testcontainers is a devDependency: the bundled CLI has none, which is a reason too.
 */
export async function probeContainerRuntime(): Promise<ContainerRuntimeProbe> {
  let tc: Testcontainers;
  try {
    // The name in a variable: the bundler must not pull testcontainers into the CLI bundle.
    const name = 'testcontainers';
    tc = (await import(name)) as Testcontainers;
  } catch (e) {
    return { available: false, reason: `testcontainers cannot be loaded (${(e as Error).message})` };
  }
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(
      () => resolve(`no container runtime answered within ${PROBE_TIMEOUT_MS / 1000} s`),
      PROBE_TIMEOUT_MS,
    );
  });
  try {
    const failure = await Promise.race([
      tc.getContainerRuntimeClient().then(
        () => undefined,
        (e: unknown) => `no container runtime answered (${(e as Error).message})`,
      ),
      timeout,
    ]);
    return failure === undefined ? { available: true } : { available: false, reason: failure };
  } finally {
    clearTimeout(timer);
  }
}

/** The LocalStack image: pinned, so a run is reproducible. */
export const LOCALSTACK_IMAGE = 'localstack/localstack:4.4';

async function startLocalstack(): Promise<LocalSqs> {
  const name = '@testcontainers/localstack';
  const { LocalstackContainer } = (await import(name)) as typeof import('@testcontainers/localstack');
  const container = await new LocalstackContainer(LOCALSTACK_IMAGE).start();
  return {
    endpoint: container.getConnectionUri(),
    backend: 'localstack',
    stop: async () => {
      await container.stop();
    },
  };
}
