/**
 * Field validation: what the server's strict decoder finds (unknown and duplicate fields) under
 * fieldValidation=Strict|Warn|Ignore, and what it refuses whatever the directive (a value of the
 * wrong type), for built-in kinds (decoded into their Go structs) and custom resources.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { stringify } from 'yaml';
import { R } from '../../../shared/api/resources.ts';
import { kubectlExit } from '../../helpers/kubectl.ts';
import { runPython } from '../../helpers/python.ts';
import { GROUP, Widget, widget } from '../fixtures.ts';
import { failure, rawRequest } from '../http.ts';
import { type ConformanceCase, tempDir } from '../suite.ts';

const STRICT = { fieldValidation: 'Strict' };

/** A manifest file of a ConfigMap whose `data` is misspelled `dta` (a field ConfigMap lacks). */
function misspelledConfigMap(ns: string, name: string): string {
  const file = join(tempDir(), `${name}.yaml`);
  writeFileSync(
    file,
    stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, dta: { a: '1' } }),
  );
  return file;
}

export const FIELD_VALIDATION_CASES: ConformanceCase[] = [
  {
    // kubectl's --validate=strict (its default) sends fieldValidation=Strict; the strict decoder
    // (sigs.k8s.io/json) reports the unknown field and the create handler refuses the body
    // (k8s.io/apiserver pkg/endpoints/handlers/create.go, rest.go transformDecodeError). Under
    // Warn the field is dropped and named in a Warning header (addStrictDecodingWarnings).
    name: 'kubectl apply of a ConfigMap with a misspelled field: refused under Strict, dropped with a Warning under --validate=warn',
    requires: ['kubectl'],
    async run({ kubeconfigPath, client, ns }) {
      const file = misspelledConfigMap(ns, 'typo');
      const strict = await kubectlExit(kubeconfigPath, ['apply', '-f', file]);
      expect(strict.code).not.toBe(0);
      expect(strict.stderr).toContain(
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "dta"',
      );
      expect(await client.get(R.ConfigMap, ns, 'typo')).toBeUndefined();
      const warn = await kubectlExit(kubeconfigPath, ['apply', '--validate=warn', '-f', file]);
      expect(warn.code).toBe(0);
      expect(warn.stderr).toContain('Warning: unknown field "dta"');
      const stored = await client.get<any>(R.ConfigMap, ns, 'typo');
      expect(stored).toBeDefined();
      expect(stored).not.toHaveProperty('dta');
    },
  },
  {
    // sigs.k8s.io/json DisallowDuplicateFields: `duplicate field "<path>"`, a strict error like an
    // unknown field, for built-in kinds and custom resources (unstructured decoding) alike.
    name: 'duplicate fields: 400 under Strict; under Warn a Warning, the last value kept (ConfigMap and custom resource)',
    async run({ client, ns }) {
      const cmPath = client.path(R.ConfigMap, ns);
      const cm = (name: string) =>
        `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}"},"data":{"a":"1","a":"2"}}`;
      const refused = await rawRequest(client.kc, 'POST', cmPath, { body: cm('dup'), query: STRICT });
      expect(refused.status).toBe(400);
      expect(refused.body.message).toBe(
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: duplicate field "data.a"',
      );
      const warned = await rawRequest(client.kc, 'POST', cmPath, { body: cm('dup') });
      expect(warned.status).toBe(201);
      expect(warned.warnings).toEqual(['duplicate field "data.a"']);
      expect(warned.body.data).toEqual({ a: '2' });
      const cr = `{"apiVersion":"${GROUP}/v1","kind":"Widget","metadata":{"name":"dup"},"spec":{"size":1,"size":2}}`;
      const crRefused = await rawRequest(client.kc, 'POST', client.path(Widget, ns), {
        body: cr,
        query: STRICT,
      });
      expect(crRefused.status).toBe(400);
      expect(crRefused.body.message).toBe(
        'Widget in version "v1" cannot be handled as a Widget: strict decoding error: duplicate field "spec.size"',
      );
      expect(await client.get(Widget, ns, 'dup')).toBeUndefined();
    },
  },
  {
    // Secret.stringData is map[string]string: a JSON number does not decode into it (Go's
    // encoding/json UnmarshalTypeError), a 400 whatever fieldValidation says. The official Python
    // client sends the number as given.
    name: 'a number in Secret.stringData is refused by the decoder (400), not coerced to a string (Python client)',
    requires: ['python'],
    async run({ kubeconfigPath, client, ns }) {
      const r = await runPython(
        kubeconfigPath,
        `
v1 = client.CoreV1Api()
try:
    v1.create_namespaced_secret(args['ns'], {'metadata': {'name': 'typed'}, 'stringData': {'k': 1}})
    print(json.dumps({'created': True}))
except client.ApiException as e:
    print(json.dumps({'status': e.status, 'body': json.loads(e.body)}))
`,
        { ns },
      );
      expect(r.status).toBe(400);
      expect(r.body.reason).toBe('BadRequest');
      expect(r.body.message).toBe(
        'Secret in version "v1" cannot be handled as a Secret: json: cannot unmarshal number into Go struct field Secret.stringData of type string',
      );
      expect(await client.get(R.Secret, ns, 'typed')).toBeUndefined();
    },
  },
  {
    // A patched object is decoded like a body; under Strict its unknown fields make the patch
    // handler answer 422 Invalid on field `patch` (handlers/patch.go applyPatchToCurrentObject).
    // NodeSpec has providerID; providerId (another case) is unknown, so it is never stored.
    name: 'Node spec.providerId (wrong case): a merge patch is 422 under Strict, dropped with a Warning under Warn, dropped silently under Ignore',
    async run({ client, ns }) {
      const name = `${ns}-pid`;
      await client.create(R.Node, { metadata: { name } });
      try {
        const path = client.path(R.Node, undefined, name);
        const patch = {
          body: { spec: { providerId: 'metal3://x' } },
          contentType: 'application/merge-patch+json',
        };
        const strict = await rawRequest(client.kc, 'PATCH', path, { ...patch, query: STRICT });
        expect(strict.status).toBe(422);
        expect(strict.body.reason).toBe('Invalid');
        expect(strict.body.details.causes).toHaveLength(1);
        expect(strict.body.details.causes[0]).toMatchObject({ reason: 'FieldValueInvalid', field: 'patch' });
        expect(strict.body.message).toMatch(
          /^ "" is invalid: patch: Invalid value: ".*": strict decoding error: unknown field "spec.providerId"$/,
        );
        const warned = await rawRequest(client.kc, 'PATCH', path, patch);
        expect(warned.status).toBe(200);
        expect(warned.warnings).toEqual(['unknown field "spec.providerId"']);
        const ignored = await rawRequest(client.kc, 'PATCH', path, {
          ...patch,
          query: { fieldValidation: 'Ignore' },
        });
        expect(ignored.status).toBe(200);
        expect(ignored.warnings).toEqual([]);
        const node = await client.get<any>(R.Node, undefined, name);
        expect(node.spec ?? {}).not.toHaveProperty('providerId');
        expect(node.spec ?? {}).not.toHaveProperty('providerID');
      } finally {
        await client.delete(R.Node, undefined, name);
      }
    },
  },
  {
    // k8s.io/apimachinery pkg/apis/meta/v1/validation ValidateFieldValidation, on CreateOptions.
    name: 'a fieldValidation other than Strict, Warn or Ignore is 422 on CreateOptions',
    async run({ client, ns }) {
      const r = await rawRequest(client.kc, 'POST', client.path(R.ConfigMap, ns), {
        body: { metadata: { name: 'fv' } },
        query: { fieldValidation: 'Loose' },
      });
      expect(r.status).toBe(422);
      expect(r.body.message).toBe(
        'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loose": supported values: "", "Ignore", "Strict", "Warn"',
      );
    },
  },
  {
    // apiextensions-apiserver pkg/apiserver/validation/validation.go kubeOpenAPIResultToFieldErrors:
    // InvalidTypeCode → field.TypeInvalid (reason FieldValueTypeInvalid, text "Invalid value").
    name: 'custom resources: a value of the wrong type is a FieldValueTypeInvalid cause',
    async run({ client, ns }) {
      const e = await failure(client.create(Widget, widget(ns, 't', { size: 'big' })));
      expect(e.code).toBe(422);
      expect(e.status.details?.causes).toEqual([
        {
          reason: 'FieldValueTypeInvalid',
          message: 'Invalid value: "string": spec.size in body must be of type integer: "string"',
          field: 'spec.size',
        },
      ]);
    },
  },
  {
    // A strategic merge patch under Strict: the converter's unknown field fails it, 422 on field
    // `patch` showing the patch as Go prints it (handlers/patch.go applyPatchToObject). Server-side
    // apply converts the applied object to a typed value first (managedfields
    // structuredMergeManager.Apply), which refuses a field the schema does not declare.
    name: 'strategic merge patch with an unknown field is 422 under Strict; server-side apply refuses it (kubectl)',
    requires: ['kubectl'],
    async run({ kubeconfigPath, client, ns }) {
      await client.create(R.ConfigMap, { metadata: { name: 'smp', namespace: ns }, data: { a: '1' } });
      const r = await rawRequest(client.kc, 'PATCH', client.path(R.ConfigMap, ns, 'smp'), {
        body: { dta: 'x' },
        contentType: 'application/strategic-merge-patch+json',
        query: STRICT,
      });
      expect(r.status).toBe(422);
      expect(r.body.message).toBe(
        ' "" is invalid: patch: Invalid value: "map[dta:x]": strict decoding error: unknown field "dta"',
      );
      const ssa = await kubectlExit(kubeconfigPath, [
        'apply',
        '--server-side',
        '-f',
        misspelledConfigMap(ns, 'ssa'),
      ]);
      expect(ssa.code).not.toBe(0);
      expect(ssa.stderr).toContain(`failed to create typed patch object (${ns}/ssa; /v1, Kind=ConfigMap)`);
      expect(ssa.stderr).toContain('.dta: field not declared in schema');
      expect(await client.get(R.ConfigMap, ns, 'ssa')).toBeUndefined();
    },
  },
];
