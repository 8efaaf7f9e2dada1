/** What rendering reads besides the template: the objects of one Metal3Data and its pool addresses. */
import type { BareMetalHost, Machine, Metal3DataTemplateSpec, Metal3Machine } from '../api/index.ts';
import type { AllocatedAddress } from '../ipam/allocate.ts';

export type TemplateSpec = Metal3DataTemplateSpec;

/** The Kubernetes objects a template may read names, labels and annotations from. */
export interface RenderObjects {
  machine: Machine;
  metal3Machine: Metal3Machine;
  bmh: BareMetalHost;
}

export interface RenderInputs extends RenderObjects {
  /** The Metal3Data index. */
  index: number;
  /** The Metal3Data namespace. */
  namespace: string;
  /** The address claimed from each referenced pool, by pool name (see referencedPools). */
  addresses: Record<string, AllocatedAddress>;
}
