/** node:crypto, loaded when a hash or random function first runs (not with the engine). */
export const crypto = (): typeof import('node:crypto') => process.getBuiltinModule('node:crypto');
