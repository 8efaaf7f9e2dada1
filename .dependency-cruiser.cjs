/**
 * The layout's import boundaries (docs/adr/013-layout-and-boundaries.md), checked by
 * `npm run lint:boundaries` (part of `npm run lint`, so CI fails on a violation).
 *
 * - a function (functions/<step>/) imports only its own folder, shared/ and events/;
 * - shared/ and events/ never import functions/, bin/, infra/, scripts/ or test/;
 * - product code (functions/, shared/, events/, bin/) never imports infra/local/ or test/, except
 *   the two local-run commands, `metal3fn dev` and `metal3fn apiserver`, which are the embedded
 *   parts' own command line.
 */
module.exports = {
  forbidden: [
    {
      name: 'function-imports-another-function',
      comment: 'A function folder holds one step; what two steps use lives once in shared/.',
      severity: 'error',
      from: { path: '^functions/([^/]+)/' },
      to: { path: '^functions/', pathNot: '^functions/$1/' },
    },
    {
      name: 'function-imports-outside-shared-and-events',
      comment: 'A function imports only its own folder, shared/ and events/ (and packages).',
      severity: 'error',
      from: { path: '^functions/' },
      to: { path: '^(bin|infra|scripts|test)/' },
    },
    {
      name: 'shared-imports-upward',
      comment: 'shared/ and events/ are below every function and runtime entry.',
      severity: 'error',
      from: { path: '^(shared|events)/' },
      to: { path: '^(functions|bin|infra|scripts|test)/' },
    },
    {
      name: 'product-imports-local-or-test',
      comment: 'The embedded API server, simulators and test code never reach a deployed bundle.',
      severity: 'error',
      from: {
        path: '^(functions|shared|events|bin)/',
        pathNot: '^bin/commands/(dev|apiserver)\\.ts$',
      },
      to: { path: '^(infra/local|test)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/|\\.test\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs', '.json'] },
  },
};
