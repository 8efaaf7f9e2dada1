/**
 * The deployment manifests run the image `npm run image` builds: every container of every
 * kustomization (rendered by kubectl kustomize) names ghcr.io/metal3-functions/metal3fn tagged
 * with the package version (never `latest`), leaves the command to the image's entrypoint
 * (`node /app/metal3fn.mjs`, scripts/image.ts) and starts one of the commands the image holds.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

const ROOT = new URL('../../../', import.meta.url).pathname;
const KUBECTL = ['/usr/bin/kubectl', '/usr/local/bin/kubectl'].find((p) => existsSync(p));
const VERSION = (JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { version: string }).version;
// The image's commands (bin/cli/production.ts). TODO(lead, issue 20): 'template' when it lands.
const IN_IMAGE = ['relay', 'worker', 'http', 'replay', 'render', 'migrate-provider-ids'];

function containers(dir: string): { where: string; image: string; command?: string[]; args?: string[] }[] {
  const r = spawnSync(KUBECTL!, ['kustomize', dir], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  expect(r.status, r.stderr).toBe(0);
  return parseAllDocuments(r.stdout)
    .map((d) => d.toJS())
    .flatMap((d: any) =>
      [...(d.spec?.template?.spec?.containers ?? []), ...(d.spec?.template?.spec?.initContainers ?? [])].map(
        (c: any) => ({ where: `${d.kind}/${d.metadata.name}/${c.name ?? ''}`, ...c }),
      ),
    );
}

describe.skipIf(!KUBECTL)('the manifests run the versioned image', () => {
  it.each(['infra/deploy', 'infra/knative', 'infra/knative/apiserversource'])('%s', (dir) => {
    const found = containers(dir);
    expect(found.length).toBeGreaterThan(0);
    for (const c of found) {
      expect(c.image, c.where).toBe(`ghcr.io/metal3-functions/metal3fn:${VERSION}`);
      expect(c.command, c.where).toBeUndefined();
      expect(IN_IMAGE, c.where).toContain(c.args?.[0]);
    }
  });
});
