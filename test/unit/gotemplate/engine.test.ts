/**
 * What the Go fixtures cannot show: our caps, the Go behaviours we refuse instead of imitating,
 * the sprig functions we leave out (Go's parse error for an unknown function), and Go structs
 * handed to templates (vMetal's NodeClaim with an embedded ObjectMeta).
 */
import { describe, expect, it } from 'vitest';
import {
  decodeValuesJSON,
  fromJSON,
  renderGoTemplate,
  structType,
  TemplateError,
} from '../../../shared/gotemplate/index.ts';
import { NOT_IMPLEMENTED, REMOVED } from '../../../shared/gotemplate/sprig/index.ts';
import { IFACE, MAP_STRING, STRING } from '../../../shared/gotemplate/types.ts';
import { GoValue, goString } from '../../../shared/gotemplate/value.ts';

function fails(text: string, values = '{}', opts = {}): TemplateError {
  try {
    renderGoTemplate('t', text, decodeValuesJSON(values), opts);
  } catch (e) {
    if (e instanceof TemplateError) return e;
    throw e;
  }
  throw new Error(`rendered without error: ${text}`);
}

describe('caps', () => {
  it('stops output past the byte cap, naming it', () => {
    const e = fails('{{ range until 100 }}0123456789{{ end }}', '{}', { maxOutputBytes: 500 });
    expect(e.phase).toBe('cap');
    expect(e.message).toBe('template: t: output exceeds the cap of 500 bytes');
  });

  it('counts bytes, not characters', () => {
    expect(renderGoTemplate('t', '{{ "é" }}', null, { maxOutputBytes: 2 })).toBe('é');
    expect(fails('{{ "éé" }}', '{}', { maxOutputBytes: 3 }).phase).toBe('cap');
  });

  it('refuses a repeat larger than the output cap before building it', () => {
    const e = fails('{{ repeat 1000000000 "x" | len }}', '{}', { maxOutputBytes: 1000 });
    expect(e.phase).toBe('cap');
    expect(e.message).toMatch(/repeated string .* exceeds the output cap/);
  });

  it('stops a runaway loop at the step cap', () => {
    const e = fails('{{ range until 1000 }}{{ range until 1000 }}{{ end }}{{ end }}', '{}', {
      maxSteps: 10_000,
    });
    expect(e.phase).toBe('cap');
    expect(e.message).toBe('template: t: execution stopped after 10000 steps (the step cap)');
  });

  it("refuses parentheses nested deeper than the parser's stack, instead of crashing", () => {
    const e = fails(`{{ ${'('.repeat(20_000)}1${')'.repeat(20_000)} }}`);
    expect(e.phase).toBe('cap');
    expect(e.message).toBe('template: t: nesting too deep for the parser (the depth cap)');
  });

  it('stops unbounded recursion at the template depth cap', () => {
    const e = fails('{{ define "r" }}{{ template "r" . }}{{ end }}{{ template "r" . }}');
    expect(e.phase).toBe('cap');
    expect(e.message).toBe('template: t: exceeded maximum template depth (200)');
  });
});

describe('Go behaviours refused rather than imitated', () => {
  it('cutting a string inside a UTF-8 character (Go would emit invalid UTF-8)', () => {
    const e = fails('{{ trunc 1 "é" }}');
    expect(e.phase).toBe('unsupported');
    expect(e.message).toMatch(/^template: t:1:3: executing "t" at <trunc 1 "é">: .*splits a UTF-8 character/);
    // A cut on a character boundary is fine.
    expect(renderGoTemplate('t', '{{ trunc 2 "éa" }}', null)).toBe('é');
  });

  it('printing a memory address (%p, or a pointer inside a value)', () => {
    expect(fails('{{ printf "%p" (list) }}').phase).toBe('unsupported');
  });

  it('regular expressions whose JavaScript meaning would differ', () => {
    const e = fails('{{ regexFind "a(?i)b" "aB" }}');
    expect(e.phase).toBe('unsupported');
    expect(e.message).toMatch(/case-insensitive matching switched on or off inside the pattern/);
    expect(fails('{{ regexFind `[\\S]` "a" }}').message).toMatch(
      /\\S inside a bracket class is not supported/,
    );
    // The same at the very start is Go's and JS's meaning both.
    expect(renderGoTemplate('t', '{{ regexFind "(?i)b" "aB" }}', null)).toBe('B');
  });

  it("a zone abbreviation Intl only knows as GMT+x (Go prints tzdata's, e.g. JST)", () => {
    const e = fails('{{ dateInZone "15:04 MST" 1700000000 "Asia/Tokyo" }}');
    expect(e.phase).toBe('unsupported');
    expect(e.message).toMatch(/abbreviation of this time zone/);
    expect(renderGoTemplate('t', '{{ dateInZone "15:04 -0700" 1700000000 "Asia/Tokyo" }}', null)).toBe(
      '07:13 +0900',
    );
  });

  it('string literals with raw bytes above 0x7f', () => {
    const e = fails('{{ "\\xff" }}');
    expect(e.phase).toBe('parse');
    expect(e.message).toMatch(/bytes above 0x7f are not supported/);
  });
});

