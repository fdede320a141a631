/**
 * `tapedeck mcp`: the MCP tools over stdio (docs/mcp.md), for an MCP client that starts
 * tapedeck itself. It opens the store as the read commands do (with the embedded database,
 * not while `tapedeck serve` holds it: use `serve --mcp` and its /mcp route then) and serves
 * until the client closes stdin. stdout carries the protocol only; logs go to stderr.
 */
import { Option, type Command } from 'commander';
import { createLogger } from '../logger.js';
import { tapedeckVersion } from '../mcp/version.js';
import { withStore } from './context.js';
import { addConfigOptions } from './flags.js';

export function registerMcp(program: Command): void {
  addConfigOptions(program.command('mcp').description('serve the MCP tools over stdio'))
    .addOption(new Option('--query-deadline-ms <n>', 'budget per tool call (default 10000)'))
    .addOption(new Option('--tape-max-bytes <n>', 'payload bytes get_run_tape inlines per tape (default 8 MiB)'))
    .addOption(new Option('--pricing <file>', 'per-model price table (JSON)'))
    .action(async (options: Record<string, string>) => {
      // Loaded here, not with the binary: the MCP SDK and its schemas weigh tens of MiB that
      // every other command would carry.
      const [{ StdioServerTransport }, { createMcpServer }] = await Promise.all([
        import('@modelcontextprotocol/sdk/server/stdio.js'),
        import('../mcp/tools.js'),
      ]);
      await withStore(options, async (store, config) => {
        const server = createMcpServer(store, {
          queryDeadlineMs: config.queryDeadlineMs,
          tapeMaxBytes: config.tapeMaxBytes,
          tenant: '',
          version: tapedeckVersion(),
          logger: createLogger(),
        });
        const transport = new StdioServerTransport();
        const closed = new Promise<void>((resolve) => {
          transport.onclose = resolve;
          process.stdin.once('end', resolve);
        });
        await server.connect(transport);
        await closed;
        await server.close();
      });
    });
}
