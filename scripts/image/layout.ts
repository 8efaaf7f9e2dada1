/**
 * An OCI image layout (image-spec v1.1 "image-layout"): `oci-layout`, `index.json` naming one
 * linux/amd64 manifest by tag (org.opencontainers.image.ref.name), and content-addressed blobs
 * under blobs/sha256/. JSON is written with a fixed key order, so equal inputs give equal digests.
 */
import { createHash } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LAYER_MEDIA_TYPE, type LayerBlob } from './layer.ts';

export const MANIFEST_MEDIA_TYPE = 'application/vnd.oci.image.manifest.v1+json';
export const CONFIG_MEDIA_TYPE = 'application/vnd.oci.image.config.v1+json';
export const INDEX_MEDIA_TYPE = 'application/vnd.oci.image.index.v1+json';

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
}

/** The image config's `config` (what a runtime uses), as in image-spec's config.md. */
export interface RuntimeConfig {
  User: string;
  Env: string[];
  Entrypoint: string[];
  Cmd: string[];
  WorkingDir: string;
  Labels: Record<string, string>;
}

export interface ImageSpec {
  /** RFC 3339 time for `created` and each history entry. */
  created: string;
  config: RuntimeConfig;
  /** Bottom first, each with what made it (the config's history). */
  layers: { blob: LayerBlob; createdBy: string }[];
  /** The tag, org.opencontainers.image.ref.name in index.json. */
  refName: string;
  /** The manifest's annotations. */
  annotations: Record<string, string>;
}

export interface WrittenImage {
  /** The manifest's digest ("sha256:..."), what a registry and a deployment name it by. */
  digest: string;
  manifest: Descriptor;
  config: Descriptor;
  layers: Descriptor[];
}

const sha256 = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

/**
 * Replaces `out` with the layout of one image: written beside it first, so a failed write leaves
 * the previous layout, not part of a new one.
 */
export async function writeLayout(out: string, spec: ImageSpec): Promise<WrittenImage> {
  const next = `${out}.writing-${process.pid}`;
  await rm(next, { recursive: true, force: true });
  try {
    const written = await writeInto(next, spec);
    await rm(out, { recursive: true, force: true });
    await rename(next, out);
    return written;
  } finally {
    await rm(next, { recursive: true, force: true });
  }
}

async function writeInto(out: string, spec: ImageSpec): Promise<WrittenImage> {
  const blobs = join(out, 'blobs', 'sha256');
  await mkdir(blobs, { recursive: true });
  const put = async (mediaType: string, bytes: Buffer): Promise<Descriptor> => {
    const digest = sha256(bytes);
    await writeFile(join(blobs, digest.slice('sha256:'.length)), bytes);
    return { mediaType, digest, size: bytes.length };
  };
  const json = (v: unknown) => Buffer.from(JSON.stringify(v));

  const layers: Descriptor[] = [];
  for (const l of spec.layers) layers.push(await put(LAYER_MEDIA_TYPE, l.blob.bytes));
  const config = await put(
    CONFIG_MEDIA_TYPE,
    json({
      created: spec.created,
      architecture: 'amd64',
      os: 'linux',
      config: spec.config,
      rootfs: { type: 'layers', diff_ids: spec.layers.map((l) => `sha256:${l.blob.diffId}`) },
      history: spec.layers.map((l) => ({ created: spec.created, created_by: l.createdBy })),
    }),
  );
  const manifest = await put(
    MANIFEST_MEDIA_TYPE,
    json({ schemaVersion: 2, mediaType: MANIFEST_MEDIA_TYPE, config, layers, annotations: spec.annotations }),
  );
  const index = {
    schemaVersion: 2,
    mediaType: INDEX_MEDIA_TYPE,
    manifests: [
      {
        ...manifest,
        platform: { architecture: 'amd64', os: 'linux' },
        annotations: { 'org.opencontainers.image.ref.name': spec.refName },
      },
    ],
  };
  await writeFile(join(out, 'index.json'), json(index));
  await writeFile(join(out, 'oci-layout'), json({ imageLayoutVersion: '1.0.0' }));
  return { digest: manifest.digest, manifest, config, layers };
}