describe('function set', () => {
  it.each([...NOT_IMPLEMENTED, ...REMOVED])('%s is Go\'s "function not defined" parse error', (name) => {
    const e = fails(`line 1\n{{ ${name} }}`);
    expect(e.phase).toBe('parse');
    expect(e.message).toBe(`template: t:2: function "${name}" not defined`);
  });

  it('helm-only and made-up functions are not defined either (not sprig)', () => {
    for (const name of ['required', 'toYaml', 'fromYaml', 'include', 'tpl', 'lookup']) {
      expect(fails(`{{ ${name} }}`).message).toBe(`template: t:1: function "${name}" not defined`);
    }
  });
});

/**
 * Expected texts are Go's, from an equivalent Go program (ObjectMeta embedded in NodeClaim, the
 * claim inside the map[string]interface {} of .Values) run with Go 1.19 and sprig 3.2.3.
 */
describe('Go structs as values', () => {
  const objectMeta = structType('v1.ObjectMeta', [
    { name: 'Name', type: STRING },
    { name: 'Namespace', type: STRING },
    { name: 'Labels', type: MAP_STRING },
  ]);
  const nodeClaim = structType('v1alpha1.NodeClaim', [
    { name: 'ObjectMeta', type: objectMeta, embedded: true, json: 'metadata' },
    { name: 'Spec', type: IFACE, json: 'spec' },
  ]);
  const claim = nodeClaim.make([
    objectMeta.make([
      goString('claim-1'),
      goString('p-team'),
      new GoValue(MAP_STRING, new Map([['zone', goString('a')]])),
    ]),
    fromJSON({ typeRef: 'gpu' }),
  ]);
  const values = fromJSON({});
  (values!.v as Map<string, unknown>).set('NodeClaim', claim);

  it('promotes the embedded ObjectMeta fields, as Go does', () => {
    expect(
      renderGoTemplate(
        't',
        '{{ .Values.NodeClaim.Name }}/{{ .Values.NodeClaim.Namespace }} {{ .Values.NodeClaim.Labels.zone }} {{ .Values.NodeClaim.ObjectMeta.Name }} {{ .Values.NodeClaim.Spec.typeRef }}',
        values,
      ),
    ).toBe('claim-1/p-team a claim-1 gpu');
  });

  it('prints and encodes structs as Go does', () => {
    expect(renderGoTemplate('t', '{{ .Values.NodeClaim }}', values)).toBe(
      '{{claim-1 p-team map[zone:a]} map[typeRef:gpu]}',
    );
    expect(renderGoTemplate('t', '{{ printf "%+v" .Values.NodeClaim.ObjectMeta }}', values)).toBe(
      '{Name:claim-1 Namespace:p-team Labels:map[zone:a]}',
    );
    expect(renderGoTemplate('t', '{{ printf "%#v" .Values.NodeClaim.ObjectMeta }}', values)).toBe(
      'v1.ObjectMeta{Name:"claim-1", Namespace:"p-team", Labels:map[string]string{"zone":"a"}}',
    );
    expect(
      renderGoTemplate('t', '{{ typeOf .Values.NodeClaim }} {{ kindOf .Values.NodeClaim }}', values),
    ).toBe('v1alpha1.NodeClaim struct');
    expect(() => renderGoTemplate('t', '{{ .Values.NodeClaim.Labels.nope }}', values)).toThrow(
      'template: t:1:10: executing "t" at <.Values.NodeClaim.Labels.nope>: map has no entry for key "nope"',
    );
    expect(renderGoTemplate('t', '{{ toJson .Values.NodeClaim }}', values)).toBe(
      '{"metadata":{"Name":"claim-1","Namespace":"p-team","Labels":{"zone":"a"}},"spec":{"typeRef":"gpu"}}',
    );
  });

  it('a missing field is "can\'t evaluate field … in type interface {}" (the claim sits in a map)', () => {
    const e = (() => {
      try {
        renderGoTemplate('t', '{{ .Values.NodeClaim.Nope }}', values);
      } catch (err) {
        return err as TemplateError;
      }
      throw new Error('no error');
    })();
    expect(e.message).toBe(
      'template: t:1:10: executing "t" at <.Values.NodeClaim.Nope>: can\'t evaluate field Nope in type interface {}',
    );
  });
});

describe('values decoding', () => {
  it("reports bad JSON with Go's text", () => {
    expect(() => decodeValuesJSON('{"a":')).toThrow('values: unexpected end of JSON input');
    expect(() => decodeValuesJSON('{"a":1e999}')).toThrow(
      'values: json: cannot unmarshal number 1e999 into Go value of type float64',
    );
  });

  it('keeps a "__proto__" key as data', () => {
    expect(
      renderGoTemplate(
        't',
        '{{ index .Values "__proto__" }} {{ keys .Values }}',
        decodeValuesJSON('{"__proto__":"x"}'),
      ),
    ).toBe('x [__proto__]');
  });
});
