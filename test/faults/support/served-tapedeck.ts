/**
 * `tapedeck serve` as a child process (the built CLI, dist/) on fixed ports, so that it can
 * be killed with SIGKILL and started again where its senders keep sending. The fault suites
 * build dist/ through `npm test` (pretest); run alone, build first (`npm run build`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const CLI = path.join(ROOT, 'dist', 'src', 'cli', 'main.js');

/**
 * A loopback port nothing listens on now, for a child to listen on later. Picked below the
 * kernel's ephemeral range: a port from that range, released here before the child binds it,
 * can meanwhile become the local port of any outgoing connection a parallel test opens, and
 * the child then fails with EADDRINUSE. A random pick keeps parallel suites apart.
 */
export async function freePort(): Promise<number> {
  const below = ephemeralLow();
  const lowest = Math.max(1024, below - 20_000);
  if (below - lowest >= 1000) {
    for (let attempt = 0; attempt < 50; attempt++) {
      const port = lowest + Math.floor(Math.random() * (below - lowest));
      if (await canListen(port)) return port;
    }
  }
  return kernelPort();
}

/** The first port of the kernel's ephemeral range (Linux's default where it cannot be read). */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > 0) return low;
  } catch {
    // not Linux: the default below
  }
  return 32768;
}

function canListen(port: number): Promise<boolean> {
  const server = net.createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A port the kernel picks from its ephemeral range, released at once. */
async function kernelPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface ServeSettings {
  dataDir: string;
  /** null: embedded PGlite under dataDir */
  databaseUrl: string | null;
  httpPort: number;
  grpcPort: number;
  /** further TAPEDECK_* settings */
  env?: Record<string, string>;
}

export class ServedTapedeck {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private stderrTail = '';
  /** how many times it was started, and killed */
  starts = 0;
  kills = 0;

  constructor(private readonly settings: ServeSettings) {}

  get url(): string {
    return `http://127.0.0.1:${this.settings.httpPort}`;
  }
  get grpcUrl(): string {
    return `http://127.0.0.1:${this.settings.grpcPort}`;
  }
  get pid(): number | undefined {
    return this.child?.pid;
  }
  get alive(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }
  stderr(): string {
    return this.stderrTail;
  }

  /** Starts it and resolves once /readyz answers 200. */
  async start(timeoutMs = 120_000): Promise<void> {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      TAPEDECK_DATA_DIR: this.settings.dataDir,
      TAPEDECK_HOST: '127.0.0.1',
      TAPEDECK_HTTP_PORT: String(this.settings.httpPort),
      TAPEDECK_GRPC_PORT: String(this.settings.grpcPort),
      TAPEDECK_LOG_LEVEL: 'warn',
      ...this.settings.env,
    };
    if (this.settings.databaseUrl) env.TAPEDECK_DATABASE_URL = this.settings.databaseUrl;
    else delete env.TAPEDECK_DATABASE_URL;
    const child = spawn(process.execPath, [CLI, 'serve'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    this.child = child;
    this.starts++;
    child.stderr!.on('data', (c: Buffer) => {
      this.stderrTail = (this.stderrTail + c.toString('utf8')).slice(-64_000);
    });
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`tapedeck exited with ${child.exitCode}:\n${this.stderrTail}`);
      const answer = await fetch(`${this.url}/readyz`).catch(() => undefined);
      if (answer?.status === 200) return;
      if (Date.now() > deadline) throw new Error(`tapedeck not ready after ${timeoutMs} ms:\n${this.stderrTail}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** SIGKILL: no drain, no goodbye; whatever it was doing stops mid-way. */
  async kill(): Promise<void> {
    if (!this.alive) return;
    this.kills++;
    this.child!.kill('SIGKILL');
    await this.exited;
  }

  /** SIGTERM, and SIGKILL if it has not gone after the grace period. */
  async stop(): Promise<void> {
    if (!this.alive) return;
    const child = this.child!;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    await this.exited;
    clearTimeout(timer);
  }

  /** Resident set size now, in bytes (Linux /proc). */
  rss(): number {
    const status = readFileSync(`/proc/${this.child!.pid}/status`, 'utf8');
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024;
  }
}
