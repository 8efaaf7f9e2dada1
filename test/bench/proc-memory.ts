/**
 * Memory of another process, as the kernel counts it: `/proc/<pid>/status` VmRSS (resident now) and
 * VmHWM (the peak resident set since the process started), read from outside so that what is
 * measured is the process itself and not the one measuring. Linux only.
 */
import { readFileSync } from 'node:fs';

export interface ProcMemory {
  rssKiB: number;
  hwmKiB: number;
}

/** VmRSS and VmHWM of a `/proc/<pid>/status` text, in KiB; throws when either is missing. */
export function parseProcStatus(text: string): ProcMemory {
  const field = (name: string): number => {
    const m = new RegExp(`^${name}:\\s+(\\d+)\\s+kB$`, 'm').exec(text);
    if (!m) throw new Error(`/proc status has no ${name} line`);
    return Number(m[1]);
  };
  return { rssKiB: field('VmRSS'), hwmKiB: field('VmHWM') };
}

/** The process's memory now, or undefined once it is gone. */
export function readProcMemory(pid: number): ProcMemory | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  // A zombie (exited, not yet reaped) has no Vm lines: it holds no memory any more.
  return /^VmRSS:/m.test(text) ? parseProcStatus(text) : undefined;
}

export const mib = (kib: number): number => Math.round((kib / 1024) * 10) / 10;

export interface MemoryCurve {
  /** VmHWM at the last reading: the peak resident set of the whole run. */
  peakMiB: number;
  /** [seconds since the sampling started, VmRSS MiB], one per interval. */
  samples: [number, number][];
}

/**
 * VmRSS every `everyMs` (the curve) and VmHWM at each reading (monotonic, so the last one is the
 * peak up to then). `finish()` reads once more: call it while the process still runs to have the
 * peak of the whole run.
 */
export function sampleMemory(pid: number, everyMs = 1000): { finish(): MemoryCurve } {
  const t0 = performance.now();
  const samples: [number, number][] = [];
  let hwm = 0;
  const read = () => {
    const m = readProcMemory(pid);
    if (!m) return;
    hwm = Math.max(hwm, m.hwmKiB);
    samples.push([Math.round((performance.now() - t0) / 100) / 10, mib(m.rssKiB)]);
  };
  read();
  const timer = setInterval(read, everyMs);
  timer.unref();
  return {
    finish() {
      read();
      clearInterval(timer);
      return { peakMiB: mib(hwm), samples };
    },
  };
}
