/** Decoding built-in objects as their Go structs: unknown fields, type errors, duplicates, base64. */
import { describe, expect, it } from 'vitest';
import { builtinOpenApi, builtinType } from './builtin-types.ts';
import { base64Error, decodeTyped, duplicateFields, goFormat } from './decode.ts';
import { BUILTIN_KINDS } from './kinds.ts';

const type = (group: string, kind: string) => {
  const t = builtinType(group, 'v1', kind);
  if (!t) throw new Error(`no type for ${kind}`);
  return t;
};

describe('OpenAPI data', () => {
  it('records its upstream source and has a schema for every built-in kind served', () => {
    expect(builtinOpenApi().source).toMatchObject({
      repository: 'kubernetes/kubernetes',
      path: 'api/openapi-spec/v3',
    });
    const missing = BUILTIN_KINDS.filter((k) => !builtinType(k.group, k.version, k.kind)).map((k) => k.kind);
    expect(missing).toEqual([]);
  });
  it('compiles a kind once (the same tree on every call)', () => {
    expect(builtinType('', 'v1', 'Node')).toBe(builtinType('', 'v1', 'Node'));
  });
});

describe('typed decoding', () => {
  it('drops unknown fields and reports them by path (map keys and list indexes included)', () => {
    const node: any = {
      metadata: { name: 'n', bogus: 1 },
      spec: { providerId: 'x', taints: [{ key: 'k', effect: 'NoSchedule', extra: true }] },
    };
    expect(decodeTyped(type('', 'Node'), node)).toEqual({
      unknown: ['metadata.bogus', 'spec.providerId', 'spec.taints[0].extra'],
    });
    expect(node).toEqual({ metadata: { name: 'n' }, spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] } });
  });
  it('names the innermost struct and the field path from the root in type errors, as Go does', () => {
    const cases: [string, any, string][] = [
      [
        'Secret',
        { stringData: { a: 1 } },
        'json: cannot unmarshal number into Go struct field Secret.stringData of type string',
      ],
      [
        'Secret',
        { data: 'x' },
        'json: cannot unmarshal string into Go struct field Secret.data of type map[string][]uint8',
      ],
      [
        'Node',
        { spec: 'x' },
        'json: cannot unmarshal string into Go struct field Node.spec of type v1.NodeSpec',
      ],
      [
        'Node',
        { spec: { taints: [{ key: 'k', effect: 3 }] } },
        'json: cannot unmarshal number into Go struct field Taint.spec.taints.effect of type string',
      ],
      [
        'Node',
        { spec: { unschedulable: 'yes' } },
        'json: cannot unmarshal string into Go struct field NodeSpec.spec.unschedulable of type bool',
      ],
      [
        'Node',
        { status: { daemonEndpoints: { kubeletEndpoint: { Port: 1.5 } } } },
        'json: cannot unmarshal number 1.5 into Go struct field DaemonEndpoint.status.daemonEndpoints.kubeletEndpoint.Port of type int32',
      ],
      ['Secret', { data: { a: '%%' } }, 'illegal base64 data at input byte 0'],
      [
        'Node',
        { status: { capacity: { cpu: 'lots' } } },
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
      ],
      [
        'Node',
        { metadata: { creationTimestamp: 5 } },
        'json: cannot unmarshal number into Go value of type string',
      ],
    ];
    for (const [kind, obj, message] of cases)
      expect([kind, decodeTyped(type('', kind), obj).error]).toEqual([kind, message]);
  });
  it('turns nulls into zero values: absent struct fields, "" in string maps', () => {
    const cm: any = { data: { a: null, b: 'x' }, binaryData: null, metadata: { labels: null } };
    expect(decodeTyped(type('', 'ConfigMap'), cm)).toEqual({ unknown: [] });
    expect(cm).toEqual({ data: { a: '', b: 'x' }, metadata: {} });
  });
  it('accepts what the Go types accept: quantities as numbers or strings, int-or-string, RFC 3339 times', () => {
    const node = {
      metadata: { creationTimestamp: '2026-01-01T00:00:00Z' },
      status: { capacity: { cpu: 4, memory: '8Gi', pods: '110' } },
    };
    expect(decodeTyped(type('', 'Node'), node)).toEqual({ unknown: [] });
    const event = { eventTime: '2026-01-01T00:00:00Z' };
    expect(decodeTyped(type('', 'Event'), event).error).toMatch(
      /^parsing time "2026-01-01T00:00:00Z" as "2006-01-02T15:04:05.000000Z07:00"/,
    );
  });
});

describe('base64 as Go decodes []byte', () => {
  it('reports the offset Go reports', () => {
    expect(base64Error('YWJj')).toBeUndefined();
    expect(base64Error('YQ==')).toBeUndefined();
    expect(base64Error('YW\nJj')).toBeUndefined();
    expect(base64Error('abc')).toBe('illegal base64 data at input byte 0');
    expect(base64Error('YWJj!')).toBe('illegal base64 data at input byte 4');
    expect(base64Error('YQ=')).toBe('illegal base64 data at input byte 3');
    expect(base64Error('YQ==YQ==')).toBe('illegal base64 data at input byte 4');
    expect(base64Error('Y===')).toBe('illegal base64 data at input byte 1');
  });
});

describe('duplicate fields of a JSON text', () => {
  // Each text alone, and with its own parse (which spares the sets of keys where it can).
  const both = (text: string): string[][] => [duplicateFields(text), duplicateFields(text, JSON.parse(text))];

  it('finds repeated keys by path, ignoring braces and quotes inside strings', () => {
    for (const found of both('{"a":1,"b":{"c":"{\\"c\\":1}","c":2},"l":[{"k":1,"k":2},[]],"a":3}'))
      expect(found).toEqual(['b.c', 'l[0].k', 'a']);
    for (const found of both('{"x\\u0041":1,"xA":2}')) expect(found).toEqual(['xA']);
    for (const found of both('{"a": [1, 2], "b": {}}')) expect(found).toEqual([]);
    for (const found of both('[{"op":"add","op":"remove"}]')) expect(found).toEqual(['[0].op']);
  });

  it('finds those inside a repeated key, whose parse kept only the last value', () => {
    const text = '{"m":{"a":{"x":1,"x":2},"b":[{"y":1}],"a":{"y":1,"z":2}},"n":{"p":{"q":1,"q":2}}}';
    for (const found of both(text)) expect(found).toEqual(['m.a.x', 'm.a', 'n.p.q']);
    for (const found of both('{"s":{"k\\"}":{"\\"":1,"\\"":2}}}')) expect(found).toEqual(['s.k"}."']);
  });
});

describe("Go's %+v of decoded JSON", () => {
  it('prints maps sorted, lists spaced, float64 in its shortest form', () => {
    expect(goFormat({ b: [1, 'x'], a: { c: null }, d: true })).toBe('map[a:map[c:<nil>] b:[1 x] d:true]');
    expect([1e6, 123456, 1.5, 0.00001].map(goFormat)).toEqual(['1e+06', '123456', '1.5', '1e-05']);
  });
});
