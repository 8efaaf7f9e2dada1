/** Strategic merge patch semantics of k8s.io/apimachinery pkg/util/strategicpatch, schema-driven. */
import { describe, expect, it } from 'vitest';
import { builtinType } from './builtin-types.ts';
import { strategicMergePatch } from './smp.ts';
import type { ApiError } from './status.ts';

const NODE = builtinType('', 'v1', 'Node')!;
const CM = builtinType('', 'v1', 'ConfigMap')!;

const node = {
  metadata: { name: 'n', finalizers: ['a'], labels: { x: '1' } },
  spec: { taints: [{ key: 't1', effect: 'NoSchedule' }] },
  status: {
    conditions: [
      { type: 'Ready', status: 'False' },
      { type: 'DiskPressure', status: 'False' },
    ],
    addresses: [{ type: 'InternalIP', address: '10.0.0.1' }],
  },
};

function failure(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (e) {
    return e as ApiError;
  }
  throw new Error('expected the patch to fail');
}

describe('strategic merge patch', () => {
  it('merges lists whose strategy is merge (by key, or as sets) and replaces atomic ones', () => {
    const out: any = strategicMergePatch(
      node,
      {
        metadata: { finalizers: ['b'], labels: { y: '2' } },
        spec: { taints: [{ key: 't2', effect: 'NoExecute' }] },
        status: {
          conditions: [
            { type: 'Ready', status: 'True' },
            { type: 'DiskPressure', $patch: 'delete' },
          ],
        },
      },
      NODE,
    );
    expect(out.metadata).toEqual({ name: 'n', finalizers: ['b', 'a'], labels: { x: '1', y: '2' } });
    expect(out.spec.taints).toEqual([{ key: 't2', effect: 'NoExecute' }]);
    expect(out.status.conditions).toEqual([{ type: 'Ready', status: 'True' }]);
    expect(out.status.addresses).toEqual(node.status.addresses);
  });
  it('leaves its inputs untouched', () => {
    const patch = { spec: { taints: null } };
    const before = structuredClone(node);
    strategicMergePatch(node, patch, NODE);
    expect([node, patch]).toEqual([before, { spec: { taints: null } }]);
  });
  it('orders merged lists by $setElementOrder, and by the patch before the live order', () => {
    const ordered: any = strategicMergePatch(
      node,
      {
        status: {
          '$setElementOrder/conditions': [{ type: 'DiskPressure' }, { type: 'Ready' }],
          conditions: [{ type: 'Ready', status: 'Unknown' }],
        },
      },
      NODE,
    );
    expect(ordered.status.conditions.map((c: any) => `${c.type}=${c.status}`)).toEqual([
      'DiskPressure=False',
      'Ready=Unknown',
    ]);
    const scalars: any = strategicMergePatch(
      { metadata: { finalizers: ['a', 'b', 'c'] } },
      { metadata: { finalizers: ['d', 'b'] } },
      CM,
    );
    // New items first where the live order cannot place them (mergeSortedSlice), then by live order.
    expect(scalars.metadata.finalizers).toEqual(['d', 'a', 'b', 'c']);
  });
  it('handles the directives: $patch replace and delete on maps, $retainKeys, $deleteFromPrimitiveList', () => {
    const cm = {
      metadata: { name: 'c', labels: { a: '1', b: '2' }, finalizers: ['x', 'y'] },
      data: { k: 'v', j: 'w' },
    };
    const replaced: any = strategicMergePatch(
      cm,
      { metadata: { labels: { $patch: 'replace', c: '3' } } },
      CM,
    );
    expect(replaced.metadata.labels).toEqual({ c: '3' });
    const emptied: any = strategicMergePatch(cm, { data: { $patch: 'delete' } }, CM);
    expect(emptied.data).toEqual({});
    const retained: any = strategicMergePatch(cm, { data: { $retainKeys: ['k'], k: 'v2' } }, CM);
    expect(retained.data).toEqual({ k: 'v2' });
    const pruned: any = strategicMergePatch(
      cm,
      { metadata: { '$deleteFromPrimitiveList/finalizers': ['x'] } },
      CM,
    );
    expect(pruned.metadata.finalizers).toEqual(['y']);
  });
  it('answers errors as the server does: 400 for bad directives, 500 for what the Go types cannot hold', () => {
    const retain = failure(() =>
      strategicMergePatch({ data: { a: '1' } }, { data: { $retainKeys: ['a'], b: '2' } }, CM),
    );
    expect([retain.code, retain.body.reason, retain.message]).toEqual([
      400,
      'BadRequest',
      'invalid patch format of retainKeys',
    ]);
    const noKey = failure(() =>
      strategicMergePatch(node, { status: { conditions: [{ status: 'True' }] } }, NODE),
    );
    expect([noKey.code, noKey.message]).toEqual([
      500,
      'map: map[status:True] does not contain declared merge key: type',
    ]);
    const unknown = failure(() =>
      strategicMergePatch({ spec: { a: {} } } as any, { spec: { a: { b: 1 } } }, NODE),
    );
    expect([unknown.code, unknown.message]).toEqual([
      500,
      'unable to find api field in struct NodeSpec for the json field "a"',
    ]);
    const crd = builtinType('apiextensions.k8s.io', 'v1', 'CustomResourceDefinition')!;
    const props = { spec: { versions: [], names: { kind: 'K' } }, status: { acceptedNames: { kind: 'K' } } };
    expect(
      (strategicMergePatch(props, { spec: { names: { plural: 'ks' } } }, crd) as any).spec.names,
    ).toEqual({
      kind: 'K',
      plural: 'ks',
    });
  });
});
