/**
 * A runtime given a bad setting in its environment refuses to start (ADR 026): the commands exit 2
 * before they connect to anything, naming every bad variable; a Lambda module throws while it loads
 * (the function's INIT fails) instead of running on a default.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runMetal3fnSplit } from '../../helpers/cli.ts';

/** `metal3fn <args>` as a user runs it, with nothing reachable: past its check it would hang or fail otherwise. */
const metal3fn = (args: string[], env: Record<string, string>) =>
  runMetal3fnSplit(args, {
    env: { AWS_ENDPOINT_URL_SQS: 'http://127.0.0.1:9', KUBECONFIG: '/nonexistent', ...env },
  });

describe('the commands refuse to start on a bad environment', () => {
  it('worker: every bad variable named with its value, a secret never shown, exit 2', async () => {
    const r = await metal3fn(['worker', '--functions', 'selectHost'], {
      SAFETY_REQUEUE_SECONDS: '-1',
      LEGACY_PROVIDER_IDS: 'maybe',
      METAL3FN_HMAC_SECRET: 'hmac-secret-value',
      METAL3FN_KUBECONFIG: 'a2NvbmZpZy1zZWNyZXQ=',
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('metal3fn worker: invalid configuration in the environment');
    expect(r.stderr).toContain("LEGACY_PROVIDER_IDS='maybe': expected accept or refuse");
    expect(r.stderr).toContain("SAFETY_REQUEUE_SECONDS='-1': expected a whole number of seconds ≥ 1");
    expect(r.stderr).not.toContain('hmac-secret-value');
    expect(r.stderr).not.toContain('a2NvbmZpZy1zZWNyZXQ=');
    expect(r.stdout).toBe('');
  });

  it('http: a PORT that is not a port', async () => {
    const r = await metal3fn(['http', '--allow-unauthenticated'], { PORT: 'http' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("PORT='http': expected a port number from 0 to 65535");
    expect(r.stderr).not.toContain('listening');
  });

  it('relay: a queue prefix SQS cannot name a queue with', async () => {
    const r = await metal3fn(['relay'], { QUEUE_PREFIX: 'prod.', SHARED_READ_MAX_AGE_MS: '' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("QUEUE_PREFIX='prod.': expected letters, digits, '-' and '_' (at most 40)");
    expect(r.stderr).toContain("SHARED_READ_MAX_AGE_MS='': expected a whole number of milliseconds ≥ 0");
  });

  it('replay --from-dlq (which builds no context) checks too', async () => {
    const r = await metal3fn(['replay', '--from-dlq', 'selectHost'], { CAPM3_FAST_TRACK: 'yes' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('metal3fn replay: invalid configuration in the environment');
    expect(r.stderr).toContain("CAPM3_FAST_TRACK='yes': expected true or false");
  });
});

describe('a Lambda module with a bad environment fails its INIT', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.resetModules();
  });

  it('a function: loading its module throws, naming the variables', async () => {
    vi.stubEnv('MAX_RECEIVE_COUNT', 'twelve');
    vi.stubEnv('VMETAL_JOIN_TOKEN_TTL_SECONDS', '60');
    vi.resetModules();
    const load = import('../../../functions/select-host/lambda.ts');
    // A fresh module graph: its own EnvConfigError class, so matched by name.
    await expect(load).rejects.toMatchObject({ name: 'EnvConfigError' });
    await expect(load).rejects.toThrow("MAX_RECEIVE_COUNT='twelve': expected a whole number from 1 to 1000");
    await expect(load).rejects.toThrow(
      "VMETAL_JOIN_TOKEN_TTL_SECONDS='60': expected a whole number of seconds ≥ 3600",
    );
  });

  it('the requeue forwarder: the same', async () => {
    vi.stubEnv('QUEUE_PREFIX', 'dev/');
    vi.resetModules();
    await expect(import('../../../functions/requeue-forwarder/lambda.ts')).rejects.toThrow(
      "QUEUE_PREFIX='dev/': expected letters, digits, '-' and '_' (at most 40)",
    );
  });

  it('with the same settings valid, both modules load', async () => {
    vi.stubEnv('MAX_RECEIVE_COUNT', '12');
    vi.stubEnv('QUEUE_PREFIX', 'dev-');
    vi.resetModules();
    expect(typeof (await import('../../../functions/select-host/lambda.ts')).handler).toBe('function');
    expect(typeof (await import('../../../functions/requeue-forwarder/lambda.ts')).handler).toBe('function');
  });
});
