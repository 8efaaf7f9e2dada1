/**
 * What a booted vMetal host reads from its user data to join its tenant cluster (the kubelet
 * simulator's part; test and dev only): the `kubeadm join` line of the cloud-config's `runcmd`
 * (the user data itself when it is `#cloud-config`, else every `text/cloud-config` part of a MIME
 * message, nested multiparts included, decoded by their Content-Transfer-Encoding), and the
 * kubelet flags of `KUBELET_EXTRA_ARGS` in the files kubeadm's kubelet drop-in reads
 * (`/etc/default/kubelet` as on Debian, else `/etc/sysconfig/kubelet`). Later cloud-config parts
 * and later `write_files` entries win, as cloud-init writes them in order.
 */
import { parse } from 'yaml';
import {
  KUBELET_ENV_FILES,
  type ParsedJoin,
  parseJoinCommand,
  shellQuote,
  type Taint,
} from '../../../shared/vmetal/join.ts';

export interface JoinRequest {
  join: ParsedJoin;
  /** `--hostname-override`, else kubeadm's `--node-name`. */
  nodeName: string | undefined;
  labels: Record<string, string>;
  taints: Taint[];
  kubeletFlags: string[];
}

interface MimeMessage {
  headers: Map<string, string>;
  body: string;
}

/** Headers (names lower-cased, folded lines joined) and body of a MIME entity. */
function parseEntity(text: string): MimeMessage {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  const headers = new Map<string, string>();
  let last: string | undefined;
  let i = 0;
  for (; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === '') {
      i++;
      break;
    }
    if (/^[ \t]/.test(line) && last) {
      headers.set(last, `${headers.get(last)} ${line.trim()}`);
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) throw new Error(`not a MIME header line: ${JSON.stringify(line.slice(0, 60))}`);
    last = line.slice(0, colon).trim().toLowerCase();
    headers.set(last, line.slice(colon + 1).trim());
  }
  return { headers, body: lines.slice(i).join('\n') };
}

/** The media type (lower-cased) and parameters of a Content-Type value. */
function contentType(value: string | undefined): { type: string; params: Map<string, string> } {
  const [type = 'text/plain', ...rest] = (value ?? 'text/plain').split(';');
  const params = new Map<string, string>();
  for (const p of rest) {
    const eq = p.indexOf('=');
    if (eq < 0) continue;
    let v = p.slice(eq + 1).trim();
    if (v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1).replace(/\\(.)/g, '$1');
    params.set(p.slice(0, eq).trim().toLowerCase(), v);
  }
  return { type: type.trim().toLowerCase(), params };
}

function decodeBody(body: string, encoding: string | undefined): string {
  switch ((encoding ?? '7bit').trim().toLowerCase()) {
    case 'base64':
      return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
    case 'quoted-printable':
      return Buffer.from(
        body
          .replace(/=\r?\n/g, '')
          .replace(/=([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16))),
        'latin1',
      ).toString('utf8');
    default:
      return body;
  }
}

/** The cloud-config documents of a MIME entity, in order (multiparts walked depth first). */
function cloudConfigParts(entity: MimeMessage): string[] {
  const ct = contentType(entity.headers.get('content-type'));
  if (ct.type.startsWith('multipart/')) {
    const boundary = ct.params.get('boundary');
    if (!boundary) throw new Error('multipart without a boundary');
    const out: string[] = [];
    const lines = entity.body.split('\n');
    let part: string[] | undefined;
    for (const line of lines) {
      const l = line.trimEnd();
      if (l === `--${boundary}` || l === `--${boundary}--`) {
        if (part) out.push(...cloudConfigParts(parseEntity(part.join('\n'))));
        part = l === `--${boundary}` ? [] : undefined;
        if (l !== `--${boundary}`) break;
      } else part?.push(line);
    }
    return out;
  }
  if (ct.type === 'message/rfc822') return cloudConfigParts(parseEntity(entity.body));
  const body = decodeBody(entity.body, entity.headers.get('content-transfer-encoding'));
  if (ct.type === 'text/cloud-config' || (ct.type === 'text/plain' && body.startsWith('#cloud-config')))
    return [body];
  return [];
}

