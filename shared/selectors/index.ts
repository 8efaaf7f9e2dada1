export * from '../hosts/eligibility.ts';
export * from './labels.ts';
