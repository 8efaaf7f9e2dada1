export * from './hosts.ts';
export * from './labels.ts';
