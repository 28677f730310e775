#!/usr/bin/env node
// A provider-owned MCP server for the seed provider: the provider chooses its entry point and
// a tool prefix, and serves its graph to agents over stdio. stdout carries only the protocol;
// nothing else is printed there.
//
//   node examples/seed-mcp/server.mjs
import { fileURLToPath } from 'node:url';
import { CapabilityGraph, createMcpServer, lexicalExecutor, StdioServerTransport } from '@devcodex/capability-graph';

const rootDir = fileURLToPath(new URL('../seed-provider', import.meta.url));
const graph = await CapabilityGraph.open({
  providers: [{ providerId: 'seed.http', authority: { kind: 'file', rootDir, definitionLayout: 'directory' } }],
  executor: lexicalExecutor(),
});
const server = createMcpServer(graph, {
  name: 'seed-http',
  version: '0.1.0',
  prefix: 'example_',
  entryPoints: ['seed.http::route'],
  // This host approves the seed's documents for agents to read.
  documentBodies: true,
});

let closing;
function shutdown() {
  closing ??= (async () => {
    await server.close().catch(() => {});
    await graph.close();
  })();
  return closing;
}
// The transport closes once every request read before the end of input is answered, or when
// the client closes its end: then the graph goes too.
server.onclose = shutdown;
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);

try {
  await server.connect(new StdioServerTransport());
} catch {
  await shutdown();
  process.exitCode = 1;
}
