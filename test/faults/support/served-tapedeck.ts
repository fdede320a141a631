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

/** A loopback port nothing listens on now (the kernel's pick, released at once). */
export async function freePort(): Promise<number> {
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
