export * from './dlq.ts';
export * from './ensure.ts';
export * from './message.ts';
export * from './names.ts';
export * from './requeue.ts';
export * from './sender.ts';
export * from './sqs.ts';
