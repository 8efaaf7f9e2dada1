// The routing mechanism (relay, HTTP runtime, replay): import from here.
export * from './engine.ts';
export { isDeleting, isFreeHost, isMachineReady } from './predicates.ts';
export { machinesOfNode } from './related.ts';
export { ROUTES } from './table.ts';
export type * from './types.ts';
