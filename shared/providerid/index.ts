// ProviderID formats and the pure seed-000 decision. Import from here.
export * from './decide.ts';
export * from './ids.ts';
export * from './migrate.ts';
export * from './node-patch.ts';
