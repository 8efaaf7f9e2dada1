/** Rendering of a Metal3Data's metaData and networkData (pure; see docs/contracts.md). */
import type { RenderInputs, TemplateSpec } from './inputs.ts';
import { type MetaData, renderMetaData } from './metadata.ts';
import { type NetworkData, renderNetworkData } from './networkdata.ts';

export { RenderError } from './errors.ts';
export type { RenderInputs, RenderObjects, TemplateSpec } from './inputs.ts';
export { type MetaData, providerIdPath, renderMetaData } from './metadata.ts';
export * from './networkdata.ts';
export { isMetal3Pool, METAL3_POOL_KIND, type PoolRef, poolAddress, referencedPools } from './pools.ts';
// serialize.ts is not re-exported: it loads `yaml`, which a renderData Lambda start must not
// (functions/render-data/secrets.ts imports it on the first render). Import it directly.

export interface RenderedData {
  /** Always rendered: it carries `providerid` even when the template has no metaData. */
  metaData: MetaData;
  /** Only when the template has a networkData part (no Secret otherwise, as the reference). */
  networkData: NetworkData | undefined;
}

/** Renders both parts; throws RenderError (terminal, names the template field) on bad input. */
export function renderData(template: TemplateSpec, inputs: RenderInputs): RenderedData {
  return {
    metaData: renderMetaData(template, inputs),
    networkData: template.networkData ? renderNetworkData(template, inputs) : undefined,
  };
}
