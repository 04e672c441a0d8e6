/**
 * `/mcp`: a Model Context Protocol server over Streamable HTTP (the official
 * SDK, stateless: a server per request, no session to keep between
 * processes). It authorizes with the same bearer as the API (a workspace key
 * or an OAuth access token) and publishes the protected-resource metadata of
 * the MCP authorization spec (RFC 9728), so assistants can find where a
 * person signs in.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply } from 'fastify';
import { SCOPES } from '../../platform/auth/scopes.ts';
import { presentedKey } from '../../platform/http/guard.ts';
import { apiCaller } from './api-caller.ts';
import { registerTools, type ToolDependencies } from './mcp.tools.ts';

export interface McpRoutesOptions {
  /** The root app: tools call its /v1 operations in-process. */
  root: FastifyInstance;
  publicBaseUrl: string;
  download: ToolDependencies['download'];
  maxWaitMs: number;
  version: string;
}

const HIDDEN = { hide: true } as const;
// The tools' /v1 calls are rate-limited per workspace like any API call; the endpoint itself is not counted per IP.
const OPEN = { public: true, unlimited: true } as const;

export const mcpRoutes: FastifyPluginAsync<McpRoutesOptions> = async (app, options) => {
  const resource = `${options.publicBaseUrl}/mcp`;
  const metadataUrl = `${options.publicBaseUrl}/.well-known/oauth-protected-resource/mcp`;
  const metadata = {
    resource,
    authorization_servers: [options.publicBaseUrl],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'Flipbook',
    resource_documentation: `${options.publicBaseUrl}/v1/docs`,
  };
  for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
    app.get(path, { schema: HIDDEN, config: OPEN }, async () => metadata);
  }

  const refuse = (reply: FastifyReply, message: string) => reply
    .code(401)
    .header('www-authenticate', `Bearer resource_metadata="${metadataUrl}"`)
    .send({ jsonrpc: '2.0', error: { code: -32001, message }, id: null });

  app.post('/mcp', { schema: HIDDEN, config: OPEN }, async (request, reply) => {
    const token = request.headers.authorization ? presentedKey(request) : null;
    if (!token) return refuse(reply, 'Send a workspace API key or an OAuth access token: Authorization: Bearer <token>.');
    const call = apiCaller(options.root, token);
    const me = await call('GET', '/v1/me');
    if (me.status === 401) return refuse(reply, 'The token is invalid, expired or revoked.');
    const workspace = me.body?.data?.workspace?.name ?? 'the workspace';
    const server = new McpServer(
      { name: 'flipbook', version: options.version },
      { instructions: `Tools for the flipbooks of ${workspace}: find and describe books, upload a document from a URL, publish, share, control who may read, read analytics and leads, and read a book's text. Book ids come from find_books.` },
    );
    registerTools(server, { call, download: options.download, maxWaitMs: options.maxWaitMs });
    // Answers stream as server-sent events, so a long upload's progress notifications reach the client before its result.
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    reply.hijack();
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request.raw, reply.raw, request.body);
  });

  // Stateless: no server-initiated stream to open, no session to end.
  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method, url: '/mcp', schema: HIDDEN, config: OPEN,
      handler: async (_request, reply) => reply.code(405).header('allow', 'POST').send({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP server is stateless; send POST.' }, id: null }),
    });
  }
};
