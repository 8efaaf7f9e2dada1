/**
 * The AWS Lambda entry of the requeue forwarder: due requeue-after messages from the standard delay
 * queue back onto their FIFO queues (ADR 002). No reconcile core of its own.
 */
import { requeueForwarderHandler } from '../../shared/runtimes/lambda.ts';

export const handler = requeueForwarderHandler();
