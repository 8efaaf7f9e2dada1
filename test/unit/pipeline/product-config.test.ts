/**
 * The product configuration every runtime reads from its environment (shared/runtimes/context.ts
 * over the table of shared/runtimes/env.ts, ADR 026): unset is the default; a set value the
 * variable does not accept is an error naming the variable, the value and what is accepted.
 */
import { describe, expect, it } from 'vitest';
import { productConfigFromEnv } from '../../../shared/runtimes/context.ts';
import { EnvConfigError, readEnv } from '../../../shared/runtimes/env.ts';

/** The EnvConfigError `f` throws (fails the test if it throws none, or another error). */
function envError(f: () => unknown): EnvConfigError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(EnvConfigError);
    return e as EnvConfigError;
  }
  throw new Error('expected an EnvConfigError, none thrown');
}

describe('productConfigFromEnv: accepted values', () => {
  it.each([
    [{}, {}],
    [{ SHARED_READ_MAX_AGE_MS: '0' }, { sharedReadMaxAgeMs: 0 }],
    [{ SHARED_READ_MAX_AGE_MS: '250' }, { sharedReadMaxAgeMs: 250 }],
    [
      { LEGACY_PROVIDER_IDS: 'refuse', CAPM3_FAST_TRACK: 'true' },
      { legacyProviderIds: 'refuse', fastTrack: true },
    ],
    [{ METAL3FN_LEGACY_PROVIDER_IDS: 'refuse' }, { legacyProviderIds: 'refuse' }],
    [{ CAPM3_FAST_TRACK: 'false' }, { fastTrack: false }],
    [{ SAFETY_REQUEUE_SECONDS: '30' }, { safetyRequeueSeconds: 30 }],
    [{ VMETAL_JOIN_TOKEN_TTL_SECONDS: '3600' }, { joinTokenTtlSeconds: 3600 }],
    [{ VMETAL_JOIN_TOKEN_TTL_SECONDS: '7200' }, { joinTokenTtlSeconds: 7200 }],
  ])('%j → %j', (env, want) => {
    expect(productConfigFromEnv(env)).toEqual(want);
  });
});

describe('productConfigFromEnv: a set value that is not accepted is an error, never the default', () => {
  it.each([
    [
      { SHARED_READ_MAX_AGE_MS: '-1' },
      "SHARED_READ_MAX_AGE_MS='-1': expected a whole number of milliseconds ≥ 0",
    ],
    [
      { SHARED_READ_MAX_AGE_MS: '1.5' },
      "SHARED_READ_MAX_AGE_MS='1.5': expected a whole number of milliseconds ≥ 0",
    ],
    [
      { SHARED_READ_MAX_AGE_MS: 'soon' },
      "SHARED_READ_MAX_AGE_MS='soon': expected a whole number of milliseconds ≥ 0",
    ],
    [
      { SHARED_READ_MAX_AGE_MS: '' },
      "SHARED_READ_MAX_AGE_MS='': expected a whole number of milliseconds ≥ 0",
    ],
    [{ SAFETY_REQUEUE_SECONDS: '-1' }, "SAFETY_REQUEUE_SECONDS='-1': expected a whole number of seconds ≥ 1"],
    [{ SAFETY_REQUEUE_SECONDS: '0' }, "SAFETY_REQUEUE_SECONDS='0': expected a whole number of seconds ≥ 1"],
    [
      { VMETAL_JOIN_TOKEN_TTL_SECONDS: '60' },
      "VMETAL_JOIN_TOKEN_TTL_SECONDS='60': expected a whole number of seconds ≥ 3600",
    ],
    [
      { VMETAL_JOIN_TOKEN_TTL_SECONDS: '600' },
      "VMETAL_JOIN_TOKEN_TTL_SECONDS='600': expected a whole number of seconds ≥ 3600",
    ],
    [{ LEGACY_PROVIDER_IDS: 'maybe' }, "LEGACY_PROVIDER_IDS='maybe': expected accept or refuse"],
    [
      { METAL3FN_LEGACY_PROVIDER_IDS: 'Accept' },
      "METAL3FN_LEGACY_PROVIDER_IDS='Accept': expected accept or refuse",
    ],
    [{ CAPM3_FAST_TRACK: 'yes' }, "CAPM3_FAST_TRACK='yes': expected true or false"],
  ])('%j is refused', (env, problem) => {
    const err = envError(() => productConfigFromEnv(env));
    expect(err.problems).toEqual([problem]);
    expect(err.message).toContain(problem);
  });
});

describe('readEnv: the whole table', () => {
  it('names every bad variable at once, in one error', () => {
    const env = {
      SAFETY_REQUEUE_SECONDS: '-1',
      CAPM3_FAST_TRACK: 'yes',
      QUEUE_PREFIX: 'prod.',
      MAX_RECEIVE_COUNT: '0',
      LOG_LEVEL: 'verbose',
      PORT: '80a',
      REQUEUE_QUEUE_URL: 'sqs://nowhere',
    };
    expect(envError(() => readEnv(env)).problems).toEqual([
      "LOG_LEVEL='verbose': expected debug, info, warn, error (any case)",
      "CAPM3_FAST_TRACK='yes': expected true or false",
      "SAFETY_REQUEUE_SECONDS='-1': expected a whole number of seconds ≥ 1",
      "QUEUE_PREFIX='prod.': expected letters, digits, '-' and '_' (at most 40)",
      "REQUEUE_QUEUE_URL='sqs://nowhere': expected an http(s) URL (the requeue queue)",
      "MAX_RECEIVE_COUNT='0': expected a whole number from 1 to 1000",
      "PORT='80a': expected a port number from 0 to 65535",
    ]);
  });

  it('never prints the value of a secret-bearing variable', () => {
    // The kubeconfig, tokens and HMAC secret accept any text; a bad max age next to them is named
    // with its value while theirs stay out of the message.
    const env = {
      METAL3FN_KUBECONFIG: 'c2VjcmV0LWt1YmVjb25maWc=',
      METAL3FN_HTTP_TOKENS: 'tok-1,tok-2',
      METAL3FN_HMAC_SECRET: 'hmac-secret-value',
      METAL3FN_KUBECONFIG_MAX_AGE: 'later',
    };
    const message = envError(() => readEnv(env)).message;
    expect(message).toContain("METAL3FN_KUBECONFIG_MAX_AGE='later'");
    for (const secret of ['c2VjcmV0LWt1YmVjb25maWc=', 'tok-1', 'hmac-secret-value'])
      expect(message).not.toContain(secret);
  });

  it('parses what it accepts; unset (and, for the kubeconfig sources, empty) is absent', () => {
    expect(
      readEnv({
        LOG_LEVEL: 'DEBUG',
        QUEUE_PREFIX: '',
        MAX_RECEIVE_COUNT: '12',
        PORT: '8080',
        REQUEUE_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/dev-metal3fn-requeue',
        METAL3FN_KUBECONFIG: '',
        METAL3FN_KUBECONFIG_SECRET: '',
        METAL3FN_KUBECONFIG_PARAMETER: '',
        METAL3FN_HTTP_TOKENS: 'a, b,',
      }),
    ).toEqual({
      LOG_LEVEL: 'debug',
      QUEUE_PREFIX: '',
      MAX_RECEIVE_COUNT: 12,
      PORT: 8080,
      REQUEUE_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/dev-metal3fn-requeue',
      METAL3FN_HTTP_TOKENS: ['a', 'b'],
    });
  });
});
