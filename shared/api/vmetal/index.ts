// The vMetal kinds (vmetal.metal3fn.io/v1alpha1, ADR 018).
export * from './catalogue.ts';
export * from './common.ts';
export * from './nodeclaim.ts';
export * from './nodeprovider.ts';
export * from './nodetype.ts';
