/**
 * The Lambda deployment's settings as serverless.yml declares them, read from serverless.yml itself
 * (one place): each function's SQS event source (batch size, maximum concurrency), its timeout and
 * memory, and its queue's visibility timeout, receive limit and FIFO-ness. The event source mapping
 * emulator (./lambda-esm.ts) and the cost figures use these, so a change to serverless.yml changes
 * what the emulated run does.
 *
 * Only what is needed is resolved: `${self:a.b}` references and `${opt:x, 'default'}` defaults;
 * CloudFormation tags (!GetAtt X.Arn) are read as their text (`X.Arn`) to find the queue resource.
 */
import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { fieldOf, listOf, recordOf, stringOf } from '../../shared/api/json.ts';
import { assetPath } from './assets.ts';

export interface EsmSettings {
  batchSize: number;
  maximumConcurrency: number;
  timeoutSeconds: number;
  visibilityTimeoutSeconds: number;
  /** The redrive policy's maxReceiveCount. */
  maxReceiveCount: number;
  fifo: boolean;
}

export interface LambdaSettings {
  memoryMb: number;
  architecture: string;
  /** By function name as serverless.yml names them (selectHost, …, requeueForwarder). */
  functions: Record<string, EsmSettings>;
}

export async function loadLambdaSettings(file = assetPath('serverless.yml')): Promise<LambdaSettings> {
  return lambdaSettingsOf(await readFile(file, 'utf8'));
}

/** The settings from serverless.yml's text; an error names what is missing. */
export function lambdaSettingsOf(text: string): LambdaSettings {
  // logLevel error: the CloudFormation tags are unknown to the parser, and read as their text.
  const doc: unknown = parse(text, { logLevel: 'error' });
  const resolve = (v: unknown, depth = 0): unknown => {
    const s = stringOf(v);
    if (s === undefined || depth > 10) return v;
    const self = /^\$\{self:([\w.]+)\}$/.exec(s);
    if (self) return resolve(fieldOf(doc, ...self[1]!.split('.')), depth + 1);
    const opt = /^\$\{(?:opt|env):[\w-]+, *'([^']*)'\}$/.exec(s);
    return opt ? opt[1] : v;
  };
  const num = (v: unknown, what: string): number => {
    const r = resolve(v);
    const n = typeof r === 'number' ? r : Number(stringOf(r) ?? Number.NaN);
    if (!Number.isFinite(n)) throw new Error(`serverless.yml: ${what} is not a number (${String(r)})`);
    return n;
  };
  const provider = recordOf(fieldOf(doc, 'provider'));
  const resources = recordOf(fieldOf(doc, 'resources', 'Resources'));
  const functions: Record<string, EsmSettings> = {};
  for (const [name, def] of Object.entries(recordOf(fieldOf(doc, 'functions')))) {
    const sqs = recordOf(
      listOf(fieldOf(def, 'events'))
        .map((e) => fieldOf(e, 'sqs'))
        .find(Boolean),
    );
    const arn = stringOf(sqs.arn);
    if (!arn) throw new Error(`serverless.yml: function ${name} has no sqs event with an arn`);
    const queueId = arn.replace(/\.Arn$/, '');
    const queue = recordOf(fieldOf(resources, queueId, 'Properties'));
    if (!Object.keys(queue).length) throw new Error(`serverless.yml: no queue resource ${queueId} (${name})`);
    functions[name] = {
      batchSize: num(sqs.batchSize ?? 10, `${name} batchSize`),
      maximumConcurrency: num(sqs.maximumConcurrency, `${name} maximumConcurrency`),
      timeoutSeconds: num(fieldOf(def, 'timeout') ?? provider.timeout, `${name} timeout`),
      // SQS's default visibility timeout is 30 s.
      visibilityTimeoutSeconds: num(queue.VisibilityTimeout ?? 30, `${queueId} VisibilityTimeout`),
      maxReceiveCount: num(fieldOf(queue, 'RedrivePolicy', 'maxReceiveCount'), `${queueId} maxReceiveCount`),
      fifo: resolve(queue.FifoQueue) === true,
    };
  }
  return {
    memoryMb: num(provider.memorySize, 'provider.memorySize'),
    architecture: stringOf(resolve(provider.architecture)) ?? 'x86_64',
    functions,
  };
}

/** The one value every function's queue has for `key` (ensureQueues sets one for all); an error when they differ. */
export function uniformQueueSetting(
  settings: LambdaSettings,
  names: readonly string[],
  key: 'visibilityTimeoutSeconds' | 'maxReceiveCount',
): number {
  const values = new Set(names.map((n) => settingsOf(settings, n)[key]));
  if (values.size !== 1)
    throw new Error(`serverless.yml: the function queues differ in ${key} (${[...values]})`);
  return [...values][0]!;
}

export function settingsOf(settings: LambdaSettings, fn: string): EsmSettings {
  const s = settings.functions[fn];
  if (!s) throw new Error(`serverless.yml declares no function ${fn}`);
  return s;
}
