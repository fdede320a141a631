/**
 * A TCP proxy between tapedeck and its PostgreSQL server that a test can cut: cut() destroys
 * every open connection and refuses new ones (the port is closed) until restore() listens on
 * the same port again. To tapedeck this is a database host that went away and came back.
 */
import net from 'node:net';

export class TcpProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  port = 0;
  cuts = 0;

  constructor(private readonly upstream: { host: string; port: number }) {}

  /** postgres://… of the upstream database, rewritten to go through this proxy. */
  via(databaseUrl: string): string {
    const url = new URL(databaseUrl);
    url.hostname = '127.0.0.1';
    url.port = String(this.port);
    return url.toString();
  }

  async restore(): Promise<void> {
    if (this.server) return;
    const server = net.createServer((client) => this.connect(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  async cut(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    this.cuts++;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private connect(client: net.Socket): void {
    const upstream = net.connect(this.upstream.port, this.upstream.host);
    this.sockets.add(client);
    this.sockets.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.pipe(upstream);
    upstream.pipe(client);
    for (const s of [client, upstream]) {
      s.on('error', drop);
      s.on('close', drop);
    }
  }
}
