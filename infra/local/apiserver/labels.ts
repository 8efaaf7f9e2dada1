/**
 * Label selectors as the API server parses them (k8s.io/apimachinery/pkg/labels):
 * `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, `k>1`, `k<1`; commas AND.
 * `!=` and `notin` match objects that lack the key.
 */
import { badRequest } from './status.ts';

export type LabelOp = 'eq' | 'neq' | 'in' | 'notin' | 'exists' | 'notexists' | 'gt' | 'lt';
export interface LabelRequirement {
  key: string;
  op: LabelOp;
  values: string[];
}
export type LabelSelector = LabelRequirement[];

const NAME = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$/;
const PREFIX = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function validKey(key: string): boolean {
  const slash = key.indexOf('/');
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (slash >= 0) {
    const prefix = key.slice(0, slash);
    if (!prefix || prefix.length > 253 || !PREFIX.test(prefix)) return false;
  }
  return name.length > 0 && name.length <= 63 && NAME.test(name);
}

const validValue = (v: string): boolean => v === '' || (v.length <= 63 && NAME.test(v));

type Tok = { t: 'id' | 'op'; v: string };

function tokenize(s: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (c === ' ' || c === '\t') {
      i++;
      continue;
    }
    const two = s.slice(i, i + 2);
    if (two === '==' || two === '!=') {
      out.push({ t: 'op', v: two });
      i += 2;
      continue;
    }
    if ('=!(),<>'.includes(c)) {
      out.push({ t: 'op', v: c });
      i++;
      continue;
    }
    let j = i;
    while (j < s.length && !' \t=!(),<>'.includes(s[j]!)) j++;
    out.push({ t: 'id', v: s.slice(i, j) });
    i = j;
  }
  return out;
}

function fail(why: string): never {
  throw badRequest(`unable to parse requirement: ${why}`);
}

/** Parses a selector string; throws a 400 ApiError when it is invalid. */
export function parseLabelSelector(input: string | undefined | null): LabelSelector {
  if (!input?.trim()) return [];
  const toks = tokenize(input);
  const reqs: LabelRequirement[] = [];
  let p = 0;
  const peek = () => toks[p];
  const next = () => toks[p++];
  while (p < toks.length) {
    let tok = next()!;
    let req: LabelRequirement;
    if (tok.t === 'op' && tok.v === '!') {
      tok = next() ?? fail('found end of string, expected: identifier');
      if (tok.t !== 'id') fail(`found '${tok.v}', expected: identifier`);
      req = { key: tok.v, op: 'notexists', values: [] };
    } else {
      if (tok.t !== 'id' || tok.v === 'in' || tok.v === 'notin') {
        fail(`found '${tok.v}', expected: !, identifier, or 'end of string'`);
      }
      const key = tok.v;
      const op = peek();
      if (!op || (op.t === 'op' && op.v === ',')) {
        req = { key, op: 'exists', values: [] };
      } else if (op.t === 'id' && (op.v === 'in' || op.v === 'notin')) {
        p++;
        const open = next();
        if (open?.v !== '(') fail(`found '${open?.v ?? ''}', expected: '('`);
        const values: string[] = [];
        for (;;) {
          const v = next() ?? fail(`found end of string, expected: ')'`);
          if (v.t === 'op' && v.v === ')') break;
          if (v.t === 'op' && v.v === ',') {
            // an empty value between commas
            values.push('');
            continue;
          }
          values.push(v.v);
          const sep = next() ?? fail(`found end of string, expected: ',' or ')'`);
          if (sep.v === ')') break;
          if (sep.v !== ',') fail(`found '${sep.v}', expected: ',' or ')'`);
        }
        if (values.length === 0) fail(`for 'in', 'notin' operators, values set can't be empty`);
        req = { key, op: op.v === 'in' ? 'in' : 'notin', values };
      } else if (op.t === 'op' && ['=', '==', '!=', '>', '<'].includes(op.v)) {
        p++;
        const v = peek();
        let value = '';
        if (v && v.t === 'id') {
          value = v.v;
          p++;
        }
        const kind: LabelOp = op.v === '!=' ? 'neq' : op.v === '>' ? 'gt' : op.v === '<' ? 'lt' : 'eq';
        if ((kind === 'gt' || kind === 'lt') && !/^-?\d+$/.test(value)) {
          fail(`for 'Gt', 'Lt' operators, the value must be an integer`);
        }
        req = { key, op: kind, values: [value] };
      } else {
        fail(`found '${op.v}', expected: in, notin, =, ==, !=, gt, lt`);
      }
    }
    if (!validKey(req.key))
      fail(
        `key: Invalid value: "${req.key}": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
      );
    for (const v of req.values) {
      if (req.op !== 'gt' && req.op !== 'lt' && !validValue(v)) {
        fail(
          `values[0][${req.key}]: Invalid value: "${v}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
        );
      }
    }
    reqs.push(req);
    const sep = next();
    if (sep && !(sep.t === 'op' && sep.v === ',')) fail(`found '${sep.v}', expected: ',' or 'end of string'`);
  }
  return reqs;
}

export function matchesLabels(sel: LabelSelector, labels: Record<string, string> | undefined): boolean {
  for (const r of sel) {
    const has = labels !== undefined && Object.hasOwn(labels, r.key);
    const v = has ? labels![r.key]! : undefined;
    switch (r.op) {
      case 'eq':
        if (v !== r.values[0]) return false;
        break;
      case 'neq':
        if (has && v === r.values[0]) return false;
        break;
      case 'in':
        if (!has || !r.values.includes(v!)) return false;
        break;
      case 'notin':
        if (has && r.values.includes(v!)) return false;
        break;
      case 'exists':
        if (!has) return false;
        break;
      case 'notexists':
        if (has) return false;
        break;
      case 'gt':
      case 'lt': {
        if (!has || !/^-?\d+$/.test(v!)) return false;
        const n = Number(v);
        const bound = Number(r.values[0]);
        if (r.op === 'gt' ? !(n > bound) : !(n < bound)) return false;
        break;
      }
    }
  }
  return true;
}
