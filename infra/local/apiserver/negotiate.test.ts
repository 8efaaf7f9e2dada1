import { describe, expect, it } from 'vitest';
import { negotiate } from './negotiate.ts';

const meta = (as: string, v = 'v1') => `application/json;as=${as};g=meta.k8s.io;v=${v}`;

describe('negotiate (the Accept header -> the representation)', () => {
  it.each([
    [undefined, { as: 'Object' }],
    ['', { as: 'Object' }],
    ['application/json', { as: 'Object' }],
    ['*/*', { as: 'Object' }],
    ['application/yaml', { as: 'Object' }],
    ['application/vnd.kubernetes.protobuf, */*', { as: 'Object' }],
    // kubectl get's header: Table v1 first.
    [`${meta('Table')},${meta('Table', 'v1beta1')},application/json`, { as: 'Table', version: 'v1' }],
    // client-go's metadata client: protobuf first (answered in JSON here), then JSON.
    [
      `application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,${meta('PartialObjectMetadata')},application/json`,
      { as: 'PartialObjectMetadata', version: 'v1' },
    ],
    [meta('PartialObjectMetadataList', 'v1beta1'), { as: 'PartialObjectMetadataList', version: 'v1beta1' }],
    // An `as` not offered (kind, group or version) is passed over for the next clause.
    [`${meta('Gadget')},application/json`, { as: 'Object' }],
    [`application/json;as=Table;g=example.com;v=v1,${meta('Table')}`, { as: 'Table', version: 'v1' }],
    // Quality first, then order; q=0 is never chosen.
    [
      `application/json;q=0.5,${meta('PartialObjectMetadata')}`,
      { as: 'PartialObjectMetadata', version: 'v1' },
    ],
    [`${meta('Table')};q=0,application/json`, { as: 'Object' }],
    // Media types it cannot produce are passed over.
    ['text/html, application/json', { as: 'Object' }],
  ])('%s -> %o', (accept, want) => {
    expect(negotiate(accept)).toEqual(want);
  });

  it.each([['text/html'], [meta('Gadget')], [meta('PartialObjectMetadata', 'v2')], ['application/json;q=0']])(
    '%s -> 406 NotAcceptable',
    (accept) => {
      expect(() => negotiate(accept)).toThrow(expect.objectContaining({ code: 406 }));
      try {
        negotiate(accept);
      } catch (e) {
        expect((e as { body: unknown }).body).toMatchObject({ reason: 'NotAcceptable', code: 406 });
      }
    },
  );
});
