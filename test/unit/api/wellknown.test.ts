import { describe, expect, it } from 'vitest';
import { HOST_ANNOTATION, hostRefOf, validHostRef } from '../../../shared/api/wellknown.ts';

const obj = (value: string | undefined, namespace = 'metal3') => {
  const annotations: Record<string, string> = value === undefined ? {} : { [HOST_ANNOTATION]: value };
  return { metadata: { namespace, annotations } };
};

describe('hostRefOf: the one parser of the metal3.io/BareMetalHost annotation', () => {
  it('reads <namespace>/<name> in the object namespace', () => {
    expect(hostRefOf(obj('metal3/node-0'))).toEqual({
      kind: 'ok',
      host: { namespace: 'metal3', name: 'node-0' },
    });
    expect(validHostRef(obj('metal3/node-0.rack-1'))).toEqual({ namespace: 'metal3', name: 'node-0.rack-1' });
  });

  it('absent or empty is not associated', () => {
    expect(hostRefOf(obj(undefined))).toEqual({ kind: 'absent' });
    expect(hostRefOf(obj(''))).toEqual({ kind: 'absent' });
    expect(hostRefOf({ metadata: { namespace: 'metal3' } })).toEqual({ kind: 'absent' });
  });

  it.each(['node-0', 'metal3/', '/node-0', 'a/b/c', 'metal3/Node_0', 'metal3/node 0'])(
    'malformed %j is invalid, naming the annotation',
    (value) => {
      const r = hostRefOf(obj(value));
      expect(r.kind).toBe('invalid');
      expect(r.kind === 'invalid' && r.message).toContain(`${HOST_ANNOTATION}=${JSON.stringify(value)}`);
      expect(validHostRef(obj(value))).toBeUndefined();
    },
  );

  it('a host in another namespace is invalid (hosts are never taken across namespaces)', () => {
    const r = hostRefOf(obj('other/node-0'));
    expect(r).toMatchObject({ kind: 'invalid' });
    expect(r.kind === 'invalid' && r.message).toContain('names a host in namespace other');
  });
});
