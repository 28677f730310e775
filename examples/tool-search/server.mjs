#!/usr/bin/env node
// A host's own MCP server with 150 tools (tools.mjs), the starting point of the tool-search
// recipe: its tools/list goes through providerFromTools into a graph, and match picks the few a
// model sees. Its tools answer with a fixed text: the recipe is about choosing them.
//
//   node examples/tool-search/server.mjs          serve on stdio
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { fileURLToPath } from 'node:url';
import { TOOLS } from './tools.mjs';

export { TOOLS };

/** An MCP server that lists the 150 tools. */
export function createToolServer() {
  const server = new Server({ name: 'host-tools', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => ({
    content: [{ type: 'text', text: `${request.params.name} ran` }],
  }));
  return server;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await createToolServer().connect(new StdioServerTransport());
}
