// Runs the built CLI (`node dist/src/cli/main.js serve`) as a child process, the way an
// operator runs it (with the Node options of its `#!` line, as `tapedeck`, `npm start` and the
// image run it), and reads its memory and CPU, and its database backends' CPU, from /proc while
// it works.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { cpuSecondsOf } from './process-cpu.mjs';

export { cpuSecondsOf, cpuSecondsOfAll } from './process-cpu.mjs';

const CLI = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));
/** The Node options after `node` on the CLI's first line (`#!/usr/bin/env -S node ...`). */
const CLI_NODE_OPTIONS = /^#!.*\bnode\b(.*)$/m
  .exec(readFileSync(CLI, 'utf8').split('\n', 1)[0])[1]
  .split(' ')
  .filter(Boolean);

/** Starts `tapedeck serve` on ephemeral ports; resolves once /readyz answers 200. */
export async function startTapedeck({ databaseUrl, dataDir, env = {}, args = [], nodeArgs = [] }) {
  const child = spawn(process.execPath, [...CLI_NODE_OPTIONS, ...nodeArgs, CLI, 'serve', ...args], {
    env: {
      ...process.env,
      TAPEDECK_DATABASE_URL: databaseUrl,
      TAPEDECK_DATA_DIR: dataDir,
      TAPEDECK_HTTP_PORT: '0',
      TAPEDECK_GRPC_PORT: '0',
      TAPEDECK_LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c) => {
    stderr = (stderr + c).slice(-4000);
  });
  const httpPort = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
      const m = /OTLP\/HTTP\s+http:\/\/[^:]+:(\d+)\//.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`tapedeck exited with ${code} before listening:\n${stderr}`)));
  });
  for (let i = 0; ; i++) {
    const res = await fetch(`http://127.0.0.1:${httpPort}/readyz`).catch(() => null);
    if (res?.status === 200) break;
    if (i > 100) throw new Error(`tapedeck not ready:\n${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    pid: child.pid,
    httpPort,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Resident set size now and at its peak (VmHWM), in bytes. */
export function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
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

/** Samples a process's RSS every `everyMillis` and remembers the highest seen. */
export function sampleMemory(pid, everyMillis = 100) {
  let peak = 0;
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, memoryOf(pid).rss);
    } catch {
      /* exited */
    }
  }, everyMillis);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      let hwm = 0;
      try {
        hwm = memoryOf(pid).hwm;
      } catch {
        /* exited */
      }
      return { sampledPeak: peak, hwm };
    },
  };
}