/** The cloud-config documents of user data (itself, or the parts of a MIME message). */
export function cloudConfigsOf(userData: string): string[] {
  if (userData.startsWith('#cloud-config')) return [userData];
  if (!userData.slice(0, 4096).toLowerCase().includes('mime-version:')) return [];
  return cloudConfigParts(parseEntity(userData));
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** The words of `KUBELET_EXTRA_ARGS=...` in an environment file (systemd splits it on whitespace). */
function extraArgs(content: string): string[] | undefined {
  let found: string[] | undefined;
  for (const raw of content.split('\n')) {
    const m = /^\s*KUBELET_EXTRA_ARGS=(.*)$/.exec(raw);
    if (!m) continue;
    let v = m[1]!.trim();
    if (v.length >= 2 && (v[0] === '"' || v[0] === "'") && v.endsWith(v[0])) v = v.slice(1, -1);
    found = v.split(/\s+/).filter((w) => w !== '');
  }
  return found;
}

function fileContent(entry: Record<string, unknown>): string {
  const content = typeof entry.content === 'string' ? entry.content : '';
  const enc = typeof entry.encoding === 'string' ? entry.encoding.toLowerCase() : '';
  return enc === 'b64' || enc === 'base64' ? Buffer.from(content, 'base64').toString('utf8') : content;
}

function taintOf(text: string): Taint {
  const m = /^([^=:]+)(?:=([^:]*))?:(.+)$/.exec(text);
  if (!m) throw new Error(`--register-with-taints entry ${JSON.stringify(text)} is not key[=value]:Effect`);
  return { key: m[1]!, ...(m[2] ? { value: m[2] } : {}), effect: m[3]! };
}

/**
 * The join a node would run from this user data; throws naming what is missing (no join line,
 * user data cloud-init would not read).
 */
export function joinRequestFromUserData(userData: string): JoinRequest {
  const configs = cloudConfigsOf(userData);
  if (configs.length === 0) throw new Error('the user data holds no cloud-config');
  let join: ParsedJoin | undefined;
  const files = new Map<string, string>();
  for (const text of configs) {
    const doc: unknown = parse(text, { version: '1.1' });
    if (!isRecord(doc)) continue;
    for (const cmd of Array.isArray(doc.runcmd) ? doc.runcmd : []) {
      const line = Array.isArray(cmd) ? cmd.map((w) => shellQuote(String(w))).join(' ') : String(cmd);
      join = parseJoinCommand(line) ?? join;
    }
    for (const f of Array.isArray(doc.write_files) ? doc.write_files : []) {
      if (isRecord(f) && typeof f.path === 'string') files.set(f.path, fileContent(f));
    }
  }
  if (!join) throw new Error('no kubeadm join line in the cloud-config runcmd');
  const envFile = KUBELET_ENV_FILES.map((p) => files.get(p)).find((c) => c !== undefined);
  const flags = (envFile !== undefined ? extraArgs(envFile) : undefined) ?? [];
  const labels: Record<string, string> = {};
  const taints: Taint[] = [];
  let nodeName = join.nodeName;
  for (const flag of flags) {
    const eq = flag.indexOf('=');
    const name = eq < 0 ? flag : flag.slice(0, eq);
    const value = eq < 0 ? '' : flag.slice(eq + 1);
    if (name === '--hostname-override') nodeName = value;
    else if (name === '--node-labels') {
      for (const kv of value.split(',').filter((s) => s !== '')) {
        const i = kv.indexOf('=');
        labels[i < 0 ? kv : kv.slice(0, i)] = i < 0 ? '' : kv.slice(i + 1);
      }
    } else if (name === '--register-with-taints') {
      for (const t of value.split(',').filter((s) => s !== '')) taints.push(taintOf(t));
    }
  }
  return { join, nodeName, labels, taints, kubeletFlags: flags };
}
