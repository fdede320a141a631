/**
 * @module mcp/routes
 * `POST /mcp`: the MCP tools over the streamable HTTP transport, mounted when --mcp is set
 * (docs/mcp.md). Stateless: each request gets a server and a transport of its own, answered
 * as one JSON response, so nothing is held between requests and any receiver behind a load
 * balancer can answer. GET and DELETE (a standalone event stream, ending a session) have
 * nothing to serve without sessions: 405, as the transport specification allows. Bodies are
 * bounded; a larger one is refused 413 before it is read whole.
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { Hono } from 'hono';
import { tenantOf } from '../auth/access.js';
import { allow } from '../auth/route-auth.js';
import { bodyLimit } from 'hono/body-limit';
import { ApiError } from '../errors.js';
import { createMcpServer, type McpToolDeps, type McpToolSettings } from './tools.js';

export const MCP_PATH = '/mcp';
/** a tool call's arguments are a few ids and words */
const MAX_MCP_BODY_BYTES = 1024 * 1024;

export function createMcpRoutes(deps: McpToolDeps, settings: McpToolSettings): Hono {
  const app = new Hono();
  app.post(
    MCP_PATH,
    allow.read,
    bodyLimit({
      maxSize: MAX_MCP_BODY_BYTES,
      onError: () => {
        throw new ApiError('too_large', `an MCP request body is at most ${MAX_MCP_BODY_BYTES} bytes`);
      },
    }),
    async (c) => {
      // the caller's tenant: every tool reads only it
      const server = createMcpServer(deps, { ...settings, tenant: tenantOf(c) });
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      await server.connect(transport);
      try {
        return await transport.handleRequest(c.req.raw);
      } finally {
        await server.close();
      }
    },
  );
  app.on(['GET', 'DELETE'], MCP_PATH, allow.read, (c) =>
    c.json(
      { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: POST MCP requests to /mcp' }, id: null },
      405,
      {
        allow: 'POST',
      },
    ),
  );
  return app;
}
