import { describe, expect, it } from 'vitest';
import {
  candidateIndex,
  lowestFreeIndex,
  nthFreeIndex,
  rankAmong,
} from '../../../shared/allocation/index-allocation.ts';
import {
  addFinalizer,
  dataName,
  hasFinalizer,
  metaDataSecretName,
  networkDataSecretName,
  removeFinalizer,
} from '../../../shared/allocation/objects.ts';
import { belongsToTemplate, templateLink } from '../../../shared/allocation/template-match.ts';

describe('lowest free index', () => {
  it('starts at 0 and fills holes first', () => {
    expect(lowestFreeIndex([])).toBe(0);
    expect(lowestFreeIndex([0, 1, 2])).toBe(3);
    expect(lowestFreeIndex([0, 2, 3])).toBe(1);
    expect(lowestFreeIndex([1, 2])).toBe(0);
  });

  it('the n-th free index skips the used ones', () => {
    expect(nthFreeIndex([0, 2, 3], 0)).toBe(1);
    expect(nthFreeIndex([0, 2, 3], 1)).toBe(4);
    expect(nthFreeIndex([0, 2, 3], 2)).toBe(5);
    expect(nthFreeIndex(new Set([5]), 5)).toBe(6);
  });

  it('rejects a negative or fractional rank', () => {
    expect(() => nthFreeIndex([], -1)).toThrow(RangeError);
    expect(() => nthFreeIndex([], 1.5)).toThrow(RangeError);
  });

  it('ranks by name among the pending claims; an unknown name ranks 0', () => {
    expect(rankAmong('b', ['c', 'a', 'b'])).toBe(1);
    expect(rankAmong('a', ['c', 'a', 'b', 'a'])).toBe(0);
    expect(rankAmong('z', ['a'])).toBe(0);
  });

  it('pending claims seeing one snapshot pick distinct indexes that are exactly the lowest free ones', () => {
    const used = [0, 3];
    const pending = ['m-4', 'm-1', 'm-3', 'm-2'];
    const picks = pending.map((p) => candidateIndex(used, p, pending)).sort((a, b) => a - b);
    expect(picks).toEqual([1, 2, 4, 5]);
  });
});

describe('template links (seed 001)', () => {
  const tpl = (name: string, templateReference?: string) => ({
    metadata: { name, namespace: 'ns' },
    spec: templateReference ? { templateReference } : {},
  });
  const data = (template: string, templateReference?: string, ns = 'ns') => ({
    metadata: { name: 'd', namespace: ns },
    spec: { template: { name: template }, ...(templateReference ? { templateReference } : {}) },
  });

  it('1: spec.template.name is the template', () => {
    expect(templateLink(tpl('new'), data('new'))).toBe('template');
  });
  it('2: same templateReference', () => {
    expect(templateLink(tpl('new', 'ref'), data('other', 'ref'))).toBe('templateReference');
  });
  it("3: the template's templateReference is the Metal3Data's template name", () => {
    expect(templateLink(tpl('new', 'old'), data('old'))).toBe('legacyTemplateReference');
  });
  it('unrelated data, other namespace, or empty references do not link', () => {
    expect(belongsToTemplate(tpl('new'), data('old'))).toBe(false);
    expect(belongsToTemplate(tpl('new', 'ref'), data('old', 'other'))).toBe(false);
    expect(belongsToTemplate(tpl('new'), data('new', undefined, 'elsewhere'))).toBe(false);
    expect(belongsToTemplate(tpl('new'), { metadata: { namespace: 'ns' }, spec: {} })).toBe(false);
  });
});

describe('object helpers', () => {
  it('adds and removes finalizers once', () => {
    const o = { metadata: { finalizers: ['a'] } };
    expect(addFinalizer(o, 'b')).toBe(true);
    expect(addFinalizer(o, 'b')).toBe(false);
    expect(hasFinalizer(o, 'b')).toBe(true);
    expect(removeFinalizer(o, 'a')).toBe(true);
    expect(removeFinalizer(o, 'a')).toBe(false);
    expect(o.metadata.finalizers).toEqual(['b']);
  });
  it('names follow the seed', () => {
    expect(dataName('nodepool-1', 0)).toBe('nodepool-1-0');
    expect(metaDataSecretName('machine-1', 3)).toBe('machine-1-metadata-3');
    expect(networkDataSecretName('machine-1', 3)).toBe('machine-1-networkdata-3');
  });
});
