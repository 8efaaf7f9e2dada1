/** Placeholder: replaced by the evaluator. */
export interface CompiledRule {
  usesOldSelf: boolean;
  eval(self: unknown, oldSelf: unknown): unknown;
}
export function compileRule(rule: string): CompiledRule {
  if (rule.replace(/\s/g, '') === 'self==oldSelf')
    return { usesOldSelf: true, eval: (s, o) => JSON.stringify(s) === JSON.stringify(o) };
  throw new Error(`unsupported rule: ${rule}`);
}
export function evaluateRule(r: CompiledRule, self: unknown, old: unknown): boolean {
  return r.eval(self, old) === true;
}
