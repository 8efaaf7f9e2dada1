/** `metal3fn http`: serve the functions over HTTP (CloudEvents, for Knative; shared/runtimes/http.ts). */
import { readFileSync } from 'node:fs';
import { serve } from '@hono/node-server';
import { createLogger } from '../../shared/observability/logger.ts';
import { buildContext, parseLegacyProviderIds } from '../../shared/runtimes/context.ts';
import { envValue } from '../../shared/runtimes/env.ts';
import { createHttpApp } from '../../shared/runtimes/http.ts';
import { PipelineMetrics } from '../../shared/runtimes/metrics.ts';
import { oidcVerifierFor } from '../../shared/runtimes/oidc.ts';
import {
  parseCommandArgs,
  parseFunctions,
  parsePositiveInt,
  untilSignal,
} from '../../shared/runtimes/options.ts';
import { FUNCTIONS } from '../function-table.ts';

const HELP = `usage: metal3fn http [options]

  --port N                  listen port (default PORT or 8080)
  --host H                  listen address (default 127.0.0.1; 0.0.0.0 in a pod)
  --functions a,b           the functions this service runs (default all)
  --oidc-audience AUD       accept Knative's OIDC sender identity: service-account JWTs for this
                            audience (the Service's; its Trigger's subscriber.audience), verified
                            against the cluster's issuer (docs/adr/021-knative-oidc-cloudevents.md)
  --oidc-discovery-url URL  where the issuer's /.well-known/openid-configuration is (default: the
                            API server of the kubeconfig, fetched with its CA and credentials)
  --token-file F            accepted bearer tokens, one per line (or METAL3FN_HTTP_TOKENS, comma-separated)
  --hmac-secret-file F      shared secret for X-Metal3fn-Signature (or METAL3FN_HMAC_SECRET)
  --allow-unauthenticated   accept requests without credentials (never on a reachable network)
  --max-body N              largest request body in bytes (default 65536)
  --kubeconfig F            management cluster (default KUBECONFIG, ~/.kube/config, or in-cluster)
  --legacy-provider-ids accept|refuse   (default accept)
`;

export async function run(argv: string[]): Promise<number> {
  const v = parseCommandArgs(
    'http',
    argv,
    {
      port: { type: 'string' },
      host: { type: 'string' },
      functions: { type: 'string' },
      'oidc-audience': { type: 'string' },
      'oidc-discovery-url': { type: 'string' },
      'token-file': { type: 'string' },
      'hmac-secret-file': { type: 'string' },
      'allow-unauthenticated': { type: 'boolean' },
      'max-body': { type: 'string' },
      kubeconfig: { type: 'string' },
      'legacy-provider-ids': { type: 'string' },
    },
    HELP,
  );
  if (typeof v === 'number') return v;
  try {
    const tokens = v['token-file']
      ? readFileSync(v['token-file'] as string, 'utf8')
          .split('\n')
          .map((s) => s.trim())
          .filter(Boolean)
      : (envValue('METAL3FN_HTTP_TOKENS') ?? []);
    const hmacSecret = v['hmac-secret-file']
      ? readFileSync(v['hmac-secret-file'] as string, 'utf8').trim()
      : envValue('METAL3FN_HMAC_SECRET');
    const log = createLogger({ base: { component: 'http' } });
    const metrics = new PipelineMetrics();
    const context = buildContext({
      kubeconfig: v.kubeconfig as string | undefined,
      log,
      metrics,
      component: 'metal3-functions',
      config: v['legacy-provider-ids']
        ? { legacyProviderIds: parseLegacyProviderIds(v['legacy-provider-ids'] as string) }
        : {},
    });
    metrics.observeKubeRequests(context.client.stats);
    const app = createHttpApp({
      fns: FUNCTIONS,
      functions: parseFunctions(v.functions as string | undefined),
      context,
      auth: {
        bearerTokens: tokens,
        hmacSecret,
        oidc: v['oidc-audience']
          ? oidcVerifierFor(context.client, {
              audience: v['oidc-audience'] as string,
              discoveryUrl: v['oidc-discovery-url'] as string | undefined,
            })
          : undefined,
        allowUnauthenticated: Boolean(v['allow-unauthenticated']),
      },
      maxBodyBytes: parsePositiveInt('max-body', v['max-body'], 64 * 1024),
      metrics,
    });
    const port = v.port === undefined ? (envValue('PORT') ?? 8080) : parsePositiveInt('port', v.port, 8080);
    const hostname = (v.host as string | undefined) ?? '127.0.0.1';
    const server = serve({ fetch: app.fetch, port, hostname }, (info) =>
      log.info('listening', { address: info.address, port: info.port }),
    );
    const sig = await untilSignal();
    log.info('stopping', { signal: sig });
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return 0;
  } catch (e) {
    process.stderr.write(`metal3fn http: ${(e as Error).message}\n`);
    return 1;
  }
}
