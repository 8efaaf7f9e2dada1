import { describe, expect, it } from 'vitest';
import { TerminalError } from '../../../shared/reconcile/errors.ts';
import {
  compileHostSelector,
  InvalidSelectorError,
  labelKeyProblem,
  labelValueProblem,
  matchesRequirement,
  matchesSelector,
  parseRequirement,
  selectorMentions,
  serverLabelSelector,
} from '../../../shared/selectors/labels.ts';

describe('parseRequirement: operators and their value-count rules', () => {
  const ok: [string, string[] | undefined, string][] = [
    ['!', undefined, 'doesnotexist'],
    ['=', ['a'], '='],
    ['==', ['a'], '='],
    ['in', ['a', 'b'], 'in'],
    ['In', ['a'], 'in'],
    ['IN', ['a'], 'in'],
    ['!=', ['a'], '!='],
    ['notin', ['a'], 'notin'],
    ['NotIn', ['a', 'b'], 'notin'],
    ['exists', undefined, 'exists'],
    ['Exists', [], 'exists'],
    ['DoesNotExist', undefined, 'doesnotexist'],
    ['gt', ['5'], 'gt'],
    ['Gt', ['-3'], 'gt'],
    ['lt', ['10'], 'lt'],
    ['LT', ['+7'], 'lt'],
  ];
  it.each(ok)('accepts %s with %j as %s', (operator, values, op) => {
    expect(parseRequirement({ key: 'k', operator, values })).toEqual({ key: 'k', op, values: values ?? [] });
  });

  const bad: [string, string[] | undefined, RegExp][] = [
    ['like', ['a'], /unknown operator "like"/],
    ['', ['a'], /unknown operator ""/],
    ['>', ['1'], /unknown operator ">"/],
    ['=', [], /needs exactly one value, got 0/],
    ['==', ['a', 'b'], /needs exactly one value, got 2/],
    ['!=', undefined, /needs exactly one value, got 0/],
    ['in', [], /needs at least one value, got 0/],
    ['notin', undefined, /needs at least one value/],
    ['exists', ['a'], /takes no values, got 1/],
    ['!', ['a'], /takes no values/],
    ['DoesNotExist', ['x', 'y'], /takes no values, got 2/],
    ['gt', ['a'], /needs an integer, got "a"/],
    ['lt', ['1.5'], /needs an integer/],
    ['gt', ['1', '2'], /exactly one integer value, got 2/],
    ['lt', [], /exactly one integer value, got 0/],
    ['in', ['bad value!'], /values\[0\]: label value "bad value!"/],
  ];
  it.each(bad)('rejects %s with %j', (operator, values, msg) => {
    const e = (() => {
      try {
        parseRequirement({ key: 'k', operator, values }, 2);
      } catch (err) {
        return err;
      }
    })();
    expect(e).toBeInstanceOf(InvalidSelectorError);
    expect(e).toBeInstanceOf(TerminalError);
    expect((e as TerminalError).reason).toBe('InvalidConfiguration');
    expect((e as Error).message).toMatch(/^invalid hostSelector: matchExpressions\[2\]/);
    expect((e as Error).message).toMatch(msg);
  });

  it('rejects an invalid key', () => {
    expect(() => parseRequirement({ key: 'Bad Key', operator: 'exists' })).toThrow(/label key "Bad Key"/);
    expect(() => parseRequirement({ key: '', operator: 'exists' })).toThrow(InvalidSelectorError);
  });
});

describe('label key and value validation', () => {
  it.each([
    ['key1', true],
    ['example.com/key_1.a-b', true],
    ['infrastructure.cluster.x-k8s.io/failure-domain', true],
    ['-bad', false],
    ['bad-', false],
    ['Example.COM/key', false],
    ['/name', false],
    ['a'.repeat(64), false],
    ['a'.repeat(63), true],
  ])('key %s valid=%s', (key, valid) => {
    expect(labelKeyProblem(key) === undefined).toBe(valid);
  });
  it.each([
    ['', true],
    ['value1', true],
    ['a.b_c-d', true],
    ['-x', false],
    ['x y', false],
    ['b'.repeat(64), false],
  ])('value %j valid=%s', (value, valid) => {
    expect(labelValueProblem(value) === undefined).toBe(valid);
  });
});

