/**
 * The join (issue 19, Behaviour 7), pure: `kubeadm join <endpoint> --token <id>.<secret>
 * --discovery-token-ca-cert-hash sha256:<hash> --node-name <claim>`, and the kubelet flags for the
 * claim: `--hostname-override=<claim>`, `--node-labels` (the merged Node labels),
 * `--register-with-taints` (taints, then startupTaints) and `kubeletArgs`.
 *
 * kubeadm join takes no kubelet flags, so (as a real node needs) they go where kubeadm's kubelet
 * drop-in reads them: `KUBELET_EXTRA_ARGS` in /etc/default/kubelet (Debian) and
 * /etc/sysconfig/kubelet (RPM). systemd splits that variable on whitespace and reads quotes and
 * backslashes, so a flag value holding any of those is refused (naming the field) rather than
 * passed on changed. The command line is quoted for a POSIX shell.
 */
import { labelKeyProblem, labelValueProblem } from '../selectors/labels.ts';
import { VMetalInputError } from './errors.ts';

export interface Taint {
  key: string;
  value?: string | undefined;
  effect: string;
}

export interface JoinInput {
  /** The tenant API server: a kubeconfig `server` (`https://host:port`) or `host:port`. */
  endpoint: string;
  /** The bootstrap token, `<id>.<secret>`. */
  token: string;
  /** The tenant CA's public key hash, `sha256:<64 hex>` (or the bare hex). */
  caCertHash: string;
  /** The claim's name: the Node's name. */
  nodeName: string;
  nodeLabels: Readonly<Record<string, string>>;
  taints?: readonly Taint[] | undefined;
  startupTaints?: readonly Taint[] | undefined;
  kubeletArgs?: Readonly<Record<string, string>> | undefined;
}

export interface JoinPlan {
  argv: string[];
  /** `argv` quoted for a shell: the `runcmd` entry. */
  command: string;
  kubeletFlags: string[];
  /** The files carrying KUBELET_EXTRA_ARGS (same content). */
  kubeletEnvFiles: { path: string; content: string }[];
}

export const KUBELET_ENV_FILES = ['/etc/default/kubelet', '/etc/sysconfig/kubelet'] as const;
/** kubeletArgs we set ourselves (from other fields). */
const RESERVED_KUBELET_ARGS: Record<string, string> = {
  'hostname-override': 'the Node name is the claim name',
  'node-labels': 'Node labels come from the properties and the NodeType labels',
  'register-with-taints': 'use spec.taints or spec.startupTaints',
};
const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
const TOKEN = /^[a-z0-9]{6}\.[a-z0-9]{16}$/;
const HASH = /^(?:sha256:)?([0-9a-fA-F]{64})$/;
const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const FLAG_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
/** Whether systemd's EnvironmentFile parsing or its word splitting would change the text. */
const unsafeInEnv = (s: string): boolean =>
  /[\s"'\\]/.test(s) || [...s].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);

/** `host:port` for kubeadm from a kubeconfig server URL (https only; default port 443) or `host:port`. */
export function joinEndpoint(server: string, field = 'tenant kubeconfig server'): string {
  const text = server.trim();
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `https://${text}`);
  } catch {
    throw new VMetalInputError(field, `${JSON.stringify(server)} is not an https URL or host:port`);
  }
  if (
    url.protocol !== 'https:' ||
    url.hostname === '' ||
    url.username ||
    url.search ||
    url.hash ||
    (url.pathname !== '/' && url.pathname !== '')
  ) {
    throw new VMetalInputError(field, `${JSON.stringify(server)} is not an https URL or host:port (no path)`);
  }
  return `${url.hostname}:${url.port || '443'}`;
}

