import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { structuralSchemaOf, toStructural } from '../../shared/api/crd/structural.ts';

describe('toStructural', () => {
  it('marks passthrough objects and any-valued maps as preserving unknown fields', () => {
    const s = structuralSchemaOf(
      z.object({ loose: z.looseObject({ a: z.string() }), any: z.record(z.string(), z.unknown()) }),
    );
    expect(s.properties).toEqual({
      loose: {
        type: 'object',
        properties: { a: { type: 'string' } },
        required: ['a'],
        'x-kubernetes-preserve-unknown-fields': true,
      },
      any: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    });
  });

  it('keeps typed maps as additionalProperties without propertyNames', () => {
    expect(structuralSchemaOf(z.record(z.string(), z.int()))).toEqual({
      type: 'object',
      additionalProperties: { type: 'integer' },
    });
  });

  it('keeps defaults and makes defaulted fields optional', () => {
    const s = structuralSchemaOf(z.object({ mtu: z.int().min(1).default(1500), id: z.string() }));
    expect(s.properties).toEqual({
      mtu: { type: 'integer', minimum: 1, default: 1500 },
      id: { type: 'string' },
    });
    expect(s.required).toEqual(['id']);
  });

  it('turns literals into enums and merges enum unions', () => {
    expect(structuralSchemaOf(z.literal('x'))).toEqual({ type: 'string', enum: ['x'] });
    expect(structuralSchemaOf(z.union([z.enum(['a', 'b']), z.literal('c')]))).toEqual({
      type: 'string',
      enum: ['a', 'b', 'c'],
    });
  });

  it('turns a nullable into nullable: true', () => {
    expect(structuralSchemaOf(z.string().nullable())).toEqual({ type: 'string', nullable: true });
  });

  it('keeps int-or-string as the Kubernetes extension only', () => {
    const s = structuralSchemaOf(z.union([z.int(), z.string()]).meta({ 'x-kubernetes-int-or-string': true }));
    expect(s).toEqual({ 'x-kubernetes-int-or-string': true });
  });

  it('refuses shapes a structural schema cannot express', () => {
    expect(() =>
      structuralSchemaOf(z.object({ u: z.union([z.string(), z.object({ a: z.string() })]) })),
    ).toThrow(/<root>\.u: a union of different shapes/);
    expect(() => toStructural({ $ref: '#/$defs/x' })).toThrow(/\$ref/);
    expect(() => toStructural({ properties: {}, description: 'no type' }, 'x')).toThrow(/x: no type/);
  });
});
