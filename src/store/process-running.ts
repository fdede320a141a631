/**
 * @module store/process-running
 * Whether a process of this host still runs, for files a process owns while it lives (the
 * embedded database's lock, payload temporaries): kill(pid, 0) tests without signalling.
 */
export function isProcessRunning(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // it runs, as another user
  }
}
