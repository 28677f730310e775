'use strict';
// createMcpServer: the Tool Adapter behind a low-level MCP `Server`. The MCP SDK is
// loaded here, on first use, so loading the package alone never loads it.

const { GraphError, inputInvalid } = require('../errors.cjs');
const { createToolAdapter } = require('../tools/adapter.cjs');
const { isBound } = require('../graph/graph.cjs');
const { toWireJson, NON_JSON_KEY } = require('../pure-json.cjs');
const { requireMcpSdk } = require('../engine/peer.cjs');

const RESOURCE_PREFIX = 'capability-graph://';
/** MCP's "resource not found" (JSON-RPC -32002). */
const RESOURCE_NOT_FOUND = -32002;
/** A graph error that says the URI names no resource this server has. */
const MISSING = new Set(['CG_DOCUMENT_NOT_FOUND', 'CG_PROVIDER_NOT_FOUND', 'CG_KNOWLEDGE_NOT_FOUND', 'CG_ACCESS_DENIED']);

/**
 * A JSON-RPC error as the SDK sends it: `message` goes to the client as it is (an `McpError`
 * would carry its own "MCP error <code>:" prefix, which the client's adds again).
 */
function protocolError(code, message, data) {
  return Object.assign(new Error(message), { code, ...(data === undefined ? {} : { data }) });
}

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

/** `options` read once by the pure-JSON walk (a getter or a Proxy is never invoked), as an object. */
function plainOptions(options) {
  options = JSON.parse(toWireJson(options));
  const isObject = options !== null && typeof options === 'object' && !Array.isArray(options) && !(NON_JSON_KEY in options);
  if (!isObject) throw inputInvalid('options');
  return options;
}

/** What every server made from `options` shares: checked options, the adapter, the listed tools. */
function serverParts(graph, options) {
  const { name = 'capability-graph', version = require('../../package.json').version, instructions, ...adapterOptions } = options;
  if (typeof name !== 'string' || name === '') throw inputInvalid('name');
  if (typeof version !== 'string' || version === '') throw inputInvalid('version');
  if (instructions !== undefined && (typeof instructions !== 'string' || instructions === '')) throw inputInvalid('instructions');
  const adapter = createToolAdapter(graph, adapterOptions);
  // A tool as MCP lists it: its human title also in `annotations`, for clients that read it there.
  const tools = adapter.tools.map(({ name: n, title, description, inputSchema, outputSchema, annotations }) => ({
    name: n,
    title,
    description,
    inputSchema,
    outputSchema,
    annotations: { title, ...annotations },
  }));
  return { graph, name, version, instructions: instructions ?? adapter.instructions, adapter, tools, documentBodies: adapterOptions.documentBodies === true };
}

/**
 * @param graph a CapabilityGraph or a BoundProviderGraph
 * @param options { name?, version?, instructions?, prefix?, tools?, documentBodies?, entryPoints?, dialect? }
 */
function createMcpServer(graph, options = {}) {
  return serverOf(serverParts(graph, plainOptions(options)));
}

/**
 * The SDK's `tools/call` request schema, except that params it refuses (no name, arguments not
 * an object) are invalid params (-32602) in one line naming the first wrong field, raised
 * through the SDK's error path; the SDK alone would answer -32603 with its whole parse error.
 */
let callToolSchema;
function callToolRequest(types) {
  // Built once: a stateless HTTP handler makes a server per request.
  if (callToolSchema !== undefined) return callToolSchema;
  const params = types.CallToolRequestSchema.shape.params.catch(({ error }) => {
    const issue = error.issues[0];
    throw protocolError(types.ErrorCode.InvalidParams, `Invalid params: ${['params', ...issue.path].join('.')}: ${issue.message}`.replace(/\s+/g, ' '));
  });
  callToolSchema = types.CallToolRequestSchema.extend({ params });
  return callToolSchema;
}

/** A low-level MCP `Server` over the shared parts. */
function serverOf({ graph, name, version, instructions, adapter, tools, documentBodies }) {
  const { Server } = requireMcpSdk('server/index.js');
  const types = requireMcpSdk('types.js');
  const server = new Server({ name, version }, { capabilities: { tools: {}, ...(documentBodies ? { resources: {} } : {}) }, instructions });

  server.setRequestHandler(types.ListToolsRequestSchema, async () => ({ tools: structuredClone(tools) }));
  server.setRequestHandler(callToolRequest(types), async (request, extra) => {
    const { name: tool, arguments: args } = request.params;
    if (!adapter.has(tool)) throw protocolError(types.ErrorCode.InvalidParams, 'Unknown tool');
    const outcome = await adapter.call(tool, args ?? {}, { signal: extra.signal });
    if (!outcome.ok) return { content: [{ type: 'text', text: JSON.stringify(outcome.error) }], isError: true };
    return { content: [{ type: 'text', text: JSON.stringify(outcome.result) }], structuredContent: outcome.result };
  });

  if (documentBodies) {
    server.setRequestHandler(types.ListResourcesRequestSchema, async () => ({ resources: await listSpecificationResources(graph) }));
    server.setRequestHandler(types.ReadResourceRequestSchema, async (request) => {
      const { uri } = request.params;
      const match = /^capability-graph:\/\/([^/]+)\/specification\/([^/]+)$/.exec(uri);
      if (!match) throw protocolError(RESOURCE_NOT_FOUND, 'Resource not found');
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
        throw resourceError(error instanceof GraphError ? error.toJSON() : new GraphError({ code: 'CG_INTERNAL' }).toJSON());
      }
      const slot = batch.results[0];
      if (!slot?.ok) throw resourceError(slot?.error ?? new GraphError({ code: 'CG_DOCUMENT_NOT_FOUND', phase: 'document' }).toJSON());
      return { contents: [{ uri, mimeType: slot.value.contentType.split(';')[0], text: slot.value.text }] };
    });
  }
  return server;
}

/** A failed resource read: -32002 when the URI names nothing this server has, else invalid
 *  params; the graph error's JSON is the message (the client reads it as the tools' errors). */
function resourceError(error) {
  if (MISSING.has(error.code)) return protocolError(RESOURCE_NOT_FOUND, 'Resource not found', error);
  return protocolError(-32602, JSON.stringify(error), error);
}

module.exports = { createMcpServer, plainOptions, serverParts, serverOf };
