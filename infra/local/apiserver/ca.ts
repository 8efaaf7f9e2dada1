/**
 * A self-signed CA certificate for servers without TLS, so every namespace's kube-root-ca.crt
 * ConfigMap holds a real CA bundle, as on any cluster. Made with node:crypto (EC P-256,
 * ecdsa-with-SHA256) and a minimal DER encoder: no openssl process at each server start, one
 * certificate per process.
 */
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';

const tlv = (tag: number, body: Buffer): Buffer => {
  const len = body.length;
  const head =
    len < 0x80
      ? Buffer.from([tag, len])
      : len < 0x100
        ? Buffer.from([tag, 0x81, len])
        : Buffer.from([tag, 0x82, len >> 8, len & 0xff]);
  return Buffer.concat([head, body]);
};
const seq = (...parts: Buffer[]) => tlv(0x30, Buffer.concat(parts));
const set = (...parts: Buffer[]) => tlv(0x31, Buffer.concat(parts));
const explicit = (n: number, body: Buffer) => tlv(0xa0 + n, body);
const int = (b: Buffer) => tlv(0x02, b[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b);
const bool = (v: boolean) => tlv(0x01, Buffer.from([v ? 0xff : 0]));
const octets = (b: Buffer) => tlv(0x04, b);
const bits = (b: Buffer, unused = 0) => tlv(0x03, Buffer.concat([Buffer.from([unused]), b]));
const utf8 = (s: string) => tlv(0x0c, Buffer.from(s, 'utf8'));

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number);
  const out = [a! * 40 + b!];
  for (const n of rest) {
    const chunk = [n & 0x7f];
    for (let v = n >>> 7; v > 0; v >>>= 7) chunk.unshift((v & 0x7f) | 0x80);
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

/** UTCTime YYMMDDHHMMSSZ. */
const utcTime = (d: Date) =>
  tlv(0x17, Buffer.from(`${d.toISOString().slice(2, 19).replace(/[-:T]/g, '')}Z`, 'ascii'));

const name = (cn: string) => seq(set(seq(oid('2.5.4.3'), utf8(cn))));

export interface CaCertificate {
  cert: string;
  key: string;
}

/** A new self-signed CA certificate (CN `cn`, valid ten years from `now`). */
export function makeCa(cn: string, now = new Date()): CaCertificate {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const ecdsaSha256 = seq(oid('1.2.840.10045.4.3.2'));
  const notAfter = new Date(now.getTime() + 10 * 365 * 24 * 3600 * 1000);
  const extensions = seq(
    // basicConstraints: critical, CA:TRUE
    seq(oid('2.5.29.19'), bool(true), octets(seq(bool(true)))),
    // keyUsage: critical, keyCertSign | cRLSign
    seq(oid('2.5.29.15'), bool(true), octets(bits(Buffer.from([0x06]), 1))),
  );
  const tbs = seq(
    explicit(0, int(Buffer.from([2]))),
    int(randomBytes(16)),
    ecdsaSha256,
    name(cn),
    seq(utcTime(now), utcTime(notAfter)),
    name(cn),
    publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, extensions),
  );
  const signature = sign('sha256', tbs, privateKey);
  const der = seq(tbs, ecdsaSha256, bits(signature));
  const b64 = der.toString('base64').replace(/.{64}/g, '$&\n');
  return {
    cert: `-----BEGIN CERTIFICATE-----\n${b64}${b64.endsWith('\n') ? '' : '\n'}-----END CERTIFICATE-----\n`,
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
  };
}

let processCa: CaCertificate | undefined;

/** The CA of servers without TLS in this process, made on first use. */
export function localCa(): CaCertificate {
  processCa ??= makeCa('metal3fn-apiserver-ca');
  return processCa;
}
