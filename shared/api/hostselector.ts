import { z } from 'zod';
import { StringMapSchema } from './meta.ts';

/**
 * Operators accepted in `hostSelector.matchExpressions[].operator`, compared case-insensitively
 * (DESIGN.md §2): the seed's k8s-internal spellings plus the LabelSelector names. `DoesNotExist`
 * is accepted here although the reference rejects it (it lower-cases to an unknown operator).
 */
export const HOST_SELECTOR_OPERATORS = [
  '!',
  '=',
  '==',
  'in',
  '!=',
  'notin',
  'exists',
  'gt',
  'lt',
  'doesnotexist',
] as const;

/** The meaning of an operator once spelling is normalised. */
export type CanonicalOperator = 'in' | 'notin' | 'exists' | 'doesnotexist' | '=' | '!=' | 'gt' | 'lt';

const CANONICAL: Record<(typeof HOST_SELECTOR_OPERATORS)[number], CanonicalOperator> = {
  '!': 'doesnotexist',
  doesnotexist: 'doesnotexist',
  '=': '=',
  '==': '=',
  '!=': '!=',
  in: 'in',
  notin: 'notin',
  exists: 'exists',
  gt: 'gt',
  lt: 'lt',
};

const isOperator = (op: string): op is keyof typeof CANONICAL => Object.hasOwn(CANONICAL, op);

/** Normalises an operator (`In`, `==`, `!`, `DoesNotExist`...) or returns undefined when it is not one. */
export function canonicalOperator(operator: string): CanonicalOperator | undefined {
  const op = operator.toLowerCase();
  return isOperator(op) ? CANONICAL[op] : undefined;
}

/** Case-insensitive alternation without `(?i)`, which neither JS RegExp nor every validator supports. */
function caseInsensitive(word: string): string {
  return [...word]
    .map((c) => (c.toLowerCase() !== c.toUpperCase() ? `[${c.toLowerCase()}${c.toUpperCase()}]` : c))
    .join('');
}
export const HOST_SELECTOR_OPERATOR_PATTERN = `^(${HOST_SELECTOR_OPERATORS.map(caseInsensitive).join('|')})$`;

const INTEGER = /^[+-]?\d+$/;

export const HostSelectorRequirementSchema = z.lazy(() =>
  z
    .looseObject({
      key: z.string().min(1, 'key must not be empty'),
      operator: z.string().meta({ pattern: HOST_SELECTOR_OPERATOR_PATTERN }),
      values: z.array(z.string()).optional(),
    })
    .superRefine((req, ctx) => {
      const op = canonicalOperator(req.operator);
      const values = req.values ?? [];
      const fail = (path: (string | number)[], message: string) =>
        ctx.addIssue({ code: 'custom', path, message });
      if (op === undefined) {
        fail(
          ['operator'],
          `unknown operator "${req.operator}": use one of !, =, ==, in, !=, notin, exists, gt, lt (or In, NotIn, Exists, DoesNotExist), case-insensitive`,
        );
        return;
      }
      switch (op) {
        case '=':
        case '!=':
          if (values.length !== 1)
            fail(['values'], `operator "${req.operator}" needs exactly one value, got ${values.length}`);
          break;
        case 'in':
        case 'notin':
          if (values.length === 0) fail(['values'], `operator "${req.operator}" needs at least one value`);
          break;
        case 'exists':
        case 'doesnotexist':
          if (values.length !== 0)
            fail(['values'], `operator "${req.operator}" takes no values, got ${values.length}`);
          break;
        case 'gt':
        case 'lt':
          if (values.length !== 1)
            fail(
              ['values'],
              `operator "${req.operator}" needs exactly one integer value, got ${values.length}`,
            );
          else if (!INTEGER.test(values[0]!))
            fail(['values', 0], `operator "${req.operator}" needs an integer value, got "${values[0]}"`);
          break;
      }
    }),
);
export type HostSelectorRequirement = z.infer<typeof HostSelectorRequirementSchema>;

/** Which BareMetalHosts a Metal3Machine may take: labels that must match exactly, plus expressions. */
export const HostSelectorSchema = z.lazy(() =>
  z.looseObject({
    matchLabels: StringMapSchema.optional(),
    matchExpressions: z.array(HostSelectorRequirementSchema).optional(),
  }),
);
export type HostSelector = z.infer<typeof HostSelectorSchema>;
