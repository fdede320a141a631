// Waiting for recall's index to catch up with what a tapedeck acknowledged, and what that
// cost. A store whose recall indexes in ingest's own transaction (no tapedeck_store.recall_backlog)
// is caught up when the last request is acknowledged.
import { readFileSync } from 'node:fs';
import { serverCpuMeter } from './tapedeck-process.mjs';

/**
 * Waits until the server's recall backlog is empty; resolves with how long that took and the
 * CPU seconds its server, the database's PostgreSQL backends and the whole machine spent meanwhile.
 */
export async function recallCaughtUp(db, server) {
  const started = performance.now();
  const machine0 = machineBusySeconds();
  const cpu = await serverCpuMeter(db, server.pid);
  const { rows } = await db.query(`SELECT to_regclass('tapedeck_store.recall_backlog') IS NOT NULL AS present`);
  for (; rows[0].present; ) {
    const waiting = await db.query('SELECT EXISTS (SELECT 1 FROM tapedeck_store.recall_backlog) AS waiting');
    if (!waiting.rows[0].waiting) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const spent = await cpu();
  return {
    seconds: (performance.now() - started) / 1000,
    machineCpu: machineBusySeconds() - machine0,
    serverCpu: spent.server,
    pgCpu: spent.pg,
  };
}

/**
 * CPU seconds the whole machine has been busy (user, nice, system, irq, softirq; /proc/stat):
 * catching up, PostgreSQL backends come and go (the pool closes idle ones, autovacuum workers
 * run and exit), so the per-backend sum misses some of what it cost.
 */
export function machineBusySeconds() {
  const [, user, nice, system, , , irq, softirq] = readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]
    .trim()
    .split(/\s+/)
    .map(Number);
  return (user + nice + system + irq + softirq) / 100;
}
