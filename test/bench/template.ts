/**
 * The Go template engine (shared/gotemplate): renders per second of a typical cloud-config
 * user-data template (the fixture case cloudconfig/cloud-config: ranges, maps, sprig, toJson), and
 * what the first render costs a process that has not loaded the engine yet: the engine bundled as
 * a Lambda bundle would carry it (esbuild, minified), imported and run once in a fresh Node.
 *
 *   node test/bench/template.ts
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { build } from 'esbuild';
import { loadCases } from '../../scripts/gen-gotemplate-fixtures.ts';

const root = new URL('../../', import.meta.url).pathname;
const round = (n: number) => Math.round(n * 100) / 100;

/** One fresh Node process: ms to import the bundled engine, and to import it and render once. */
function firstRender(
  bundle: string,
  template: string,
  values: string,
): { importMs: number; firstRenderMs: number } {
  const script = `
    const t0 = performance.now();
    const m = await import(${JSON.stringify(bundle)});
    const t1 = performance.now();
    m.renderGoTemplate('user-data', ${JSON.stringify(template)}, m.decodeValuesJSON(${JSON.stringify(values)}));
    const t2 = performance.now();
    process.stdout.write(JSON.stringify({ importMs: t1 - t0, firstRenderMs: t2 - t0 }));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: root,
    encoding: 'utf8',
  });
  return JSON.parse(out) as { importMs: number; firstRenderMs: number };
}

export async function benchTemplate(): Promise<Record<string, number>> {
  const c = loadCases().find((x) => x.name === 'cloudconfig/cloud-config')!;
  const { renderGoTemplate, decodeValuesJSON } = await import('../../shared/gotemplate/index.ts');
  const values = decodeValuesJSON(c.values);
  const render = () => renderGoTemplate('user-data', c.template, values);
  for (let i = 0; i < 500; i++) render();
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 5; round++) {
    const n = 2000;
    const start = performance.now();
    for (let i = 0; i < n; i++) render();
    best = Math.min(best, (performance.now() - start) / n);
  }
  // Parsing included: a distinct text each time defeats the parse cache.
  let bestParse = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 5; round++) {
    const n = 300;
    const start = performance.now();
    for (let i = 0; i < n; i++) renderGoTemplate('user-data', `${c.template}{{/* ${round}-${i} */}}`, values);
    bestParse = Math.min(bestParse, (performance.now() - start) / n);
  }
  const dir = mkdtempSync(join(tmpdir(), 'gotemplate-bench-'));
  const bundle = join(dir, 'gotemplate.mjs');
  await build({
    entryPoints: [join(root, 'shared/gotemplate/index.ts')],
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    outfile: bundle,
    logLevel: 'silent',
  });
  const starts = Array.from({ length: 5 }, () => firstRender(bundle, c.template, c.values));
  const bundleBytes = statSync(bundle).size;
  rmSync(dir, { recursive: true, force: true });
  return {
    templateEngineBundleBytes: bundleBytes,
    templateRendersPerSecond: Math.round(1000 / best),
    templateParseAndRendersPerSecond: Math.round(1000 / bestParse),
    templateEngineImportMs: round(Math.min(...starts.map((s) => s.importMs))),
    templateFirstRenderMs: round(Math.min(...starts.map((s) => s.firstRenderMs))),
  };
}

if (import.meta.main) console.log(JSON.stringify(await benchTemplate(), null, 2));
