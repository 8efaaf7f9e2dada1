/**
 * Just enough of the Kubernetes protobuf encoding to accept what kubectl's typed clients send
 * (`kubectl create configmap|secret|namespace|serviceaccount|role|rolebinding|clusterrole|
 * clusterrolebinding`, `kubectl auth can-i [--list]`, `auth whoami` and `create token` POST
 * `application/vnd.kubernetes.protobuf`): the `k8s\0` + runtime.Unknown
 * envelope and the messages of those kinds, decoded to the JSON objects the rest of the server
 * handles. Responses are always JSON (kubectl accepts it). Other kinds answer 415.
 */
import { unsupportedMediaType } from './status.ts';

export const PROTOBUF = 'application/vnd.kubernetes.protobuf';

type FieldType = 'string' | 'bytes' | 'int' | 'bool' | 'time' | 'smap' | 'bmap' | Schema;
interface Field {
  name: string;
  type: FieldType;
  repeated?: boolean;
}
type Schema = Record<number, Field>;

const TIME: Schema = { 1: { name: 'seconds', type: 'int' }, 2: { name: 'nanos', type: 'int' } };
const OWNER_REF: Schema = {
  1: { name: 'kind', type: 'string' },
  3: { name: 'name', type: 'string' },
  4: { name: 'uid', type: 'string' },
  5: { name: 'apiVersion', type: 'string' },
  6: { name: 'controller', type: 'bool' },
  7: { name: 'blockOwnerDeletion', type: 'bool' },
};
const OBJECT_META: Schema = {
  1: { name: 'name', type: 'string' },
  2: { name: 'generateName', type: 'string' },
  3: { name: 'namespace', type: 'string' },
  5: { name: 'uid', type: 'string' },
  6: { name: 'resourceVersion', type: 'string' },
  7: { name: 'generation', type: 'int' },
  8: { name: 'creationTimestamp', type: 'time' },
  11: { name: 'labels', type: 'smap' },
  12: { name: 'annotations', type: 'smap' },
  13: { name: 'ownerReferences', type: OWNER_REF, repeated: true },
  14: { name: 'finalizers', type: 'string', repeated: true },
};
const POLICY_RULE: Schema = {
  1: { name: 'verbs', type: 'string', repeated: true },
  2: { name: 'apiGroups', type: 'string', repeated: true },
  3: { name: 'resources', type: 'string', repeated: true },
  4: { name: 'resourceNames', type: 'string', repeated: true },
  5: { name: 'nonResourceURLs', type: 'string', repeated: true },
};
const SUBJECT: Schema = {
  1: { name: 'kind', type: 'string' },
  2: { name: 'apiGroup', type: 'string' },
  3: { name: 'name', type: 'string' },
  4: { name: 'namespace', type: 'string' },
};
const ROLE_REF: Schema = {
  1: { name: 'apiGroup', type: 'string' },
  2: { name: 'kind', type: 'string' },
  3: { name: 'name', type: 'string' },
};
const LOCAL_REF: Schema = { 1: { name: 'name', type: 'string' } };
const meta = { 1: { name: 'metadata', type: OBJECT_META } } as const;
const BINDING: Schema = {
  ...meta,
  2: { name: 'subjects', type: SUBJECT, repeated: true },
  3: { name: 'roleRef', type: ROLE_REF },
};

const RESOURCE_ATTRIBUTES: Schema = {
  1: { name: 'namespace', type: 'string' },
  2: { name: 'verb', type: 'string' },
  3: { name: 'group', type: 'string' },
  4: { name: 'version', type: 'string' },
  5: { name: 'resource', type: 'string' },
  6: { name: 'subresource', type: 'string' },
  7: { name: 'name', type: 'string' },
};
const NON_RESOURCE_ATTRIBUTES: Schema = {
  1: { name: 'path', type: 'string' },
  2: { name: 'verb', type: 'string' },
};
const SAR_SPEC: Schema = {
  1: { name: 'resourceAttributes', type: RESOURCE_ATTRIBUTES },
  2: { name: 'nonResourceAttributes', type: NON_RESOURCE_ATTRIBUTES },
  3: { name: 'user', type: 'string' },
  4: { name: 'groups', type: 'string', repeated: true },
};
const SAR: Schema = { ...meta, 2: { name: 'spec', type: SAR_SPEC } };
/** k8s.io/api/authentication/v1 generated.proto */
const BOUND_OBJECT_REF: Schema = {
  1: { name: 'kind', type: 'string' },
  2: { name: 'apiVersion', type: 'string' },
  3: { name: 'name', type: 'string' },
  4: { name: 'uid', type: 'string' },
};
const TOKEN_REQUEST_SPEC: Schema = {
  1: { name: 'audiences', type: 'string', repeated: true },
  3: { name: 'boundObjectRef', type: BOUND_OBJECT_REF },
  4: { name: 'expirationSeconds', type: 'int' },
};
const TOKEN_REVIEW_SPEC: Schema = {
  1: { name: 'token', type: 'string' },
  2: { name: 'audiences', type: 'string', repeated: true },
};

