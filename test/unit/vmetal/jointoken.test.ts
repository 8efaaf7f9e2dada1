/** The bootstrap token's pure parts: its form, when it is rotated, the Secrets, the CA hash. */
import { describe, expect, it } from 'vitest';
import { localCa } from '../../../infra/local/apiserver/ca.ts';
import { caCertHash as serverCaCertHash } from '../../../infra/local/apiserver/index.ts';
import {
  caCertHash,
  managementTokenSecret,
  newBootstrapToken,
  tenantTokenSecret,
  tokenNeedsRotation,
  tokenOfSecret,
  tokenString,
} from '../../../shared/vmetal/jointoken.ts';

const NOW = new Date('2026-01-01T00:00:00.000Z');
const DAY = 24 * 3600;

describe('bootstrap tokens', () => {
  it('are kubeadm tokens expiring one TTL from now (RFC 3339, seconds)', () => {
    const t = newBootstrapToken(NOW, DAY);
    expect(tokenString(t)).toMatch(/^[a-z0-9]{6}\.[a-z0-9]{16}$/);
    expect(t.expiration).toBe('2026-01-02T00:00:00Z');
    expect(newBootstrapToken(NOW, DAY).secret).not.toBe(t.secret);
  });

  it.each([
    ['absent', undefined, true],
    ['fresh', { id: 'abcdef', secret: '0123456789abcdef', expiration: '2026-01-02T00:00:00Z' }, false],
    [
      'exactly half left',
      { id: 'abcdef', secret: '0123456789abcdef', expiration: '2026-01-01T12:00:00Z' },
      false,
    ],
    [
      'under half left',
      { id: 'abcdef', secret: '0123456789abcdef', expiration: '2026-01-01T11:59:59Z' },
      true,
    ],
    ['expired', { id: 'abcdef', secret: '0123456789abcdef', expiration: '2025-12-31T00:00:00Z' }, true],
    ['unreadable expiration', { id: 'abcdef', secret: '0123456789abcdef', expiration: 'soon' }, true],
  ])('rotation when %s', (_name, token, rotate) => {
    expect(tokenNeedsRotation(token, NOW, DAY)).toBe(rotate);
  });

  it('round-trips through both Secrets; the tenant one is what kubeadm token create writes', () => {
    const t = newBootstrapToken(NOW, DAY);
    expect(tokenOfSecret(managementTokenSecret('p-a', 'tenant', t))).toEqual(t);
    const tenant = tenantTokenSecret('tenant', t);
    expect(tenant.metadata).toMatchObject({ name: `bootstrap-token-${t.id}`, namespace: 'kube-system' });
    expect(tenant.type).toBe('bootstrap.kubernetes.io/token');
    expect(tokenOfSecret(tenant)).toEqual(t);
    const text = (k: string) => Buffer.from(tenant.data![k]!, 'base64').toString('utf8');
    expect(text('usage-bootstrap-authentication')).toBe('true');
    expect(text('usage-bootstrap-signing')).toBe('true');
    expect(text('auth-extra-groups')).toBe('system:bootstrappers:kubeadm:default-node-token');
  });

  it('reads no token from a Secret with a malformed part', () => {
    const s = managementTokenSecret('p-a', 'tenant', newBootstrapToken(NOW, DAY));
    s.data!['token-secret'] = Buffer.from('SHORT').toString('base64');
    expect(tokenOfSecret(s)).toBeUndefined();
  });

  it("hashes the CA's SubjectPublicKeyInfo as kubeadm does (the embedded server's join pin agrees)", () => {
    const pem = localCa().cert;
    expect(caCertHash(pem)).toBe(serverCaCertHash(pem));
    expect(caCertHash(pem)).toMatch(/^sha256:[0-9a-f]{64}$/);
  });
});
