/** Unit tests of the server's pure parts: selectors, JSONPath, CEL, schema, durations, protobuf. */
import { describe, expect, it } from 'vitest';
import { compileRule, evaluateRule } from './cel.ts';
import { deterministicClock } from './clock.ts';
import { aggregatedDiscovery, wantsAggregated } from './discovery.ts';
import { parseFieldSelector } from './fields.ts';
import { evalJsonPath } from './jsonpath.ts';
import { BUILTIN_KINDS, KindRegistry } from './kinds.ts';
import { matchesLabels, parseLabelSelector } from './labels.ts';
import { decodeProtobuf } from './protobuf.ts';
import { admitCustomResource } from './schema.ts';
import { ApiError } from './status.ts';
import { humanDuration } from './table.ts';

const ev = (rule: string, self: unknown, old?: unknown) => evaluateRule(compileRule(rule), self, old);

describe('label selectors', () => {
  it('parses every operator and matches like the API server', () => {
    const sel = parseLabelSelector('a=1,b!=2,c in (x, y),d notin (z),e,!f,g>3');
    expect(sel.map((r) => r.op)).toEqual(['eq', 'neq', 'in', 'notin', 'exists', 'notexists', 'gt']);
    expect(matchesLabels(sel, { a: '1', c: 'y', e: '', g: '4' })).toBe(true);
    expect(matchesLabels(sel, { a: '1', b: '2', c: 'y', e: '', g: '4' })).toBe(false);
    expect(matchesLabels(sel, { a: '1', c: 'y', e: '', f: 'x', g: '4' })).toBe(false);
    expect(matchesLabels(sel, { a: '1', c: 'y', e: '', g: '3' })).toBe(false);
    expect(matchesLabels(parseLabelSelector('x notin (a)'), {})).toBe(true);
  });
  it.each(['a in (b', 'a in ()', 'in', 'a=b c', '!', 'a b', 'k=v v', 'a>b', 'Bad Key=1'])(
    'rejects %j with 400',
    (s) => {
      let err: unknown;
      try {
        parseLabelSelector(s);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).code).toBe(400);
    },
  );
});

describe('field selectors', () => {
  const secrets = BUILTIN_KINDS.find((k) => k.plural === 'secrets')!;
  it('supports escapes and kind-specific labels', () => {
    expect(parseFieldSelector('metadata.name=a\\,b,type!=Opaque', secrets)).toEqual([
      { field: 'metadata.name', neq: false, value: 'a,b' },
      { field: 'type', neq: true, value: 'Opaque' },
    ]);
    expect(() => parseFieldSelector('spec.x=1', secrets)).toThrow(/field label not supported: spec.x/);
  });
});

describe('JSONPath', () => {
  const obj = {
    status: {
      conditions: [
        { type: 'A', status: 'False' },
        { type: 'Ready', status: 'True' },
      ],
    },
    metadata: { labels: { 'a.b/c': 'x' } },
  };
  it('evaluates paths, filters, wildcards and quoted keys', () => {
    expect(evalJsonPath('.status.conditions[?(@.type=="Ready")].status', obj)).toEqual(['True']);
    expect(evalJsonPath('{.status.conditions[*].type}', obj)).toEqual(['A', 'Ready']);
    expect(evalJsonPath(".metadata.labels['a.b/c']", obj)).toEqual(['x']);
    expect(evalJsonPath('.status.conditions[-1].type', obj)).toEqual(['Ready']);
    expect(evalJsonPath('.status.missing', obj)).toEqual([]);
  });
});

describe('CEL subset', () => {
  it('evaluates the rules CRDs commonly carry', () => {
    expect(ev('self == oldSelf', { a: [1] }, { a: [1] })).toBe(true);
    expect(ev('self == oldSelf', 'a', 'b')).toBe(false);
    expect(ev('!has(self.x) || self.x.size() > 0', { x: 'a' })).toBe(true);
    expect(ev('self.all(k, self[k] != "")', { a: 'x', b: '' })).toBe(false);
    expect(ev('self.exists_one(x, x > 2)', [1, 3, 2])).toBe(true);
    expect(ev("self.filter(x, x.startsWith('a')).size() == 2", ['ab', 'b', 'ac'])).toBe(true);
    expect(ev('int(self) % 2 == 0 ? true : false', '4')).toBe(true);
    expect(ev('self.min < self.max && self.max <= 10', { min: 1, max: 10 })).toBe(true);
    expect(ev('self.name.matches("^[a-z]+$") && self.name.lowerAscii() == self.name', { name: 'abc' })).toBe(
      true,
    );
    expect(ev('type(self) == "map"', {})).toBe(true);
  });
  it('a missing field is an evaluation error, not false', () => {
    expect(() => ev('self.x == 1', {})).toThrow(/no such key: x/);
    expect(ev('self.x == 1 || true', {})).toBe(true);
  });
  it('unsupported or invalid rules fail to compile', () => {
    for (const r of ['self.x ~ 1', 'foo(self)', 'self.unknownFn()', 'self.x ==', 'other == 1'])
      expect(() => compileRule(r)).toThrow();
    expect(compileRule('self.x == oldSelf.x').usesOldSelf).toBe(true);
  });
});

