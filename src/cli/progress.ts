/**
 * A one-line progress bar on stderr, drawn only when stderr is a terminal, so pipes and CI
 * logs stay clean. Redraws at most every 100 ms.
 */
export interface Progress {
  update(done: number, total: number, label?: string): void;
  finish(): void;
}

export function createProgress(stream: NodeJS.WriteStream = process.stderr): Progress {
  if (!stream.isTTY) return { update() {}, finish() {} };
  let lastDraw = 0;
  let drawn = false;
  return {
    update(done, total, label = '') {
      const now = Date.now();
      if (now - lastDraw < 100 && done < total) return;
      lastDraw = now;
      const width = 30;
      const ratio = total > 0 ? Math.min(1, done / total) : 0;
      const filled = Math.round(ratio * width);
      stream.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} ${label}\x1b[K`);
      drawn = true;
    },
    finish() {
      if (drawn) stream.write('\n');
    },
  };
}
