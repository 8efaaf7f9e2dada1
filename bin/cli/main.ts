/**
 * The command dispatcher shared by both entries: `bin/metal3fn.ts` (every command, for
 * development) and `bin/metal3fn-prod.ts` (the production commands only, the container image's
 * entry). Each command lives in bin/commands/<name>.ts and exports `run(argv): Promise<number>`;
 * a table names it with a literal `import()`, so it loads only when asked for (one command's
 * dependencies never slow another's start) and a bundler sees exactly which files an entry can
 * reach: an entry whose table lacks `dev` carries none of the embedded servers.
 */
export interface Command {
  /** One line for the usage text. */
  summary: string;
  load(): Promise<{ run(argv: string[]): Promise<number> }>;
}

export type CommandTable = Record<string, Command>;

export function usage(table: CommandTable): string {
  const w = Math.max(...Object.keys(table).map((n) => n.length)) + 3;
  const lines = Object.entries(table).map(([name, c]) => `  ${name.padEnd(w)}${c.summary}`);
  return `usage: metal3fn <command> [options]

commands:
${lines.join('\n')}

run 'metal3fn <command> --help' for a command's options`;
}

export async function dispatch(table: CommandTable, argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  if (!cmd || cmd === '--help' || cmd === '-h' || cmd === 'help') {
    process.stdout.write(`${usage(table)}\n`);
    return cmd ? 0 : 2;
  }
  const command = Object.hasOwn(table, cmd) ? table[cmd] : undefined;
  if (!command) {
    process.stderr.write(`metal3fn: unknown command '${cmd}'\n\n${usage(table)}\n`);
    return 2;
  }
  return (await command.load()).run(rest);
}

/** Runs the command line of this process and sets its exit code. */
export function runCli(table: CommandTable): void {
  dispatch(table, process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`metal3fn: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
