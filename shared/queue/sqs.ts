/**
 * The SQS client, configured the same way by every command: an explicit endpoint (`--sqs-endpoint`)
 * wins over AWS_ENDPOINT_URL_SQS; region from the option, AWS_REGION or us-east-1. Against a local
 * endpoint without credentials in the environment, dummy ones are used (local servers ignore them).
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { envValue } from '../runtimes/env.ts';

export interface SqsClientOptions {
  endpoint?: string | undefined;
  region?: string | undefined;
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | undefined;
  /** Retries the SDK performs per call (its default is 3). */
  maxAttempts?: number | undefined;
}

export function sqsEndpointFromEnv(): string | undefined {
  return envValue('AWS_ENDPOINT_URL_SQS') ?? envValue('AWS_ENDPOINT_URL');
}

export function createSqsClient(opts: SqsClientOptions = {}): SQSClient {
  const endpoint = opts.endpoint ?? sqsEndpointFromEnv();
  const region = opts.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1';
  const local =
    endpoint !== undefined && /^https?:\/\/(127\.0\.0\.1|localhost|\[::1\])(:|\/|$)/.test(endpoint);
  const credentials =
    opts.credentials ??
    (local && !process.env.AWS_ACCESS_KEY_ID
      ? { accessKeyId: 'local', secretAccessKey: 'local' }
      : undefined);
  return new SQSClient({
    region,
    ...(endpoint ? { endpoint } : {}),
    ...(credentials ? { credentials } : {}),
    ...(opts.maxAttempts !== undefined ? { maxAttempts: opts.maxAttempts } : {}),
    // With an explicit endpoint, send to it even when a queue URL names another host
    // (fauxqs and LocalStack hand out URLs whose host may not resolve).
    ...(endpoint ? { useQueueUrlAsEndpoint: false } : {}),
  });
}
