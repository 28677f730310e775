'use strict';
// The package entry: one implementation, shared by require() and import.

const { GraphError, ErrorCode, Phase, NextAction } = require('./errors.cjs');
const {
  CapabilityGraph,
  BoundProviderGraph,
  parseQualifiedId,
  readVectorsFile,
  formatQualifiedId,
} = require('./graph/graph.cjs');
const { lexicalExecutor, semanticExecutor } = require('./executors/builtin.cjs');
const { createToolAdapter } = require('./tools/adapter.cjs');
const { codexExecutor } = require('./executors/codex.cjs');
const { providerFromTools } = require('./tools/tool-search.cjs');
const { StdioServerTransport } = require('./mcp/stdio.cjs');

/** The folder of the small seed provider the package ships (provider `seed.http`). */
const seedProviderRoot = require('node:path').join(__dirname, '..', 'examples', 'seed-provider');

/** The MCP server; its module (and the MCP SDK) loads on first use. */
function createMcpServer(graph, options) {
  return require('./mcp/server.cjs').createMcpServer(graph, options);
}

/** A Node.js request listener serving MCP over Streamable HTTP (stateless); loads like createMcpServer. */
function createMcpHttpHandler(graph, options) {
  return require('./mcp/http.cjs').createMcpHttpHandler(graph, options);
}

module.exports = {
  CapabilityGraph,
  BoundProviderGraph,
  GraphError,
  ErrorCode,
  Phase,
  NextAction,
  parseQualifiedId,
  readVectorsFile,
  formatQualifiedId,
  lexicalExecutor,
  semanticExecutor,
  createToolAdapter,
  createMcpServer,
  createMcpHttpHandler,
  StdioServerTransport,
  codexExecutor,
  providerFromTools,
  seedProviderRoot,
};
