/** IP arithmetic and ip-address-manager allocation (pure; see docs/contracts.md). */
export * from './allocate.ts';
export * from './errors.ts';
export * from './ip.ts';
