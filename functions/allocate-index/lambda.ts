/** The AWS Lambda entry of allocateIndex (its SQS queue's event source): `handler`. */
import { functionHandler } from '../../shared/runtimes/lambda-entry.ts';
import { reconcile } from './core.ts';

export const handler = functionHandler('allocateIndex', reconcile);
