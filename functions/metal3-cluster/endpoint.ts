/** Pure: whether a Metal3Cluster's controlPlaneEndpoint is usable (host non-empty, port 1..65535). */
export function endpointProblem(
  ep: { host?: unknown; port?: unknown } | undefined | null,
): string | undefined {
  if (!ep) return 'spec.controlPlaneEndpoint is required';
  if (typeof ep.host !== 'string' || ep.host.trim() === '')
    return 'spec.controlPlaneEndpoint.host must not be empty';
  if (typeof ep.port !== 'number' || !Number.isInteger(ep.port) || ep.port < 1 || ep.port > 65535) {
    return `spec.controlPlaneEndpoint.port must be an integer in 1..65535, got ${JSON.stringify(ep.port)}`;
  }
  return undefined;
}