describe('matchesRequirement', () => {
  const labels = { key1: 'value1', key2: 'abc', n: '7', s: 'seven' };
  const cases: [string, string, string[], boolean][] = [
    ['key1', 'exists', [], true],
    ['nope', 'exists', [], false],
    ['nope', '!', [], true],
    ['key1', 'DoesNotExist', [], false],
    ['key1', '=', ['value1'], true],
    ['key1', '==', ['value2'], false],
    ['nope', '=', ['x'], false],
    ['key1', '!=', ['value1'], false],
    ['key1', '!=', ['other'], true],
    ['nope', '!=', ['x'], true], // != matches a host lacking the key
    ['key2', 'in', ['abc', '123'], true],
    ['key2', 'In', ['123'], false],
    ['nope', 'in', ['abc'], false],
    ['key2', 'notin', ['abc'], false],
    ['key2', 'NotIn', ['x', 'y'], true],
    ['nope', 'notin', ['abc'], true], // notin matches a host lacking the key
    ['n', 'gt', ['6'], true],
    ['n', 'gt', ['7'], false],
    ['n', 'lt', ['8'], true],
    ['n', 'lt', ['-1'], false],
    ['s', 'gt', ['1'], false], // non-integer label value never matches gt/lt
    ['nope', 'lt', ['100'], false],
  ];
  it.each(cases)('%s %s %j -> %s', (key, operator, values, expected) => {
    expect(matchesRequirement(labels, parseRequirement({ key, operator, values }))).toBe(expected);
  });
  it('handles hosts without labels', () => {
    expect(
      matchesRequirement(undefined, parseRequirement({ key: 'a', operator: 'notin', values: ['x'] })),
    ).toBe(true);
    expect(matchesRequirement(undefined, parseRequirement({ key: 'a', operator: 'exists' }))).toBe(false);
  });
});

describe('compileHostSelector and matchesSelector (seed 001 examples)', () => {
  const example4 = compileHostSelector({
    matchLabels: { key1: 'value1', key2: 'value2' },
    matchExpressions: [{ key: 'key3', operator: 'in', values: ['a', 'b', 'c'] }],
  });
  it.each([
    [{ key1: 'value1', key2: 'value2', key3: 'b' }, true],
    [{ key1: 'value1', key2: 'value2', key3: 'd' }, false],
    [{ key1: 'value1', key2: 'value2' }, false],
    [{ key1: 'value1', key3: 'a' }, false],
    [{ key1: 'valueX', key2: 'value2', key3: 'a' }, false],
  ])('example 4 on %j -> %s', (labels, expected) => {
    expect(matchesSelector(labels, example4)).toBe(expected);
  });
  it('an empty or absent selector matches everything', () => {
    expect(matchesSelector({}, compileHostSelector(undefined))).toBe(true);
    expect(matchesSelector(undefined, compileHostSelector({}))).toBe(true);
  });
  it('rejects invalid matchLabels', () => {
    expect(() => compileHostSelector({ matchLabels: { 'bad key': 'v' } })).toThrow(
      /matchLabels: label key "bad key"/,
    );
    expect(() => compileHostSelector({ matchLabels: { k: 'a,b' } })).toThrow(
      /matchLabels\["k"\]: label value "a,b"/,
    );
  });
  it('names the failing expression index', () => {
    expect(() =>
      compileHostSelector({
        matchExpressions: [
          { key: 'a', operator: 'exists' },
          { key: 'b', operator: 'between', values: ['1'] },
        ],
      }),
    ).toThrow(/matchExpressions\[1\]\.operator: unknown operator "between"/);
  });
  it('selectorMentions finds keys in labels and expressions', () => {
    expect(selectorMentions(example4, 'key1')).toBe(true);
    expect(selectorMentions(example4, 'key3')).toBe(true);
    expect(selectorMentions(example4, 'key4')).toBe(false);
  });
});

describe('serverLabelSelector', () => {
  it.each([
    [{}, [], ''],
    [{ b: '2', a: '1' }, [], 'a=1,b=2'],
    [{ a: '1' }, ['!cluster.x-k8s.io/cluster-name'], 'a=1,!cluster.x-k8s.io/cluster-name'],
    [{}, ['x=y'], 'x=y'],
  ])('%j + %j -> %s', (labels, extra, expected) => {
    expect(serverLabelSelector(labels as Record<string, string>, extra)).toBe(expected);
  });
});
