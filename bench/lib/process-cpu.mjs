// CPU seconds of processes, read from /proc: a server, its database backends, a bench's own.
import { readFileSync } from 'node:fs';

const CLOCK_TICKS = 100; // USER_HZ on Linux

/** CPU seconds (user + system) a process has used so far; 0 when it is gone. */
export function cpuSecondsOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

/** The CPU seconds of these processes together (cpuSecondsOf each). */
export function cpuSecondsOfAll(pids) {
  return pids.reduce((sum, pid) => sum + cpuSecondsOf(pid), 0);
}