describe('structural schema', () => {
  const kind: any = {
    kind: 'T',
    group: 'g',
    builtin: false,
    schema: {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            a: { type: 'string', format: 'ipv4' },
            b: { type: 'array', minItems: 1, items: { type: 'integer' }, 'x-kubernetes-list-type': 'set' },
            m: { type: 'object', additionalProperties: { type: 'string' } },
            d: { type: 'object', default: {}, properties: { n: { type: 'integer', default: 3 } } },
          },
        },
      },
    },
  };
  it('defaults nested objects, prunes unknown fields, keeps additionalProperties', () => {
    const obj: any = {
      apiVersion: 'g/v1',
      kind: 'T',
      metadata: { name: 'x' },
      spec: { m: { k: 'v' }, junk: 1 },
      top: 1,
    };
    expect(admitCustomResource(kind, obj, undefined)).toEqual([]);
    expect(obj).toEqual({
      apiVersion: 'g/v1',
      kind: 'T',
      metadata: { name: 'x' },
      spec: { m: { k: 'v' }, d: { n: 3 } },
    });
  });
  it('CEL rules report message, messageExpression or the rule, at fieldPath', () => {
    const k: any = {
      kind: 'T',
      group: 'g',
      builtin: false,
      schema: {
        type: 'object',
        properties: {
          spec: {
            type: 'object',
            'x-kubernetes-validations': [
              {
                rule: 'self.min <= self.max',
                messageExpression: "'min ' + string(self.min) + ' exceeds max'",
                fieldPath: '.min',
              },
              { rule: 'self.max < 100' },
            ],
            properties: { min: { type: 'integer' }, max: { type: 'integer' } },
          },
        },
      },
    };
    const causes = admitCustomResource(k, { metadata: {}, spec: { min: 5, max: 200 } }, undefined);
    expect(causes.map((c) => `${c.field}: ${c.message}`)).toEqual([
      'spec: Invalid value: "object": failed rule: self.max < 100',
    ]);
    const c2 = admitCustomResource(k, { metadata: {}, spec: { min: 5, max: 2 } }, undefined);
    expect(c2.map((c) => `${c.field}: ${c.message}`)).toEqual([
      'spec.min: Invalid value: "object": min 5 exceeds max',
    ]);
  });
  it('reports formats, set duplicates, item types and minItems with paths', () => {
    const obj: any = { metadata: { name: 'x' }, spec: { a: '300.1.1.1', b: [1, 1, 'x'], m: { k: 1 } } };
    const causes = admitCustomResource(kind, obj, undefined);
    expect(causes.map((c) => `${c.field}: ${c.message}`)).toEqual([
      'spec.a: Invalid value: "300.1.1.1": spec.a in body must be of type ipv4: "300.1.1.1"',
      'spec.b[1]: Duplicate value: 1',
      'spec.b[2]: Invalid value: "string": spec.b[2] in body must be of type integer: "string"',
      'spec.m.k: Invalid value: "integer": spec.m.k in body must be of type string: "integer"',
    ]);
    expect(admitCustomResource(kind, { metadata: {}, spec: { b: [] } }, undefined)[0]?.message).toBe(
      'Invalid value: 0: spec.b in body should have at least 1 items',
    );
  });
});

describe('odds and ends', () => {
  it('human durations print like kubectl ages', () => {
    expect([5e3, 150e3, 5 * 3600e3 + 60e3, 3 * 86400e3].map(humanDuration)).toEqual([
      '5s',
      '2m30s',
      '5h1m',
      '3d',
    ]);
  });
  it('the deterministic clock gives reproducible uids, timestamps and names', () => {
    const a = deterministicClock(3);
    const b = deterministicClock(3);
    expect([a.uid(), a.uid(), a.timestamp(), a.random()]).toEqual([
      b.uid(),
      b.uid(),
      b.timestamp(),
      b.random(),
    ]);
    a.advance(61_000);
    expect(a.timestamp()).toBe('2026-01-01T00:01:01Z');
  });
  it('protobuf bodies of unknown kinds are 415', () => {
    const env = Buffer.concat([
      Buffer.from('k8s\u0000', 'latin1'),
      Buffer.from([0x0a, 0x0a, 0x0a, 0x02, 0x76, 0x31, 0x12, 0x04, 0x50, 0x6f, 0x64, 0x73]),
    ]);
    expect(() => decodeProtobuf(env)).toThrow(ApiError);
    expect(() => decodeProtobuf(Buffer.from('nope'))).toThrow(/unknown format/);
  });
});

describe('aggregated discovery', () => {
  it('is chosen only for a v2 APIGroupDiscoveryList accept', () => {
    const kubectl =
      'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';
    expect(wantsAggregated(kubectl)).toBe(true);
    expect(
      wantsAggregated(
        'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json',
      ),
    ).toBe(false);
    expect(wantsAggregated('application/json')).toBe(false);
  });
  it('lists resources with scope, verbs, short names and the status subresource', () => {
    const core = aggregatedDiscovery(new KindRegistry(), true) as any;
    expect(core.items).toHaveLength(1);
    const nodes = core.items[0].versions[0].resources.find((r: any) => r.resource === 'nodes');
    expect(nodes).toMatchObject({
      scope: 'Cluster',
      singularResource: 'node',
      shortNames: ['no'],
      responseKind: { group: '', version: 'v1', kind: 'Node' },
    });
    expect(nodes.subresources).toEqual([
      {
        subresource: 'status',
        responseKind: { group: '', version: 'v1', kind: 'Node' },
        verbs: ['get', 'patch', 'update'],
      },
    ]);
    const groups = aggregatedDiscovery(new KindRegistry(), false) as any;
    expect(groups.items.map((g: any) => g.metadata.name)).toContain('apiextensions.k8s.io');
    const ssar = groups.items.find((g: any) => g.metadata.name === 'authorization.k8s.io').versions[0]
      .resources[0];
    expect(ssar.verbs).toEqual(['create']);
  });
});