/** Message schemas by `<apiVersion>/<kind>`. */
const KINDS: Record<string, Schema> = {
  'v1/ConfigMap': {
    ...meta,
    2: { name: 'data', type: 'smap' },
    3: { name: 'binaryData', type: 'bmap' },
    4: { name: 'immutable', type: 'bool' },
  },
  'v1/Secret': {
    ...meta,
    2: { name: 'data', type: 'bmap' },
    3: { name: 'type', type: 'string' },
    4: { name: 'stringData', type: 'smap' },
    5: { name: 'immutable', type: 'bool' },
  },
  'v1/Namespace': {
    ...meta,
    2: { name: 'spec', type: { 1: { name: 'finalizers', type: 'string', repeated: true } } },
  },
  'v1/ServiceAccount': {
    ...meta,
    2: {
      name: 'secrets',
      type: { 2: { name: 'namespace', type: 'string' }, 3: { name: 'name', type: 'string' } },
      repeated: true,
    },
    3: { name: 'imagePullSecrets', type: LOCAL_REF, repeated: true },
    4: { name: 'automountServiceAccountToken', type: 'bool' },
  },
  'rbac.authorization.k8s.io/v1/Role': { ...meta, 2: { name: 'rules', type: POLICY_RULE, repeated: true } },
  'rbac.authorization.k8s.io/v1/ClusterRole': {
    ...meta,
    2: { name: 'rules', type: POLICY_RULE, repeated: true },
  },
  'rbac.authorization.k8s.io/v1/RoleBinding': BINDING,
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': BINDING,
  'authorization.k8s.io/v1/SelfSubjectAccessReview': SAR,
  'authorization.k8s.io/v1/SubjectAccessReview': SAR,
  'authorization.k8s.io/v1/LocalSubjectAccessReview': SAR,
  'authorization.k8s.io/v1/SelfSubjectRulesReview': {
    ...meta,
    2: { name: 'spec', type: { 1: { name: 'namespace', type: 'string' } } },
  },
  'authentication.k8s.io/v1/TokenRequest': { ...meta, 2: { name: 'spec', type: TOKEN_REQUEST_SPEC } },
  'authentication.k8s.io/v1/TokenReview': { ...meta, 2: { name: 'spec', type: TOKEN_REVIEW_SPEC } },
  'authentication.k8s.io/v1/SelfSubjectReview': meta,
};

class Reader {
  pos = 0;
  readonly buf: Buffer;
  constructor(buf: Buffer) {
    this.buf = buf;
  }
  get done(): boolean {
    return this.pos >= this.buf.length;
  }
  varint(): number {
    let result = 0;
    let shift = 0;
    for (;;) {
      if (this.pos >= this.buf.length) throw new Error('truncated varint');
      const b = this.buf[this.pos++]!;
      result += (b & 0x7f) * 2 ** shift;
      if (!(b & 0x80)) return result;
      shift += 7;
    }
  }
  bytes(): Buffer {
    const n = this.varint();
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  skip(wire: number): void {
    if (wire === 0) this.varint();
    else if (wire === 2) this.bytes();
    else if (wire === 1) this.pos += 8;
    else if (wire === 5) this.pos += 4;
    else throw new Error(`unsupported wire type ${wire}`);
  }
}

function decodeMessage(buf: Buffer, schema: Schema): Record<string, unknown> {
  const r = new Reader(buf);
  const out: Record<string, any> = {};
  while (!r.done) {
    const tag = r.varint();
    const no = Math.floor(tag / 8);
    const wire = tag & 7;
    const f = schema[no];
    if (!f) {
      r.skip(wire);
      continue;
    }
    let v: unknown;
    if (f.type === 'int') v = r.varint();
    else if (f.type === 'bool') v = r.varint() !== 0;
    else {
      const b = r.bytes();
      if (f.type === 'string') v = b.toString('utf8');
      else if (f.type === 'bytes') v = b.toString('base64');
      else if (f.type === 'time') {
        const t = decodeMessage(b, TIME) as { seconds?: number };
        v = new Date((t.seconds ?? 0) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
      } else if (f.type === 'smap' || f.type === 'bmap') {
        const e = decodeMessage(b, {
          1: { name: 'k', type: 'string' },
          2: { name: 'v', type: f.type === 'smap' ? 'string' : 'bytes' },
        });
        out[f.name] ??= {};
        out[f.name][String(e.k ?? '')] = e.v ?? '';
        continue;
      } else v = decodeMessage(b, f.type);
    }
    if (f.repeated) {
      out[f.name] ??= [];
      out[f.name].push(v);
    }
    // Go always encodes scalar fields; JSON omits the empty ones (omitempty), so do we.
    else if (v !== undefined && v !== '' && v !== 0 && v !== false) out[f.name] = v;
  }
  return out;
}

/** Decodes a protobuf request body into the JSON object it stands for. */
export function decodeProtobuf(body: Buffer): any {
  const accepted = ['application/json', 'application/yaml', PROTOBUF];
  if (body.length < 4 || body.subarray(0, 4).toString('latin1') !== 'k8s\u0000')
    throw unsupportedMediaType(PROTOBUF, accepted);
  const unknown = decodeMessage(body.subarray(4), {
    1: {
      name: 'typeMeta',
      type: { 1: { name: 'apiVersion', type: 'string' }, 2: { name: 'kind', type: 'string' } },
    },
    2: { name: 'raw', type: 'bytes' },
  }) as { typeMeta?: { apiVersion?: string; kind?: string }; raw?: string };
  const apiVersion = unknown.typeMeta?.apiVersion ?? '';
  const kind = unknown.typeMeta?.kind ?? '';
  const schema = KINDS[`${apiVersion}/${kind}`];
  if (!schema) throw unsupportedMediaType(PROTOBUF, ['application/json', 'application/yaml']);
  const obj = decodeMessage(Buffer.from(unknown.raw ?? '', 'base64'), schema);
  return { apiVersion, kind, ...obj };
}