const SAFE_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** A word as a POSIX shell reads it back unchanged. */
export function shellQuote(word: string): string {
  return SAFE_WORD.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

function taintText(t: Taint, field: string): string {
  const keyProblem = labelKeyProblem(t.key ?? '');
  if (keyProblem) throw new VMetalInputError(`${field}.key`, keyProblem);
  const value = t.value ?? '';
  const valueProblem = labelValueProblem(value);
  if (valueProblem) throw new VMetalInputError(`${field}.value`, valueProblem);
  if (!TAINT_EFFECTS.includes(t.effect)) {
    throw new VMetalInputError(
      `${field}.effect`,
      `${JSON.stringify(t.effect)} is not NoSchedule, PreferNoSchedule or NoExecute`,
    );
  }
  return value === '' ? `${t.key}:${t.effect}` : `${t.key}=${value}:${t.effect}`;
}

function kubeletFlags(input: JoinInput): string[] {
  const flags = [`--hostname-override=${input.nodeName}`];
  const labels = Object.entries(input.nodeLabels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [k, v] of labels) {
    const problem = labelKeyProblem(k) ?? labelValueProblem(v);
    if (problem) throw new VMetalInputError(`Node label ${JSON.stringify(k)}`, problem);
  }
  if (labels.length > 0) flags.push(`--node-labels=${labels.map(([k, v]) => `${k}=${v}`).join(',')}`);
  const seen = new Map<string, string>();
  const taints: string[] = [];
  for (const [name, list] of [
    ['spec.taints', input.taints],
    ['spec.startupTaints', input.startupTaints],
  ] as const) {
    (list ?? []).forEach((t, i) => {
      const field = `${name}[${i}]`;
      const text = taintText(t, field);
      const id = `${t.key}:${t.effect}`;
      const other = seen.get(id);
      if (other)
        throw new VMetalInputError(
          field,
          `taint ${id} is already set by ${other} (key and effect must be unique)`,
        );
      seen.set(id, field);
      taints.push(text);
    });
  }
  if (taints.length > 0) flags.push(`--register-with-taints=${taints.join(',')}`);
  const args = Object.entries(input.kubeletArgs ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [name, value] of args) {
    const field = `spec.kubeletArgs[${JSON.stringify(name)}]`;
    if (!FLAG_NAME.test(name)) {
      throw new VMetalInputError(
        field,
        'not a kubelet flag name (write it without leading dashes, e.g. max-pods)',
      );
    }
    if (RESERVED_KUBELET_ARGS[name])
      throw new VMetalInputError(field, `set by vMetal: ${RESERVED_KUBELET_ARGS[name]}`);
    if (unsafeInEnv(value)) {
      throw new VMetalInputError(
        field,
        'a kubelet flag value may not hold whitespace, quotes, backslashes or control characters',
      );
    }
    flags.push(`--${name}=${value}`);
  }
  return flags;
}

/** The join command and kubelet flags; throws VMetalInputError naming the field at fault. */
export function buildJoin(input: JoinInput, opts: { redactToken?: boolean } = {}): JoinPlan {
  const endpoint = joinEndpoint(input.endpoint);
  if (!TOKEN.test(input.token)) {
    throw new VMetalInputError('bootstrap token', 'is not <6 of a-z0-9>.<16 of a-z0-9>');
  }
  const hash = HASH.exec(input.caCertHash.trim());
  if (!hash) throw new VMetalInputError('CA certificate hash', 'is not sha256:<64 hex digits>');
  if (!DNS_SUBDOMAIN.test(input.nodeName)) {
    throw new VMetalInputError('node name', `${JSON.stringify(input.nodeName)} is not a DNS subdomain`);
  }
  const argv = [
    'kubeadm',
    'join',
    endpoint,
    '--token',
    opts.redactToken ? '<redacted>' : input.token,
    '--discovery-token-ca-cert-hash',
    `sha256:${hash[1]!.toLowerCase()}`,
    '--node-name',
    input.nodeName,
  ];
  const flags = kubeletFlags(input);
  const content = `KUBELET_EXTRA_ARGS=${flags.join(' ')}\n`;
  return {
    argv,
    command: argv.map(shellQuote).join(' '),
    kubeletFlags: flags,
    kubeletEnvFiles: KUBELET_ENV_FILES.map((path) => ({ path, content })),
  };
}

/**
 * The words of a simple shell command line (what a node running the `runcmd` entry would pass to
 * the program): single quotes, double quotes and backslashes as a POSIX shell reads them. A line
 * that is more than one simple command (`;`, `|`, `&`, redirections, substitutions) is refused.
 */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === ' ' || c === '\t') {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new Error('unterminated single quote');
      word = (word ?? '') + line.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      word ??= '';
      for (i++; i < line.length && line[i] !== '"'; i++) {
        if (line[i] === '$' || line[i] === '`') throw new Error('substitutions are not supported');
        if (line[i] === '\\' && i + 1 < line.length && '$`"\\\n'.includes(line[i + 1]!)) i++;
        word += line[i];
      }
      if (i >= line.length) throw new Error('unterminated double quote');
    } else if (c === '\\') {
      if (i + 1 >= line.length) throw new Error('trailing backslash');
      word = (word ?? '') + line[++i];
    } else if (';|&<>()$`\n#'.includes(c) && !(c === '#' && word !== undefined)) {
      throw new Error(`not a simple command: ${JSON.stringify(c)}`);
    } else {
      word = (word ?? '') + c;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}

/** What a `kubeadm join` line asks for (the kubelet simulator's reading of the user data). */
export interface ParsedJoin {
  endpoint: string;
  token: string;
  caCertHash: string;
  nodeName: string | undefined;
}

/** Parses a `kubeadm join` command line; undefined when the line is not one. */
export function parseJoinCommand(line: string): ParsedJoin | undefined {
  let words: string[];
  try {
    words = shellWords(line.trim());
  } catch {
    return undefined;
  }
  if (words[0] !== 'kubeadm' || words[1] !== 'join' || words[2] === undefined || words[2].startsWith('-'))
    return undefined;
  const flags = new Map<string, string>();
  for (let i = 3; i < words.length; i++) {
    const w = words[i]!;
    if (!w.startsWith('--')) return undefined;
    const eq = w.indexOf('=');
    if (eq > 0) flags.set(w.slice(2, eq), w.slice(eq + 1));
    else if (i + 1 < words.length) flags.set(w.slice(2), words[++i]!);
    else return undefined;
  }
  const token = flags.get('token');
  const caCertHash = flags.get('discovery-token-ca-cert-hash');
  if (token === undefined || caCertHash === undefined) return undefined;
  return { endpoint: words[2], token, caCertHash, nodeName: flags.get('node-name') };
}
