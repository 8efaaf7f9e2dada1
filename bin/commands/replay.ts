/**
 * `metal3fn replay`: run one function by hand, in-process, and print what happened.
 *   replay <function> <ns>/<name> [--kind K]   one key (the object's uid/resourceVersion are read)
 *   replay [<function>] --event FILE           a saved envelope, or a watch event ({type, object})
 *                                              / a bare object, routed through the relay's table
 *   replay --from-dlq <function>               move the function's DLQ back into its queue
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { FUNCTION_NAMES, type FunctionName, type MessageEnvelope } from '../../events/envelope.ts';
import { apiVersionOf, type KindName, R, type Resource } from '../../shared/api/resources.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { createLogger } from '../../shared/observability/logger.ts';
import { redrive } from '../../shared/queue/dlq.ts';
import type { RoutingEvent } from '../../shared/routing/index.ts';
import { routeWithApi } from '../../shared/routing/lookup.ts';
import { buildContext, parseLegacyProviderIds } from '../../shared/runtimes/context.ts';
import { dispatch } from '../../shared/runtimes/dispatch.ts';
import {
  checkEnvAtStart,
  parseFunctions,
  SQS_HELP,
  SQS_OPTIONS,
  sqsFromOptions,
  type Values,
} from '../../shared/runtimes/options.ts';
import { FUNCTIONS } from '../function-table.ts';

const HELP = `usage: metal3fn replay <function> <namespace>/<name> [--kind K]
       metal3fn replay [<function>] --event FILE
       metal3fn replay --from-dlq <function> [--method auto|copy]

  --kind K              the key's kind (default: the function's main kind)
  --event FILE          a saved message envelope, or a watch event JSON ({"type","object"}) or object
  --from-dlq FUNCTION   move that function's DLQ messages back into its queue
  --method auto|copy    auto: SQS StartMessageMoveTask where available, else copy (default auto)
  --kubeconfig F        management cluster (default KUBECONFIG, ~/.kube/config, or in-cluster)
  --legacy-provider-ids accept|refuse   (default accept)
  --no-events           do not write Kubernetes Events
${SQS_HELP}
functions: ${FUNCTION_NAMES.join(', ')}
`;

/** The kind a function's key names when only `<ns>/<name>` is given. */
export const MAIN_KIND: Record<FunctionName, KindName> = {
  selectHost: 'Metal3Machine',
  allocateIndex: 'Metal3DataClaim',
  renderData: 'Metal3Data',
  resolveProviderID: 'Metal3Machine',
  deprovision: 'Metal3Machine',
  reconcileCluster: 'Metal3Cluster',
};

const out = (v: unknown) => process.stdout.write(`${JSON.stringify(v, null, 2)}\n`);

export async function run(argv: string[]): Promise<number> {
  let v: Values;
  let positionals: string[];
  try {
    ({ values: v, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        kind: { type: 'string' },
        event: { type: 'string' },
        'from-dlq': { type: 'string' },
        method: { type: 'string' },
        kubeconfig: { type: 'string' },
        'legacy-provider-ids': { type: 'string' },
        'no-events': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        ...SQS_OPTIONS,
      },
      strict: true,
    }));
  } catch (e) {
    process.stderr.write(`metal3fn replay: ${(e as Error).message}\n\n${HELP}`);
    return 2;
  }
  if (v.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const badEnv = checkEnvAtStart('replay');
  if (badEnv !== undefined) return badEnv;
  try {
    if (v['from-dlq']) {
      const [fn] = parseFunctions(v['from-dlq'] as string);
      const method = (v.method as 'auto' | 'copy' | undefined) ?? 'auto';
      if (method !== 'auto' && method !== 'copy') throw new Error('--method must be auto or copy');
      const { sqs, queues } = await sqsFromOptions(v, [fn!]);
      const r = await redrive(sqs, queues.dlq[fn!], queues.main[fn!], { method });
      out({ function: fn, ...r });
      sqs.destroy();
      return 0;
    }
    const log = createLogger({ base: { component: 'replay' } });
    const context = buildContext({
      kubeconfig: v.kubeconfig as string | undefined,
      log,
      events: v['no-events'] ? false : undefined,
      component: 'metal3-functions',
      config: v['legacy-provider-ids']
        ? { legacyProviderIds: parseLegacyProviderIds(v['legacy-provider-ids'] as string) }
        : {},
    });
    const only = positionals[0] ? parseFunctions(positionals[0])[0] : undefined;
    let messages: MessageEnvelope[];
    if (v.event) {
      const raw = JSON.parse(readFileSync(v.event as string, 'utf8')) as Record<string, any>;
      if (typeof raw.function === 'string') {
        messages = [{ ...(raw as MessageEnvelope), reason: 'replay' }];
      } else {
        const ev: RoutingEvent =
          raw.object && raw.type
            ? { type: raw.type, object: raw.object as KubeObject }
            : { type: 'MODIFIED', object: raw as KubeObject };
        messages = (await routeWithApi(context.client, ev)).map((r) => ({
          ...r.msg,
          reason: 'replay' as const,
        }));
      }
      if (only) messages = messages.filter((m) => m.function === only);
    } else {
      if (!only || !positionals[1])
        throw new Error('give a function and a key, or --event FILE, or --from-dlq FUNCTION');
      const [ns, name] = positionals[1].includes('/')
        ? positionals[1].split('/', 2)
        : [undefined, positionals[1]];
      const kind = ((v.kind as string | undefined) ?? MAIN_KIND[only]) as KindName;
      const t: Resource | undefined = R[kind];
      if (!t) throw new Error(`unknown kind '${kind}'`);
      const obj = await context.client.get(t, ns, name!);
      messages = [
        {
          v: 1,
          function: only,
          cluster: 'management',
          apiVersion: apiVersionOf(t),
          kind,
          ...(ns ? { namespace: ns } : {}),
          name: name!,
          ...(obj?.metadata.uid ? { uid: obj.metadata.uid } : {}),
          ...(obj?.metadata.resourceVersion ? { resourceVersion: obj.metadata.resourceVersion } : {}),
          reason: 'replay',
        },
      ];
    }
    let failed = false;
    const results = [];
    for (const msg of messages) {
      const o = await dispatch(FUNCTIONS, context, msg);
      if (o.kind === 'retry' || o.kind === 'malformed') failed = true;
      results.push(
        o.kind === 'malformed'
          ? { outcome: 'malformed', reason: o.reason }
          : {
              function: o.msg.function,
              kind: o.msg.kind,
              key: o.msg.namespace ? `${o.msg.namespace}/${o.msg.name}` : o.msg.name,
              outcome: o.kind,
              ...(o.kind === 'done' ? { note: o.result.kind === 'done' ? o.result.note : undefined } : {}),
              ...(o.kind === 'requeue' ? { afterSeconds: o.afterSeconds, reason: o.reason } : {}),
              ...(o.kind === 'terminal' ? { reason: o.reason, message: o.message } : {}),
              ...(o.kind === 'retry' ? { error: o.error.message } : {}),
            },
      );
    }
    out(results);
    return failed ? 1 : 0;
  } catch (e) {
    process.stderr.write(`metal3fn replay: ${(e as Error).message}\n`);
    return 1;
  }
}
