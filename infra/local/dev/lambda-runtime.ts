/**
 * `metal3fn dev --runtime lambda`: the functions run as they would on AWS Lambda, each behind an
 * emulated SQS event source mapping (../lambda-esm.ts) with serverless.yml's settings, the requeue
 * forwarder too. Each instance (cold start) builds its own Kubernetes client and context, as a
 * Lambda's module state would; the counters of its requests are the run's.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { FUNCTION_NAMES } from '../../../events/envelope.ts';
import type { Logger } from '../../../shared/observability/logger.ts';
import type { DeliveryOutcome } from '../../../shared/observability/metric-names.ts';
import { type QueueUrls, queueArn } from '../../../shared/queue/ensure.ts';
import type { ReconcileContext } from '../../../shared/reconcile/context.ts';
import type { FunctionTable } from '../../../shared/runtimes/dispatch.ts';
import { createRequeueForwarder, createSqsHandler } from '../../../shared/runtimes/lambda.ts';
import {
  type EsmSource,
  EventSourceMappings,
  type Invocation,
  type LambdaFigures,
  lambdaFigures,
  SqsRequestCounter,
} from '../lambda-esm.ts';
import { type LambdaSettings, settingsOf } from '../lambda-settings.ts';

/** serverless.yml's name of the requeue queue's forwarder. */
export const REQUEUE_FORWARDER = 'requeueForwarder';

export interface LambdaRuntimeOptions {
  /** The run's client (the relay's): its requests are counted with the functions'. */
  sqs: SQSClient;
  /** A new client on the same endpoint: one per event source mapping and one per instance. */
  newSqsClient: () => SQSClient;
  queues: QueueUrls;
  prefix: string;
  fns: FunctionTable;
  settings: LambdaSettings;
  /** A new instance's context (its own client), built on its cold start. */
  newContext: (fn: string) => ReconcileContext;
  log: Logger;
  onInvocation?: ((i: Invocation) => void) | undefined;
}

export interface LambdaRuntime {
  esm: EventSourceMappings;
  /** Records by what became of them (retry = left to the queue; dead-letter). */
  outcomes: Record<DeliveryOutcome, number>;
  /** Where the run is now: figures `since` it count what came after. */
  mark(): LambdaMark;
  /** The figures per `machines` (Ready, or released), of the whole run or since a mark. */
  figures(machines: number, since?: LambdaMark): LambdaFigures;
  stop(): Promise<void>;
}

export interface LambdaMark {
  invocations: number;
  byCommand: Record<string, number>;
  emptyReceives: number;
}

export async function startLambdaRuntime(o: LambdaRuntimeOptions): Promise<LambdaRuntime> {
  const naming = { prefix: o.prefix };
  const outcomes: Record<DeliveryOutcome, number> = {
    done: 0,
    coalesced: 0,
    requeue: 0,
    retry: 0,
    terminal: 0,
    'dead-letter': 0,
  };
  const requests = new SqsRequestCounter();
  requests.attach(o.sqs);
  const sources: EsmSource[] = [];
  for (const fn of FUNCTION_NAMES) {
    const reconcile = o.fns[fn];
    if (!reconcile || !o.queues.main[fn]) continue;
    const settings = settingsOf(o.settings, fn);
    sources.push({
      fn,
      sqs: requests.attach(o.newSqsClient()),
      queueUrl: o.queues.main[fn],
      queueArn: await queueArn(o.sqs, o.queues.main[fn]),
      settings,
      coldStart: () => {
        const context = o.newContext(fn);
        return createSqsHandler({
          fns: { [fn]: reconcile },
          context: () => context,
          sqs: requests.attach(o.newSqsClient()),
          naming,
          requeueUrl: o.queues.requeue,
          maxReceiveCount: settings.maxReceiveCount,
          onDelivered: (d) => outcomes[d.outcome]++,
        });
      },
    });
  }
  sources.push({
    fn: REQUEUE_FORWARDER,
    sqs: requests.attach(o.newSqsClient()),
    queueUrl: o.queues.requeue,
    queueArn: await queueArn(o.sqs, o.queues.requeue),
    settings: settingsOf(o.settings, REQUEUE_FORWARDER),
    coldStart: () => createRequeueForwarder({ sqs: requests.attach(o.newSqsClient()), naming }),
    // Its records wait the requeue-after delay they asked for, not for a free instance.
    delayQueue: true,
  });
  const esm = new EventSourceMappings({
    sources,
    log: o.log,
    onInvocation: o.onInvocation,
  }).start();
  return {
    esm,
    outcomes,
    mark: () => ({
      invocations: esm.invocations.length,
      byCommand: { ...requests.byCommand },
      emptyReceives: esm.emptyReceives,
    }),
    figures: (machines, since) =>
      lambdaFigures(esm.invocations.slice(since?.invocations ?? 0), machines, o.settings.memoryMb, {
        byCommand: Object.fromEntries(
          Object.entries(requests.byCommand).map(([k, v]) => [k, v - (since?.byCommand[k] ?? 0)]),
        ),
        emptyReceives: esm.emptyReceives - (since?.emptyReceives ?? 0),
      }),
    stop: () => esm.stop(),
  };
}
