'use strict';
// createMcpServer (SPEC §10): the Tool Adapter behind a low-level MCP `Server`. The MCP SDK is
// loaded here, on first use, so loading the package alone never loads it.

const { GraphError, inputInvalid } = require('./errors.cjs');
const { createToolAdapter } = require('./tools.cjs');
const { isBound } = require('./graph.cjs');
const { toWireJson, NON_JSON_KEY } = require('./pure-json.cjs');
const { requireMcpSdk } = require('./peer.cjs');

const RESOURCE_PREFIX = 'capability-graph://';

function specificationUri(providerId, knowledgeId) {
  return `${RESOURCE_PREFIX}${providerId}/specification/${knowledgeId}`;
}

/** Every specification document of the providers the graph serves, page by page. */
async function listSpecificationResources(graph) {
  const bound = isBound(graph);
  const providers = bound ? [await graph.getProvider()] : (await graph.listProviders()).items;
  const resources = [];
  for (const provider of providers) {
    if (!provider.specification) continue;
    let cursor;
    do {
      const query = { ...(cursor ? { cursor } : {}), limit: 100 };
      const page = bound
        ? await graph.listSpecificationDocuments(query)
        : await graph.listSpecificationDocuments({ providerId: provider.providerId, ...query });
      for (const doc of page.items) {
        resources.push({
          uri: specificationUri(provider.providerId, doc.knowledgeId),
          name: `${provider.providerId} ${doc.knowledgeId}`,
          ...(doc.title ? { title: doc.title } : {}),
          ...(doc.summary ? { description: doc.summary } : {}),
        });
      }
      cursor = page.nextCursor;
    } while (cursor);
  }
  return resources;
}

/**
 * @param graph a CapabilityGraph or a BoundProviderGraph
 * @param options { name?, version?, prefix?, tools?, documentBodies?, entryPoints? }
 */
function createMcpServer(graph, options = {}) {
  // Read once by the pure-JSON walk: a getter or a Proxy is never invoked.
  options = JSON.parse(toWireJson(options));
  const isObject = options !== null && typeof options === 'object' && !Array.isArray(options) && !(NON_JSON_KEY in options);
  if (!isObject) throw inputInvalid('options');
  const { name = 'capability-graph', version = require('../package.json').version, ...adapterOptions } = options;
  if (typeof name !== 'string' || name === '') throw inputInvalid('name');
  if (typeof version !== 'string' || version === '') throw inputInvalid('version');
  const adapter = createToolAdapter(graph, adapterOptions);
  const documentBodies = adapterOptions.documentBodies === true;

  const { Server } = requireMcpSdk('server/index.js');
  const types = requireMcpSdk('types.js');
  const server = new Server({ name, version }, { capabilities: { tools: {}, ...(documentBodies ? { resources: {} } : {}) } });

  server.setRequestHandler(types.ListToolsRequestSchema, async () => ({ tools: adapter.tools.map((t) => ({ ...t })) }));
  server.setRequestHandler(types.CallToolRequestSchema, async (request, extra) => {
    const { name: tool, arguments: args } = request.params;
    if (!adapter.has(tool)) throw new types.McpError(types.ErrorCode.InvalidParams, 'Unknown tool');
    const outcome = await adapter.call(tool, args ?? {}, { signal: extra.signal });
    if (!outcome.ok) return { content: [{ type: 'text', text: JSON.stringify(outcome.error) }], isError: true };
    return { content: [{ type: 'text', text: JSON.stringify(outcome.result) }], structuredContent: outcome.result };
  });

  if (documentBodies) {
    server.setRequestHandler(types.ListResourcesRequestSchema, async () => ({ resources: await listSpecificationResources(graph) }));
    server.setRequestHandler(types.ReadResourceRequestSchema, async (request) => {
      const { uri } = request.params;
      const match = /^capability-graph:\/\/([^/]+)\/specification\/([^/]+)$/.exec(uri);
      if (!match) throw new types.McpError(types.ErrorCode.InvalidParams, 'Unknown resource');
      const [, providerId, knowledgeId] = match;
      let batch;
      try {
        if (isBound(graph) && graph.providerId !== providerId) {
          throw new GraphError({ code: 'CG_ACCESS_DENIED', phase: 'document' });
        }
        batch = isBound(graph)
          ? await graph.readSpecification({ knowledgeIds: [knowledgeId] })
          : await graph.readSpecification({ providerId, knowledgeIds: [knowledgeId] });
      } catch (error) {
        throw new types.McpError(types.ErrorCode.InvalidParams, JSON.stringify(error instanceof GraphError ? error.toJSON() : { code: 'CG_INTERNAL' }));
      }
      const slot = batch.results[0];
      if (!slot?.ok) throw new types.McpError(types.ErrorCode.InvalidParams, JSON.stringify(slot?.error ?? new GraphError({ code: 'CG_DOCUMENT_NOT_FOUND', phase: 'document' })));
      return { contents: [{ uri, mimeType: slot.value.contentType.split(';')[0], text: slot.value.text }] };
    });
  }
  return server;
}

module.exports = { createMcpServer };
