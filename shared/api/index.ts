// The API schemas, one file per kind (see docs/contracts.md). Import from here.
export * from './baremetalhost.ts';
export * from './capi.ts';
export * from './conditions.ts';
export * from './hostselector.ts';
export * from './image.ts';
export * from './ipam.ts';
export * from './kubeadm.ts';
export * from './meta.ts';
export * from './metal3cluster.ts';
export * from './metal3data.ts';
export * from './metal3datatemplate.ts';
export * from './metal3machine.ts';
export * from './metal3machinetemplate.ts';
export * from './net.ts';
export * from './parse.ts';
export * from './refs.ts';
export * from './resources.ts';
