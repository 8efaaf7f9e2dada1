/** The product configuration every runtime reads from its environment (shared/runtimes/context.ts). */
import { describe, expect, it } from 'vitest';
import { productConfigFromEnv } from '../../../shared/runtimes/context.ts';

describe('productConfigFromEnv', () => {
  it.each([
    [{}, {}],
    [{ SHARED_READ_MAX_AGE_MS: '0' }, { sharedReadMaxAgeMs: 0 }],
    [{ SHARED_READ_MAX_AGE_MS: '250' }, { sharedReadMaxAgeMs: 250 }],
    [{ SHARED_READ_MAX_AGE_MS: '-1' }, {}],
    [{ SHARED_READ_MAX_AGE_MS: '1.5' }, {}],
    [{ SHARED_READ_MAX_AGE_MS: 'soon' }, {}],
    [{ SHARED_READ_MAX_AGE_MS: '' }, {}],
    [
      { LEGACY_PROVIDER_IDS: 'refuse', CAPM3_FAST_TRACK: 'true' },
      { legacyProviderIds: 'refuse', fastTrack: true },
    ],
    [{ SAFETY_REQUEUE_SECONDS: '30' }, { safetyRequeueSeconds: 30 }],
    [{ VMETAL_JOIN_TOKEN_TTL_SECONDS: '600' }, {}],
    [{ VMETAL_JOIN_TOKEN_TTL_SECONDS: '7200' }, { joinTokenTtlSeconds: 7200 }],
  ])('%j → %j', (env, want) => {
    expect(productConfigFromEnv(env)).toEqual(want);
  });
});
