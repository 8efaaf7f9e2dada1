/**
 * Type-aware lint of the product code (functions/ and shared/): no assertion that bypasses a
 * schema. Biome (`biome check`) does everything else; it cannot see types, this can
 * (docs/adr/016-typed-objects.md). No inline disabling: an exception would have to be written here.
 */
import tseslint from 'typescript-eslint';

export default [
  {
    // The fixture of test/unit/lint/assertions.test.ts is linted with the same rules (by that test;
    // `npm run lint` lints functions/ and shared/ only).
    files: ['functions/**/*.ts', 'shared/**/*.ts', 'test/fixtures/lint/**/*.ts'],
    // The Go template engine is an interpreter of Go's interface{} values: its narrowing is Go's
    // reflection (reflect.ts), checked against Go itself by the gotemplate fixtures, and no Kubernetes
    // object reaches it typed (ADR 014, ADR 016).
    ignores: ['shared/gotemplate/**'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { project: './tsconfig.lint.json', tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { noInlineConfig: true, reportUnusedDisableDirectives: 'off' },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      // `x as T` where T is narrower than x's type (`as unknown as T`, `obj.spec as Record<…>`,
      // `JSON.parse(s) as T`, `e as Error`, `<T>x`): a claim no schema checked.
      '@typescript-eslint/no-unsafe-type-assertion': 'error',
      // `any` switches the checker off (`as any`, `: any`, `<any>`).
      '@typescript-eslint/no-explicit-any': 'error',
      // `any` from a library (JSON.parse, a response body) flowing into a typed place unchecked.
      '@typescript-eslint/no-unsafe-assignment': 'error',
      '@typescript-eslint/no-unsafe-return': 'error',
      '@typescript-eslint/no-unsafe-argument': 'error',
      '@typescript-eslint/no-unsafe-member-access': 'error',
      '@typescript-eslint/no-unsafe-call': 'error',
    },
  },
];
