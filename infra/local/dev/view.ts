/**
 * Live progress: on a TTY a table redrawn in place; otherwise one plain line per phase change,
 * so logs and CI output stay readable.
 */
import type { ProgressObserver } from './observer.ts';
import { PHASES } from './phase.ts';

export interface ProgressView {
  stop(): void;
}

export function startProgressView(
  observer: ProgressObserver,
  startedAt: number,
  out: NodeJS.WriteStream = process.stdout,
): ProgressView {
  const tty = Boolean(out.isTTY) && process.env.CI !== 'true';
  const seen = new Map<string, string>();
  let drawnLines = 0;

  const elapsed = () => `${((Date.now() - startedAt) / 1000).toFixed(1)}s`;
  const counts = () => {
    const c = new Map<string, number>();
    for (const t of observer.timelines.values()) c.set(t.phase, (c.get(t.phase) ?? 0) + 1);
    return [...PHASES, 'failed', 'deleting']
      .filter((p) => c.get(p))
      .map((p) => `${p}: ${c.get(p)}`)
      .join('  ');
  };

  const drawTable = () => {
    const lines = [`metal3fn dev  ${elapsed()}  ${counts()}`];
    const tls = [...observer.timelines.values()].sort((a, b) => a.key.localeCompare(b.key));
    for (const t of tls.slice(0, 40))
      lines.push(`  ${t.key.padEnd(48)} ${t.phase.padEnd(16)} ${t.host ?? ''}`);
    if (tls.length > 40) lines.push(`  … and ${tls.length - 40} more`);
    if (drawnLines) out.write(`\x1b[${drawnLines}A`);
    out.write(`${lines.map((l) => `\x1b[2K${l}`).join('\n')}\n`);
    drawnLines = lines.length;
  };

  /** The timelines refreshed (`changed`), or all of them. */
  const printChanges = (changed?: ReadonlySet<string>) => {
    const tls = changed
      ? [...changed].flatMap((k) => observer.timelines.get(k) ?? [])
      : observer.timelines.values();
    for (const t of tls) {
      if (seen.get(t.key) === t.phase) continue;
      seen.set(t.key, t.phase);
      out.write(`[${elapsed().padStart(7)}] ${t.key} -> ${t.phase}${t.host ? ` (host ${t.host})` : ''}\n`);
    }
  };

  let timer: NodeJS.Timeout | undefined;
  let unsubscribe: (() => void) | undefined;
  if (tty) timer = setInterval(drawTable, 200);
  else unsubscribe = observer.onChange(printChanges);
  return {
    stop() {
      if (timer) {
        clearInterval(timer);
        drawTable();
      }
      unsubscribe?.();
      if (!tty) printChanges();
    },
  };
}
