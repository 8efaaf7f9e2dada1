/**
 * Creating (idempotently) or looking up the queues of an installation. CreateQueue with the same
 * attributes is a no-op on SQS; when someone changed an attribute by hand SQS answers
 * QueueAlreadyExists (QueueNameExists), and we keep the existing queue rather than fight over it.
 */
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  SetQueueAttributesCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { FUNCTION_NAMES, type FunctionName } from '../../events/envelope.ts';
import { dlqName, type QueueNaming, queueName, requeueDlqName, requeueQueueName } from './names.ts';
import { MAX_RECEIVE_COUNT, REQUEUE_MAX_RECEIVE_COUNT } from './redelivery.ts';

export interface QueueUrls {
  /** The queues of the functions asked for; '' for the others. */
  main: Record<FunctionName, string>;
  dlq: Record<FunctionName, string>;
  /** Standard delay queue for requeue-after. */
  requeue: string;
  requeueDlq: string;
}

export interface EnsureQueuesOptions extends QueueNaming {
  functions?: readonly FunctionName[] | undefined;
  /** Receives before a function queue's message moves to its DLQ (default MAX_RECEIVE_COUNT, ADR 017). */
  maxReceiveCount?: number | undefined;
  /** Main queues' visibility timeout: ≥ 6× the function timeout for Lambda. */
  visibilityTimeoutSeconds?: number | undefined;
  /** Message retention in seconds for the DLQs (default the SQS maximum, 14 days). */
  dlqRetentionSeconds?: number | undefined;
}

async function createOrGet(
  sqs: SQSClient,
  name: string,
  attributes: Record<string, string>,
): Promise<string> {
  try {
    const r = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
    return r.QueueUrl!;
  } catch (e) {
    const n = e instanceof Error ? e.name : '';
    if (n !== 'QueueAlreadyExists' && n !== 'QueueNameExists') throw e;
    const r = await sqs.send(new GetQueueUrlCommand({ QueueName: name }));
    return r.QueueUrl!;
  }
}

export async function queueArn(sqs: SQSClient, url: string): Promise<string> {
  const r = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }));
  const arn = r.Attributes?.QueueArn;
  if (!arn) throw new Error(`queue ${url} reports no QueueArn`);
  return arn;
}

/** A URL per function, '' until its queue is created or looked up (a function not asked for keeps ''). */
const noQueues = (): Record<FunctionName, string> => ({
  selectHost: '',
  allocateIndex: '',
  renderData: '',
  resolveProviderID: '',
  deprovision: '',
  reconcileCluster: '',
});

export async function ensureQueues(sqs: SQSClient, opts: EnsureQueuesOptions = {}): Promise<QueueUrls> {
  const fns = opts.functions ?? FUNCTION_NAMES;
  const maxReceiveCount = String(opts.maxReceiveCount ?? MAX_RECEIVE_COUNT);
  const visibility = String(opts.visibilityTimeoutSeconds ?? 60);
  const retention = String(opts.dlqRetentionSeconds ?? 1_209_600);
  const main = noQueues();
  const dlq = noQueues();
  await Promise.all(
    fns.map(async (fn) => {
      dlq[fn] = await createOrGet(sqs, dlqName(fn, opts), {
        FifoQueue: 'true',
        MessageRetentionPeriod: retention,
      });
      const redrive = JSON.stringify({ deadLetterTargetArn: await queueArn(sqs, dlq[fn]), maxReceiveCount });
      main[fn] = await createOrGet(sqs, queueName(fn, opts), {
        FifoQueue: 'true',
        VisibilityTimeout: visibility,
        RedrivePolicy: redrive,
      });
      // An existing queue created without (or with another) redrive policy gets ours.
      await sqs.send(
        new SetQueueAttributesCommand({ QueueUrl: main[fn], Attributes: { RedrivePolicy: redrive } }),
      );
    }),
  );
  const requeueDlq = await createOrGet(sqs, requeueDlqName(opts), { MessageRetentionPeriod: retention });
  const requeue = await createOrGet(sqs, requeueQueueName(opts), {
    RedrivePolicy: JSON.stringify({
      deadLetterTargetArn: await queueArn(sqs, requeueDlq),
      maxReceiveCount: String(REQUEUE_MAX_RECEIVE_COUNT),
    }),
  });
  return { main, dlq, requeue, requeueDlq };
}

/** Looks the queues up without creating anything (deployments where IaC owns the queues). */
export async function resolveQueues(
  sqs: SQSClient,
  opts: QueueNaming & { functions?: readonly FunctionName[] | undefined } = {},
): Promise<QueueUrls> {
  const fns = opts.functions ?? FUNCTION_NAMES;
  const url = async (name: string) => (await sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl!;
  const main = noQueues();
  const dlq = noQueues();
  await Promise.all(
    fns.map(async (fn) => {
      main[fn] = await url(queueName(fn, opts));
      dlq[fn] = await url(dlqName(fn, opts));
    }),
  );
  return {
    main,
    dlq,
    requeue: await url(requeueQueueName(opts)),
    requeueDlq: await url(requeueDlqName(opts)),
  };
}

/** Only the functions' main queues: all the relay sends to (and all its IAM policy allows). */
export async function resolveMainQueues(
  sqs: SQSClient,
  opts: QueueNaming & { functions?: readonly FunctionName[] | undefined } = {},
): Promise<Partial<Record<FunctionName, string>>> {
  const fns = opts.functions ?? FUNCTION_NAMES;
  const main: Partial<Record<FunctionName, string>> = {};
  await Promise.all(
    fns.map(async (fn) => {
      main[fn] = (await sqs.send(new GetQueueUrlCommand({ QueueName: queueName(fn, opts) }))).QueueUrl!;
    }),
  );
  return main;
}
