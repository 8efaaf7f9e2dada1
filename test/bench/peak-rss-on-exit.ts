/**
 * Preloaded (`node --import`) into a process the fleet bench starts: at exit, writes the process's
 * peak resident set (getrusage maxRSS, KiB on Linux) to `$METAL3FN_PEAK_RSS_FILE`, which a reader
 * of /proc from outside cannot have after the process is gone.
 */
import { writeFileSync } from 'node:fs';

const file = process.env.METAL3FN_PEAK_RSS_FILE;
if (file) process.on('exit', () => writeFileSync(file, `${process.resourceUsage().maxRSS}\n`));
