/**
 * `metal3fn template --template FILE --values FILE.json [--name NAME]`: renders one Go template
 * (text/template + sprig, missingkey=error) exactly as user-data templates are rendered, with
 * `.Values` = the JSON file's value decoded as Go decodes it, and prints exactly the result.
 * A parse or execution error exits 1 with Go's message (naming the field or function) on stderr.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const USAGE = `usage: metal3fn template --template FILE --values FILE.json [--name NAME]

Render one Go template (text/template with the sprig functions) as user-data templates are
rendered: .Values is the JSON file's value, a missing map key is an error, output is printed
exactly as rendered (nothing added).
  --template FILE   the template
  --values FILE     the values, JSON
  --name NAME       the template's name in error messages (default: user-data)`;

/** A file's text; bytes that are not UTF-8 would render differently from Go's raw bytes: refused. */
function readUtf8(path: string, what: string): string {
  const bytes = readFileSync(path);
  try {
    // ignoreBOM: a byte order mark stays text, as Go reads it.
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new Error(`${what} ${path} is not valid UTF-8 (Go would keep the raw bytes; not supported)`);
  }
}

export async function run(argv: string[]): Promise<number> {
  let values: { template?: string; values?: string; name?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        template: { type: 'string' },
        values: { type: 'string' },
        name: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (e) {
    process.stderr.write(`metal3fn template: ${(e as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (!values.template || !values.values) {
    process.stderr.write(`metal3fn template: --template and --values are required\n\n${USAGE}\n`);
    return 2;
  }
  let text: string;
  let json: string;
  try {
    text = readUtf8(values.template, 'template');
    json = readUtf8(values.values, 'values file');
  } catch (e) {
    process.stderr.write(`metal3fn template: ${(e as Error).message}\n`);
    return 1;
  }
  // Loaded here, on the first render, not at start.
  const engine = await import('../../shared/gotemplate/index.ts');
  try {
    const out = engine.renderGoTemplate(
      values.name ?? engine.USER_DATA_TEMPLATE_NAME,
      text,
      engine.decodeValuesJSON(json),
    );
    process.stdout.write(out);
    return 0;
  } catch (e) {
    if (!(e instanceof engine.TemplateError)) throw e;
    process.stderr.write(`${e.message}\n`);
    return 1;
  }
}
