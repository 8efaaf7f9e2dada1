/**
 * Go text/template with sprig, rendered as Go renders it (see docs/adr/014-go-template-engine.md).
 * Load this module with a dynamic import() where the first render happens, so that no process
 * start pays for it:  const { renderGoTemplate } = await import('../../shared/gotemplate/index.ts');
 *
 * The template sees `.Values` = the given value; option missingkey=error.
 */
import { CapError, TemplateError, UnsupportedError } from './errors.ts';
import { type Limits, Output, State } from './exec.ts';
import { decodeGoJSON, JSONError } from './json.ts';
import { ParseError, parseTemplates, type TreeSet } from './parser.ts';
import { funcMap } from './sprig/index.ts';
import { setListCap } from './sprig/lists.ts';
import { setRepeatCap } from './sprig/strings.ts';
import { UnsupportedByteError } from './strconv.ts';
import { goDict, type RV } from './value.ts';

export { TemplateError } from './errors.ts';
export { structType } from './struct.ts';
export { fromJSON, GoValue, type RV } from './value.ts';

/** The name user-data templates are parsed under (Go's errors print it: `template: user-data:3:…`). */
export const USER_DATA_TEMPLATE_NAME = 'user-data';

export const DEFAULT_LIMITS: Limits = {
  maxOutputBytes: 1024 * 1024,
  maxSteps: 1_000_000,
  maxTemplateDepth: 200,
};

/** The JSON text of a values file decoded as Go's encoding/json decodes into interface {}. */
export function decodeValuesJSON(text: string): RV {
  try {
    return decodeGoJSON(text);
  } catch (e) {
    if (e instanceof JSONError) throw new TemplateError(`values: ${e.message}`, 'parse');
    throw e;
  }
}

const isStackOverflow = (e: unknown) => e instanceof RangeError && /call stack/.test(e.message);

/** Parsed templates by name and text (execution never changes a tree); a few are kept. */
const parsed = new Map<string, TreeSet>();
const PARSED_KEPT = 32;

function parse(name: string, text: string, funcs: Map<string, unknown>): TreeSet {
  const key = `${name}\u0000${text}`;
  const hit = parsed.get(key);
  if (hit) return hit;
  let trees: TreeSet;
  try {
    trees = parseTemplates(name, text, (n) => funcs.has(n));
  } catch (e) {
    if (e instanceof ParseError) throw new TemplateError(e.message, 'parse');
    if (e instanceof UnsupportedByteError) {
      throw new TemplateError(`template: ${name}: ${e.message}`, 'unsupported');
    }
    if (isStackOverflow(e)) {
      throw new TemplateError(`template: ${name}: nesting too deep for the parser (the depth cap)`, 'cap');
    }
    throw e;
  }
  if (parsed.size >= PARSED_KEPT) parsed.delete(parsed.keys().next().value!);
  parsed.set(key, trees);
  return trees;
}

/**
 * Parses `text` as template `name` without executing it (a claim's template is checked before any
 * host is taken). Throws TemplateError with Go's parse message.
 */
export function parseGoTemplate(name: string, text: string): void {
  parse(name, text, funcMap());
}

/**
 * Renders `text` as template `name` with `.Values` = `values`; returns the output exactly.
 * Throws TemplateError with Go's message on a parse or execution error, or naming the cap or
 * the Go behaviour we refuse to imitate.
 */
export function renderGoTemplate(name: string, text: string, values: RV, opts: Partial<Limits> = {}): string {
  const limits = { ...DEFAULT_LIMITS, ...opts };
  const funcs = funcMap();
  const trees = parse(name, text, funcs);
  const data = goDict(new Map([['Values', values]]));
  const tree = trees.get(name);
  const out = new Output(limits);
  const state = new State(name, trees, funcs, out, data);
  setRepeatCap(limits.maxOutputBytes);
  setListCap(limits.maxSteps);
  try {
    const root = tree?.root ?? null;
    if (root === null) state.errorf(`${JSON.stringify(name)} is an incomplete or empty template`);
    else state.walk(data, root);
  } catch (e) {
    if (e instanceof TemplateError) throw e;
    if (e instanceof CapError) throw new TemplateError(`template: ${name}: ${e.message}`, 'cap');
    if (e instanceof UnsupportedError)
      throw new TemplateError(`template: ${name}: ${e.message}`, 'unsupported');
    if (isStackOverflow(e)) {
      throw new TemplateError(`template: ${name}: nesting too deep for the engine (the depth cap)`, 'cap');
    }
    throw e;
  }
  return out.parts.join('');
}
