/** The project's CustomResourceDefinitions, read from its YAML folders (multi-document files). */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { assetPath } from '../assets.ts';

export const PROJECT_CRD_DIRS = [assetPath('infra/crds'), assetPath('infra/local/crds')];

/**
 * Every CustomResourceDefinition document in `dirs`. A missing folder throws (ENOENT): read as
 * "no CRDs" it once let a bundle without its assets start an API server that served none.
 */
export function loadCrdFiles(dirs: string[] = PROJECT_CRD_DIRS): any[] {
  const out: any[] = [];
  for (const dir of dirs) {
    for (const f of readdirSync(dir).sort()) {
      if (!/\.ya?ml$/.test(f)) continue;
      for (const doc of parseAllDocuments(readFileSync(join(dir, f), 'utf8'))) {
        if (doc.errors.length) throw new Error(`${join(dir, f)}: ${doc.errors[0]!.message}`);
        const obj = doc.toJS();
        if (obj && obj.kind === 'CustomResourceDefinition') out.push(obj);
      }
    }
  }
  return out;
}
