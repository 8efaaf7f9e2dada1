/** The project's CustomResourceDefinitions, read from its YAML folders (multi-document files). */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const PROJECT_CRD_DIRS = [join(ROOT, 'infra/crds'), join(ROOT, 'infra/local/crds')];

/** Every CustomResourceDefinition document in `dirs` (missing folders contribute none). */
export function loadCrdFiles(dirs: string[] = PROJECT_CRD_DIRS): any[] {
  const out: any[] = [];
  for (const dir of dirs) {
    if (!existsSync(dir)) continue;
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
