/** The AWS Lambda entry of renderData (its SQS queue's event source): `handler`. */
import { functionHandler } from '../../shared/runtimes/lambda-entry.ts';
import { reconcile } from './core.ts';

export const handler = functionHandler('renderData', reconcile);
