// Waiting for recall's index to catch up with what a tapedeck acknowledged, and what that
// cost. A store whose recall indexes in ingest's own transaction (no tapedeck_store.recall_backlog)
// is caught up when the last request is acknowledged.
import { readFileSync } from 'node:fs';
import { cpuSecondsOf } from './tapedeck-process.mjs';

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

/**
 * Starts counting the CPU seconds of a server process and of the client backends of `db`'s
 * database; the function returned resolves with those spent since, { server, pg }. Backends
 * opened meanwhile count from zero.
 */
export async function serverCpuMeter(db, pid) {
  const server0 = cpuSecondsOf(pid);
  const pg0 = new Map((await backendPids(db)).map((p) => [p, cpuSecondsOf(p)]));
  return async () => ({
    server: cpuSecondsOf(pid) - server0,
    pg: (await backendPids(db)).reduce((s, p) => s + cpuSecondsOf(p) - (pg0.get(p) ?? 0), 0),
  });
}

/** The client backends connected to `client`'s database, but `client` itself. */
export async function backendPids(client) {
  const { rows } = await client.query(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = $1',
    ['client backend'],
  );
  return rows.map((r) => r.pid);
}
