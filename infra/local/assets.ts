/**
 * The data files the local system reads at run time (the CRDs, the sample cluster, the shipped
 * RBAC roles), found through one helper that works from source and from the CLI bundle.
 *
 * Paths are given relative to the repository root. From source they resolve against the checkout
 * (two folders up from this file). In the CLI bundle, `import.meta.url` is the bundle's own file,
 * so `scripts/build.ts` copies every entry of ASSETS to `assets/` beside the bundle (same relative
 * paths) and sets METAL3FN_BUNDLE_ASSETS to that folder's name with esbuild's `define`.
 *
 * Why a build-time constant and not a probe for a marker file: a probe could find the wrong copy
 * (a stale dist/ inside a checkout, a checkout above a copied bundle) and silently read other
 * files; the constant is fixed when the bundle is made, so a bundle reads only its own copy and a
 * source run only its checkout. The Lambda and relay bundles read no data files: the build fails
 * if this module ends up in one of them.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Set by esbuild `define` in the CLI bundle (the assets folder beside it); absent from source. */
declare const METAL3FN_BUNDLE_ASSETS: string | undefined;

/** Everything assetPath may name (files, or folders copied whole), relative to the repository root. */
export const ASSETS = [
  'infra/crds',
  'infra/local/crds',
  'infra/local/openapi',
  'infra/local/sample',
  'infra/local/sample-vmetal',
  'infra/deploy/common/rbac-functions.yaml',
  'infra/deploy/common/rbac-relay.yaml',
  'infra/deploy/workload-rbac.yaml',
  // `dev --runtime lambda` emulates the event source mappings with serverless.yml's settings.
  'serverless.yml',
] as const;

/** The folder paths are relative to: the checkout's root, or the bundle's assets folder. */
export const ASSET_ROOT =
  typeof METAL3FN_BUNDLE_ASSETS === 'string'
    ? fileURLToPath(new URL(`${METAL3FN_BUNDLE_ASSETS}/`, import.meta.url))
    : fileURLToPath(new URL('../../', import.meta.url));

/**
 * The absolute path of a data file or folder, given relative to the repository root
 * (e.g. `infra/local/sample`). It must be in ASSETS (or inside a folder that is), so that
 * the bundle carries it: anything else throws, from source too.
 */
export function assetPath(rel: string): string {
  const clean = rel.replace(/\/+$/, '');
  if (!ASSETS.some((a) => clean === a || clean.startsWith(`${a}/`)))
    throw new Error(`${rel} is not a packaged asset: add it to ASSETS in infra/local/assets.ts`);
  return join(ASSET_ROOT, clean);
}
