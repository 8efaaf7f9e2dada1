/** A kubeconfig as stored in an environment variable, a secret or a parameter: YAML (or JSON) as is, anything else read as base64. */
export function decodeKubeconfig(raw: string): string {
  const text = raw.trimStart();
  return text.startsWith('apiVersion') || text.startsWith('{') || raw.includes('\n')
    ? raw
    : Buffer.from(raw, 'base64').toString('utf8');
}
