/**
 * The template engine loads on the first render, never at process start: nothing outside
 * shared/gotemplate imports it statically (a dynamic import() at the call site instead).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = new URL('../../../', import.meta.url).pathname;

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    if (f === 'node_modules' || f === 'gotemplate') return [];
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('gotemplate loading', () => {
  it('no product module imports shared/gotemplate statically', () => {
    const offenders = ['bin', 'functions', 'shared', 'events', 'infra']
      .flatMap((d) => tsFiles(join(root, d)))
      .filter((f) => /^\s*(import|export)\b[^;]*from\s+['"][^'"]*gotemplate\//m.test(readFileSync(f, 'utf8')))
      .map((f) => relative(root, f));
    expect(offenders).toEqual([]);
  });

  it('the template command imports it at the call site', () => {
    const src = readFileSync(join(root, 'bin/commands/template.ts'), 'utf8');
    expect(src).toMatch(/await import\('\.\.\/\.\.\/shared\/gotemplate\/index\.ts'\)/);
  });
});
