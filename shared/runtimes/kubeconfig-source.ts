/**
 * Where a Lambda function reads the management cluster's kubeconfig (docs/adr/020):
 *
 *   METAL3FN_KUBECONFIG_SECRET     a Secrets Manager secret (name or ARN), through Powertools Parameters
 *   METAL3FN_KUBECONFIG_PARAMETER  an SSM Parameter Store parameter (SecureString, decrypted)
 *   METAL3FN_KUBECONFIG            the kubeconfig itself in the environment (local use, tests)
 *   none of them                   KUBECONFIG, ~/.kube/config or the in-cluster account, as kubectl
 *
 * A stored value is cached for METAL3FN_KUBECONFIG_MAX_AGE seconds (default 300): a rotated value is
 * used once that has passed, without a redeploy. Powertools and the AWS SDK client load on the first
 * read (a cold start that reads the environment variable never loads them). Values are YAML (or
 * JSON) as is, or base64 of it. A value is never logged.
 */
import { messageOf } from '../api/json.ts';
import { decodeKubeconfig } from '../kube/kubeconfig-text.ts';
import { envValue } from './env.ts';

export const KUBECONFIG_ENV = {
  inline: 'METAL3FN_KUBECONFIG',
  secret: 'METAL3FN_KUBECONFIG_SECRET',
  parameter: 'METAL3FN_KUBECONFIG_PARAMETER',
  maxAge: 'METAL3FN_KUBECONFIG_MAX_AGE',
} as const;

export const DEFAULT_KUBECONFIG_MAX_AGE_SECONDS = 300;

export interface KubeconfigSource {
  /** What it reads, for errors and logs (a name, never a value). */
  readonly description: string;
  /** The kubeconfig text; undefined: use the defaults (KUBECONFIG, ~/.kube/config, in-cluster). */
  get(): Promise<string | undefined>;
}

const text = (v: unknown, what: string): string => {
  if (typeof v === 'string') return decodeKubeconfig(v);
  if (v instanceof Uint8Array) return decodeKubeconfig(Buffer.from(v).toString('utf8'));
  throw new Error(`${what} holds no kubeconfig`);
};

/** A value in a store, read through a Powertools provider (which caches it for maxAge). */
const stored = (description: string, read: () => Promise<unknown>): KubeconfigSource => ({
  description,
  async get() {
    try {
      return text(await read(), description);
    } catch (e) {
      throw new Error(`kubeconfig from ${description}: ${messageOf(e)}`);
    }
  },
});

/** The source the environment names; throws on an ambiguous or invalid configuration. */
export function kubeconfigSource(env: NodeJS.ProcessEnv = process.env): KubeconfigSource {
  const secret = envValue(KUBECONFIG_ENV.secret, env);
  const parameter = envValue(KUBECONFIG_ENV.parameter, env);
  const inline = envValue(KUBECONFIG_ENV.inline, env);
  const named = [
    secret && KUBECONFIG_ENV.secret,
    parameter && KUBECONFIG_ENV.parameter,
    inline && KUBECONFIG_ENV.inline,
  ];
  const set = named.filter(Boolean);
  if (set.length > 1)
    throw new Error(`set one of ${set.join(', ')}, not several: which kubeconfig is meant?`);
  // The table (./env.ts) parses it; a bad value was refused by readEnv before this runs.
  const maxAge = envValue(KUBECONFIG_ENV.maxAge, env) ?? DEFAULT_KUBECONFIG_MAX_AGE_SECONDS;

  if (secret) {
    let provider: Promise<import('@aws-lambda-powertools/parameters/secrets').SecretsProvider> | undefined;
    return stored(`Secrets Manager secret '${secret}'`, async () => {
      provider ??= import('@aws-lambda-powertools/parameters/secrets').then((m) => new m.SecretsProvider());
      return (await provider).get(secret, { maxAge });
    });
  }
  if (parameter) {
    let provider: Promise<import('@aws-lambda-powertools/parameters/ssm').SSMProvider> | undefined;
    return stored(`SSM parameter '${parameter}'`, async () => {
      provider ??= import('@aws-lambda-powertools/parameters/ssm').then((m) => new m.SSMProvider());
      return (await provider).get(parameter, { maxAge, decrypt: true });
    });
  }
  if (inline) {
    const value = decodeKubeconfig(inline);
    return { description: KUBECONFIG_ENV.inline, get: async () => value };
  }
  return {
    description: 'KUBECONFIG, ~/.kube/config or the in-cluster service account',
    get: async () => undefined,
  };
}
