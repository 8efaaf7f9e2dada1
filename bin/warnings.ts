/**
 * Node prints "ExperimentalWarning: SQLite is an experimental feature" when node:sqlite loads (the
 * embedded SQS server and the API server's --data use it): noise in a user's progress output that
 * they can do nothing about. This drops that one warning, matched by its name and its feature;
 * every other warning (other experimental features included) still reaches stderr as Node prints it.
 */
export function isSqliteExperimentalWarning(warning: string | Error, type: unknown): boolean {
  const name =
    typeof warning === 'string'
      ? typeof type === 'string'
        ? type
        : (type as { type?: string } | undefined)?.type
      : warning.name;
  const message = typeof warning === 'string' ? warning : warning.message;
  return name === 'ExperimentalWarning' && /^SQLite is an experimental feature/.test(message);
}

export function filterSqliteExperimentalWarning(): void {
  const emit = process.emitWarning;
  process.emitWarning = function (this: NodeJS.Process, warning: string | Error, ...rest: unknown[]) {
    if (isSqliteExperimentalWarning(warning, rest[0])) return;
    return (emit as (...a: unknown[]) => void).call(this, warning, ...rest);
  } as typeof process.emitWarning;
}
