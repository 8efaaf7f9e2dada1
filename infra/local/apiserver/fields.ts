/**
 * Field selectors: `metadata.name` and `metadata.namespace` for every kind, plus the labels a
 * built-in kind supports (Secret `type`, Event `involvedObject.*`, ...). Operators `=`, `==`,
 * `!=`; `\,` `\=` `\\` escapes. Anything else is a 400 "field label not supported".
 */
import type { ServedKind } from './kinds.ts';
import { badRequest } from './status.ts';

export interface FieldRequirement {
  field: string;
  neq: boolean;
  value: string;
}

function splitUnescaped(s: string, sep: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '\\' && i + 1 < s.length) {
      cur += c + s[i + 1];
      i++;
    } else if (c === sep) {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out;
}

const unescapeSelector = (s: string): string => s.replace(/\\(.)/g, '$1');

export function parseFieldSelector(input: string | undefined | null, kind: ServedKind): FieldRequirement[] {
  if (!input?.trim()) return [];
  const reqs: FieldRequirement[] = [];
  for (const part of splitUnescaped(input, ',')) {
    if (!part) continue;
    const m = /^(.*?)(!=|==|=)(.*)$/s.exec(
      part.replace(/\\[=!]/g, (x) => (x === '\\=' ? '\uE000' : '\uE001')),
    );
    if (!m) throw badRequest(`invalid selector: '${input}'; can't understand '${part}'`);
    const restore = (s: string) => unescapeSelector(s.replace(/\uE000/g, '\\=').replace(/\uE001/g, '\\!'));
    const field = restore(m[1]!).trim();
    const value = restore(m[3]!);
    if (field !== 'metadata.name' && field !== 'metadata.namespace' && !kind.fieldLabels.includes(field)) {
      throw badRequest(`field label not supported: ${field}`);
    }
    reqs.push({ field, neq: m[2] === '!=', value });
  }
  return reqs;
}

/** The string value of a field label on an object ("" when absent), as the server's field sets hold. */
export function fieldValue(obj: any, field: string): string {
  if (field === 'source') return String(obj?.source?.component ?? obj?.reportingComponent ?? '');
  let cur = obj;
  for (const p of field.split('.')) {
    if (cur === null || cur === undefined) return '';
    cur = cur[p];
  }
  if (cur === undefined || cur === null) return '';
  return String(cur);
}

export function matchesFields(reqs: FieldRequirement[], obj: any): boolean {
  for (const r of reqs) {
    const v = fieldValue(obj, r.field);
    if (r.neq ? v === r.value : v !== r.value) return false;
  }
  return true;
}
