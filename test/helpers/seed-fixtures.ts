import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

export const SEEDS_DIR = join(import.meta.dirname, '..', 'fixtures', 'seeds');
const ROOT = join(import.meta.dirname, '..', '..');

export function seedFiles(): string[] {
  return readdirSync(SEEDS_DIR)
    .filter((f) => f.endsWith('.yaml'))
    .sort();
}

export function readSeedText(file: string): string {
  return readFileSync(join(SEEDS_DIR, file), 'utf8');
}

/** A fixture as a fresh plain object (tests mutate their copy). */
export function loadSeed(file: string): Record<string, any> {
  return parse(readSeedText(file));
}

/** The openAPIV3Schema of the committed CRD for `<plural>.<group>`, as the API server would load it. */
export function crdSchema(plural: string, group: string): Record<string, any> {
  const ours = group === 'infrastructure.cluster.x-k8s.io';
  const file = join(ROOT, ours ? 'infra/crds' : 'infra/local/crds', `${plural}.${group}.yaml`);
  return parse(readFileSync(file, 'utf8')).spec.versions[0].schema.openAPIV3Schema;
}
