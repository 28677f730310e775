// The seed MCP example driven by a real MCP client over stdio (SPEC §10, seed 003).
import test from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CapabilityGraph } from '@devcodex/capability-graph';
import { cap, inline, repoRoot, seedRoot, seedSource } from './helpers.mjs';

const SEED_TOOLS = ['list_providers', 'get_provider', 'list_catalog', 'get_capabilities', 'get_neighbors', 'resolve', 'resolve_selection', 'match', 'list_knowledge_members', 'list_specification_documents', 'read_documents', 'read_document_page', 'read_specification', 'read_specification_page', 'list_entry_points'];

const json = (result) => {
  assert.equal(result.content[0].type, 'text');
  return JSON.parse(result.content[0].text);
};

test('a stdio MCP client walks the seed chain, sees exact errors, reads the specification', async () => {
  const transport = new StdioClientTransport({ command: process.execPath, args: [path.join(repoRoot, 'examples', 'seed-mcp', 'server.mjs')], stderr: 'pipe' });
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(transport);
  const direct = await CapabilityGraph.open({ providers: [seedSource()] });
  try {
    const { tools } = await client.listTools();
    // No retriever and no runtime adapter here: their tools are not listed.
    assert.deepEqual(tools.map((t) => t.name), SEED_TOOLS.map((n) => `example_${n}`));
    assert.ok(tools.every((t) => t.inputSchema.type === 'object'));
    for (const tool of tools) {
      assert.ok(tool.title && !tool.title.includes('_'), tool.name);
      assert.deepEqual(tool.annotations, { title: tool.title, readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
    }
    const instructions = client.getInstructions();
    for (const name of ['example_list_entry_points', 'example_match', 'example_get_neighbors', 'example_resolve_selection', 'example_read_documents']) assert.ok(instructions.includes(`\`${name}\``), name);
    assert.ok(!instructions.includes('query_runtime'));
    // No tool per capability and no capability data in tool metadata: the schemas cite a few
    // IDs of this graph as examples, nothing of what the capabilities say.
    const metadata = JSON.stringify(tools);
    for (const row of (await direct.listCatalog()).items) {
      for (const text of [row.name, row.description, row.whenToUse]) assert.ok(!metadata.includes(text), `tool metadata mentions ${text}`);
    }
    assert.ok(new Set(metadata.match(/seed\.http::[a-z.]+/g)).size <= 3);

    const call = async (name, args) => {
      const result = await client.callTool({ name: `example_${name}`, arguments: args });
      assert.notEqual(result.isError, true, JSON.stringify(result.content));
      assert.deepEqual(result.structuredContent, json(result));
      return json(result);
    };
    const entries = await call('list_entry_points', {});
    assert.deepEqual(entries.items.map((s) => s.value.qualifiedId), ['seed.http::route']);
    const revision = entries.meta.staticRevision;
    const catalog = await call('list_catalog', { requiredStaticRevision: revision });
    assert.deepEqual(catalog, await direct.listCatalog({ requiredStaticRevision: revision }));
    const neighbours = await call('get_neighbors', { id: 'seed.http::route', kinds: ['children'], requiredStaticRevision: revision });
    assert.deepEqual(neighbours.groups.children.items.map((i) => i.qualifiedId), ['seed.http::route.http', 'seed.http::route.validation']);
    const details = await call('get_capabilities', { ids: ['seed.http::route.validation'], requiredStaticRevision: revision });
    assert.equal(details.results[0].ok, true);
    const selection = await call('resolve_selection', { selected: ['seed.http::route.validation'], requiredStaticRevisionByProvider: { 'seed.http': revision } });
    assert.deepEqual(selection.added, [{ providerId: 'seed.http', capabilityId: 'schema.request' }]);
    const members = await call('list_knowledge_members', { capability: 'seed.http::route', collectionId: 'ROUTING', requiredStaticRevision: revision });
    assert.deepEqual(members.items.map((m) => m.knowledgeId), ['D-01', 'D-02']);
    const reads = await call('read_documents', { selected: selection.resolved.map((id) => `${id.providerId}::${id.capabilityId}`), requiredStaticRevision: revision });
    assert.deepEqual(reads.results.map((r) => r.value.knowledgeId), ['D-02', 'D-03']);
    assert.ok(!JSON.stringify(reads).includes(seedRoot));

    // Failures: isError, the exact core error JSON as text, no structuredContent.
    for (const [args, probe] of [
      [{ requestProviderScope: ['not.allowed'] }, () => direct.listCatalog({ requestProviderScope: ['not.allowed'] })],
      [{ requiredStaticRevision: 's:0000000000000000' }, () => direct.listCatalog({ requiredStaticRevision: 's:0000000000000000' })],
    ]) {
      const result = await client.callTool({ name: 'example_list_catalog', arguments: args });
      assert.equal(result.isError, true);
      assert.equal(result.structuredContent, undefined);
      const expected = await probe().then(() => assert.fail('expected a failure'), (e) => e.toJSON());
      assert.deepEqual(json(result), expected);
    }
    // The protocol error says its text once.
    await assert.rejects(client.callTool({ name: 'example_nope', arguments: {} }), (error) => {
      assert.deepEqual([error.code, error.message], [-32602, 'MCP error -32602: Unknown tool']);
      return true;
    });

    const { resources } = await client.listResources();
    assert.deepEqual(resources.map((r) => r.uri), ['capability-graph://seed.http/specification/SPEC-01']);
    const spec = await client.readResource({ uri: resources[0].uri });
    assert.equal(spec.contents[0].mimeType, 'text/markdown');
    assert.match(spec.contents[0].text, /^# Seed HTTP conventions/);

    const matched = await call('match', { intent: 'validate the request body before the handler runs' });
    assert.equal(matched.matches[0].qualifiedId, 'seed.http::route.validation');
  } finally {
    await direct.close();
    const pid = transport.pid;
    await client.close();
    // The server exits once its input closes.
    for (let i = 0; i < 50 && alive(pid); i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(alive(pid), false);
  }
});

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('a cancelled MCP request aborts the executor', async () => {
  const { InMemoryTransport } = await import('@modelcontextprotocol/sdk/inMemory.js');
  const { createMcpServer } = await import('@devcodex/capability-graph');
  let executorSignal;
  const graph = await CapabilityGraph.open({
    providers: [seedSource()],
    executor: {
      id: 'slow',
      match: (request, { signal }) => {
        executorSignal = signal;
        return new Promise(() => {});
      },
    },
  });
  const server = createMcpServer(graph);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'cancel', version: '1.0.0' });
  await client.connect(clientSide);
  const controller = new AbortController();
  const pending = client.callTool({ name: 'match', arguments: { intent: 'anything' } }, undefined, { signal: controller.signal });
  for (let i = 0; i < 50 && !executorSignal; i++) await new Promise((r) => setTimeout(r, 10));
  controller.abort();
  await assert.rejects(pending);
  for (let i = 0; i < 50 && !executorSignal.aborted; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(executorSignal.aborted, true);
  await client.close();
  await server.close();
  await graph.close();
});

test('a cancelled MCP page read aborts the reader it waits for', async () => {
  const { InMemoryTransport } = await import('@modelcontextprotocol/sdk/inMemory.js');
  const { createMcpServer } = await import('@devcodex/capability-graph');
  const url = 'https://docs.example.com/slow.md';
  let readerSignal;
  const reader = {
    id: 'slow',
    canRead: () => true,
    read: (ref, ctx, { signal }) => {
      readerSignal = signal;
      return new Promise(() => {});
    },
  };
  const definition = { providerId: 'acme', name: 'A', version: '1', capabilities: [{ capabilityId: 'x', name: 'X', description: 'D', whenToUse: 'W', knowledge: [{ kind: 'document', knowledgeId: 'SLOW', role: 'guide', locator: { type: 'http', url } }] }] };
  const graph = await CapabilityGraph.open({ providers: [{ definition }], readers: [reader] });
  const server = createMcpServer(graph, { documentBodies: true });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'cancel-page', version: '1.0.0' });
  await client.connect(clientSide);
  const controller = new AbortController();
  const pending = client.callTool({ name: 'read_document_page', arguments: { capability: 'acme::x', knowledgeId: 'SLOW' } }, undefined, { signal: controller.signal });
  for (let i = 0; i < 50 && !readerSignal; i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(readerSignal instanceof AbortSignal, 'the reader receives the call signal');
  controller.abort();
  await assert.rejects(pending);
  for (let i = 0; i < 50 && !readerSignal.aborted; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(readerSignal.aborted, true);
  await client.close();
  await server.close();
  await graph.close();
});

test('MCP answers echo nothing whole: an unknown 1 MiB tool name or resource URI is a small protocol error', async () => {
  const { InMemoryTransport } = await import('@modelcontextprotocol/sdk/inMemory.js');
  const { createMcpServer } = await import('@devcodex/capability-graph');
  const graph = await CapabilityGraph.open({ providers: [seedSource()] });
  const server = createMcpServer(graph, { documentBodies: true });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'test', version: '1.0.0' });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  try {
    const huge = 'h'.repeat(1 << 20);
    for (const attempt of [
      () => client.callTool({ name: huge, arguments: {} }),
      () => client.readResource({ uri: `capability-graph://${huge}` }),
      () => client.readResource({ uri: `capability-graph://seed.http/specification/${huge}` }),
    ]) {
      await assert.rejects(attempt(), (error) => {
        assert.ok(error.message.length <= 4096, `${error.message.length} characters`);
        return true;
      });
    }
    const result = await client.callTool({ name: 'list_catalog', arguments: { [huge]: 1, capabilityIdPrefix: huge } });
    assert.equal(result.isError, true);
    assert.ok(result.content[0].text.length <= 4096);
  } finally {
    await client.close();
    await server.close();
    await graph.close();
  }
});

test('without the optional MCP SDK, createMcpServer and `capability-graph mcp` name the package to install', async () => {
  const { execFileSync, spawnSync } = await import('node:child_process');
  const preload = path.join(repoRoot, '__test__', 'fixtures', 'without-mcp-sdk.cjs');
  const code = `
    const { CapabilityGraph, createMcpServer, GraphError } = require('@devcodex/capability-graph');
    CapabilityGraph.open({ providers: [] }).then((graph) => {
      try { createMcpServer(graph); console.log('created'); }
      catch (e) { console.log(JSON.stringify({ isGraphError: e instanceof GraphError, ...e.toJSON() })); }
      return graph.close();
    });`;
  const out = JSON.parse(execFileSync(process.execPath, ['-r', preload, '-e', code], { cwd: repoRoot, encoding: 'utf8' }));
  assert.deepEqual(out, {
    isGraphError: true,
    code: 'CG_CONFIG_INVALID',
    phase: 'config',
    message: 'Configuration is invalid',
    nextAction: 'check_config',
    details: { package: '@modelcontextprotocol/sdk' },
  });

  const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
  const os = await import('node:os');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cg-mcp-peer-'));
  try {
    const config = path.join(dir, 'capability-graph.json');
    writeFileSync(config, JSON.stringify({ providers: [seedSource()] }));
    const cli = spawnSync(process.execPath, ['-r', preload, path.join(repoRoot, 'bin', 'capability-graph.cjs'), 'mcp', '--config', config], {
      encoding: 'utf8',
      input: '',
    });
    assert.equal(cli.status, 1);
    assert.equal(cli.stdout, '');
    const envelope = JSON.parse(cli.stderr);
    assert.equal(envelope.ok, false);
    assert.equal(envelope.error.code, 'CG_CONFIG_INVALID');
    assert.deepEqual(envelope.error.details, { package: '@modelcontextprotocol/sdk' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A client connected in memory to `createMcpServer(graph, options)`. */
async function connected(graph, options) {
  const { InMemoryTransport } = await import('@modelcontextprotocol/sdk/inMemory.js');
  const { createMcpServer } = await import('@devcodex/capability-graph');
  const server = createMcpServer(graph, options);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'test', version: '1.0.0' });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  return { client, close: async () => (await client.close(), await server.close()) };
}

test('MCP lists the tools this configuration can serve, with instructions for the walk; a missing resource is -32002', async () => {
  const { lexicalExecutor } = await import('@devcodex/capability-graph');
  const bare = await CapabilityGraph.open({ providers: [seedSource()] });
  let mcp = await connected(bare);
  const listed = (await mcp.client.listTools()).tools.map((t) => t.name);
  assert.deepEqual(listed, ['list_providers', 'get_provider', 'list_catalog', 'get_capabilities', 'get_neighbors', 'resolve', 'resolve_selection', 'list_knowledge_members', 'list_specification_documents']);
  const instructions = mcp.client.getInstructions();
  assert.match(instructions, /^This server serves the capability graph of "seed\.http"/);
  assert.ok(!/`match`|`read_documents`/.test(instructions), instructions);
  await mcp.close();
  // Named, a tool is listed and fails with its documented code.
  mcp = await connected(bare, { tools: ['match', 'list_catalog'], instructions: 'Use list_catalog first.' });
  assert.deepEqual((await mcp.client.listTools()).tools.map((t) => t.name), ['list_catalog', 'match']);
  assert.equal(mcp.client.getInstructions(), 'Use list_catalog first.');
  const unconfigured = await mcp.client.callTool({ name: 'match', arguments: { intent: 'x' } });
  assert.equal(unconfigured.isError, true);
  assert.equal(json(unconfigured).code, 'CG_MODEL_NOT_CONFIGURED');
  await mcp.close();
  await bare.close();

  const graph = await CapabilityGraph.open({ providers: [seedSource()], executor: lexicalExecutor() });
  mcp = await connected(graph, { documentBodies: true, dialect: 'strict', prefix: 'seed_' });
  const { tools } = await mcp.client.listTools();
  assert.ok(tools.some((t) => t.name === 'seed_match') && tools.some((t) => t.name === 'seed_read_documents'));
  const catalog = tools.find((t) => t.name === 'seed_list_catalog');
  assert.deepEqual(catalog.inputSchema.required, Object.keys(catalog.inputSchema.properties));
  const nulls = await mcp.client.callTool({ name: 'seed_list_catalog', arguments: { capabilityIdPrefix: null, parent: null, cursor: null, limit: 1, requestProviderScope: null, requiredStaticRevision: null } });
  assert.notEqual(nulls.isError, true, JSON.stringify(nulls.content));
  assert.equal(nulls.structuredContent.items.length, 1);
  for (const uri of ['capability-graph://seed.http/specification/NOPE-9', 'capability-graph://ghost/specification/SPEC-01', 'capability-graph://elsewhere']) {
    await assert.rejects(mcp.client.readResource({ uri }), (error) => {
      assert.equal(error.code, -32002, uri);
      assert.equal(error.message, 'MCP error -32002: Resource not found');
      return true;
    });
  }
  await mcp.close();
  await graph.close();
});

/**
 * An agent that follows the server's instructions literally: it reads which argument to pin
 * and from which member of the first result's meta out of the instructions' own words, and
 * pins every later call to it, per provider the call names (every provider when it names
 * none), as the instructions say.
 */
async function literalAgent(graph, options) {
  const mcp = await connected(graph, options);
  const instructions = mcp.client.getInstructions();
  const taught = /pin (\w+) to the (\w+) in the first result's meta/.exec(instructions);
  assert.ok(taught, instructions);
  const [, key, member] = taught;
  const { tools } = await mcp.client.listTools();
  let pinned;
  /** The pin of a call that names the capabilities `named` (qualified IDs) or a provider. */
  const pin = (named) => {
    if (pinned === undefined) return {};
    if (typeof pinned === 'string') return { [key]: pinned };
    const providers = new Set(named.length ? named.map((id) => id.split('::')[0]) : Object.keys(pinned));
    return { [key]: Object.fromEntries(Object.entries(pinned).filter(([p]) => providers.has(p))) };
  };
  const call = async (name, args, named = []) => {
    const tool = tools.find((t) => t.name === name);
    // The tool takes the pin and its description says where it comes from.
    assert.ok(tool.inputSchema.properties[key]?.description.includes(member), `${name} takes ${key}`);
    const result = await mcp.client.callTool({ name, arguments: { ...args, ...pin(named) } });
    assert.notEqual(result.isError, true, `${name} ${JSON.stringify({ ...args, ...pin(named) })} → ${result.content[0].text}`);
    if (pinned === undefined) {
      pinned = result.structuredContent.meta[member];
      assert.ok(pinned, `the first result's meta has ${member}: ${JSON.stringify(result.structuredContent.meta)}`);
    }
    return result.structuredContent;
  };
  return { instructions, key, call, close: mcp.close };
}

test('an agent that follows the instructions literally walks one provider and several without a revision error', async () => {
  const { lexicalExecutor } = await import('@devcodex/capability-graph');
  const acme = inline('acme', [cap('billing', { requires: ['ledger'] }), cap('ledger')]);
  for (const [providers, entryPoints, expected] of [
    [[seedSource()], ['seed.http::route'], 'requiredStaticRevision'],
    [[seedSource(), acme], ['seed.http::route', 'acme::billing'], 'requiredStaticRevisionByProvider'],
  ]) {
    const graph = await CapabilityGraph.open({ providers, executor: lexicalExecutor() });
    const agent = await literalAgent(graph, { documentBodies: true, entryPoints });
    try {
      assert.equal(agent.key, expected, agent.instructions);
      const several = providers.length > 1;
      const entries = await agent.call('list_entry_points', {});
      assert.deepEqual(entries.items.map((s) => s.value.qualifiedId), entryPoints);
      const again = await agent.call('list_entry_points', {});
      assert.deepEqual(again.items, entries.items);
      const catalog = await agent.call('list_catalog', {});
      assert.equal(catalog.items.length, several ? 7 : 5);
      const children = await agent.call('list_catalog', { parent: 'seed.http::route' }, ['seed.http::route']);
      assert.deepEqual(children.items.map((r) => r.qualifiedId), ['seed.http::route.http', 'seed.http::route.validation']);
      const picked = ['seed.http::route.validation', ...(several ? ['acme::billing'] : [])];
      const details = await agent.call('get_capabilities', { ids: picked }, picked);
      assert.ok(details.results.every((slot) => slot.ok));
      // Neighbours: only the kinds asked for.
      const parents = await agent.call('get_neighbors', { id: 'seed.http::route.validation', kinds: ['parents'] }, ['seed.http::route.validation']);
      assert.deepEqual(Object.keys(parents.groups), ['parents']);
      assert.deepEqual(parents.groups.parents.items.map((r) => r.qualifiedId), ['seed.http::request', 'seed.http::route']);
      const selection = await agent.call('resolve_selection', { selected: picked }, picked);
      assert.deepEqual(selection.added.map((id) => `${id.providerId}::${id.capabilityId}`).sort(), [...(several ? ['acme::ledger'] : []), 'seed.http::schema.request']);
      const read = await agent.call('read_documents', { selected: ['seed.http::route.validation'] }, ['seed.http::route.validation']);
      assert.ok(read.results.length > 0 && read.results.every((slot) => slot.ok));
      const spec = await agent.call('read_specification', { providerId: 'seed.http' }, ['seed.http']);
      assert.equal(spec.results[0].ok, true);
      await agent.call('match', { intent: 'validate the request body' });
    } finally {
      await agent.close();
      await graph.close();
    }
  }
});

test('`capability-graph mcp` on the shipped config serves seed_ tools with the instructions', async () => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(repoRoot, 'bin', 'capability-graph.cjs'), 'mcp', '--config', path.join(repoRoot, 'examples', 'capability-graph.json')],
    stderr: 'pipe',
  });
  const client = new Client({ name: 'shipped', version: '1.0.0' });
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), SEED_TOOLS.slice(0, 10).map((n) => `seed_${n}`));
    assert.ok(client.getInstructions().includes('`seed_list_catalog`'));
    const result = await client.callTool({ name: 'seed_list_catalog', arguments: { limit: 1 } });
    assert.notEqual(result.isError, true);
  } finally {
    await client.close();
  }
});

const HTTP_INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });

/** GETs or POSTs /mcp on `port` of `address` with raw headers (a Host header fetch would not send). */
async function rawRequest(port, headers, body, address = '127.0.0.1') {
  const http = await import('node:http');
  return new Promise((resolve, reject) => {
    const req = http.request({ host: address, port, path: '/mcp', method: body === undefined ? 'GET' : 'POST', headers }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode, text, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

test('Streamable HTTP, stateless: SDK clients list and call over one graph; the Host header is checked', async () => {
  const http = await import('node:http');
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const { createMcpHttpHandler, lexicalExecutor } = await import('@devcodex/capability-graph');
  const graph = await CapabilityGraph.open({ providers: [seedSource()], executor: lexicalExecutor() });
  const handler = createMcpHttpHandler(graph, { prefix: 'seed_', entryPoints: ['seed.http::route'] });
  const server = http.createServer((req, res) => handler(req, res));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  const connect = async () => {
    const client = new Client({ name: 'http', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
    return client;
  };
  try {
    const [a, b] = await Promise.all([connect(), connect()]);
    const { tools } = await a.listTools();
    assert.ok(tools.every((t) => t.name.startsWith('seed_') && t.title && t.annotations.readOnlyHint === true));
    assert.match(a.getInstructions(), /`seed_list_entry_points`/);
    const [x, y] = await Promise.all([
      a.callTool({ name: 'seed_list_entry_points', arguments: {} }),
      b.callTool({ name: 'seed_get_neighbors', arguments: { id: 'seed.http::route', kinds: ['children'] } }),
    ]);
    assert.deepEqual(x.structuredContent.items.map((s) => s.value.qualifiedId), ['seed.http::route']);
    const direct = await graph.getNeighbors('seed.http::route', { kinds: ['children'] });
    assert.deepEqual(y.structuredContent, { ...direct, groups: { children: direct.groups.children } });
    const failed = await b.callTool({ name: 'seed_list_catalog', arguments: { requestProviderScope: ['not.allowed'] } });
    assert.equal(failed.isError, true);
    assert.equal(json(failed).code, 'CG_SCOPE_DENIED');
    await Promise.all([a.close(), b.close()]);

    const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    const accept = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    // DNS rebinding: a page on another name that resolves here is refused.
    const rebound = await rawRequest(port, { ...accept, host: `attacker.example:${port}` }, init);
    assert.equal(rebound.status, 403);
    const local = await rawRequest(port, { ...accept, host: `localhost:${port}` }, init);
    assert.equal(local.status, 200);
    assert.equal(JSON.parse(local.text).result.serverInfo.name, 'capability-graph');
    // Stateless: no stream to open, no session to end.
    assert.equal((await rawRequest(port, { accept: 'text/event-stream', host: `127.0.0.1:${port}` })).status, 405);
    for (const options of [{ allowedHosts: [] }, { allowedHosts: [''] }, { allowedOrigins: 'x' }, { maxRequestBodySize: 0 }, { bogus: 1 }]) {
      const field = Object.keys(options)[0];
      assert.throws(() => createMcpHttpHandler(graph, options), (e) => e.code === 'CG_INPUT_INVALID' && e.details.field === field);
    }
    // Named hosts replace the loopback default.
    const named = createMcpHttpHandler(graph, { allowedHosts: [`mcp.internal:${port}`] });
    server.removeAllListeners('request');
    server.on('request', (req, res) => named(req, res));
    assert.equal((await rawRequest(port, { ...accept, host: `mcp.internal:${port}` }, init)).status, 200);
    assert.equal((await rawRequest(port, { ...accept, host: `127.0.0.1:${port}` }, init)).status, 403);
  } finally {
    await new Promise((resolve) => server.close(resolve));
    await graph.close();
  }
});

/** The seed served over HTTP on loopback by createMcpHttpHandler(graph, options) for
 *  `run({ port, headers, graph, serve })`; `serve(options)` swaps the handler's options. */
async function withSeedHttp(options, run) {
  const http = await import('node:http');
  const { createMcpHttpHandler } = await import('@devcodex/capability-graph');
  const graph = await CapabilityGraph.open({ providers: [seedSource()] });
  let handler = createMcpHttpHandler(graph, options);
  const server = http.createServer((req, res) => handler(req, res));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  const serve = (next) => (handler = createMcpHttpHandler(graph, next));
  try {
    await run({ port, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', host: `127.0.0.1:${port}` }, graph, serve });
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await graph.close();
  }
}

test('Streamable HTTP checks Origin by default: none, its own loopback origin or an allowed one is served, any other 403', () =>
  withSeedHttp({}, async ({ port, headers, serve }) => {
    const status = async (origin) => (await rawRequest(port, { ...headers, ...(origin ? { origin } : {}) }, HTTP_INIT)).status;
    assert.equal(await status(undefined), 200);
    assert.equal(await status(`http://127.0.0.1:${port}`), 200);
    assert.equal(await status(`http://localhost:${port}`), 200);
    const foreign = await rawRequest(port, { ...headers, origin: 'https://attacker.example' }, HTTP_INIT);
    assert.equal(foreign.status, 403);
    assert.equal(JSON.parse(foreign.text).error.code, -32000);
    assert.equal(await status(`http://127.0.0.1:${port + 1}`), 403);
    assert.equal(await status('null'), 403);
    serve({ allowedOrigins: ['https://app.example'] });
    assert.equal(await status('https://app.example'), 200);
    assert.equal(await status(`http://localhost:${port}`), 200);
    assert.equal(await status('https://other.example'), 403);
  }));

test('Streamable HTTP with auth.bearer: a request without one of the tokens is 401 with WWW-Authenticate: Bearer', () =>
  withSeedHttp({ auth: { bearer: 'first-token' } }, async ({ port, headers, serve }) => {
    const send = (authorization) => rawRequest(port, { ...headers, ...(authorization ? { authorization } : {}) }, HTTP_INIT);
    for (const authorization of [undefined, 'Bearer wrong-token', 'Bearer first-toke', 'Basic first-token', 'first-token']) {
      const refused = await send(authorization);
      assert.equal(refused.status, 401, String(authorization));
      assert.equal(refused.headers['www-authenticate'], 'Bearer');
    }
    assert.equal((await send('Bearer first-token')).status, 200);
    serve({ auth: { bearer: ['first-token', 'second-token'] } });
    assert.equal((await send('Bearer second-token')).status, 200);
    assert.equal((await send('Bearer first-token')).status, 200);
    assert.equal((await send('Bearer third-token')).status, 401);
    for (const auth of [{ bearer: '' }, { bearer: [] }, { bearer: [1] }, { token: 'x' }, 'x']) {
      assert.throws(() => serve({ auth }), (e) => e.code === 'CG_INPUT_INVALID' && /^auth/.test(e.details.field), JSON.stringify(auth));
    }
  }));

test('`capability-graph mcp --http` serves the shipped config over Streamable HTTP on loopback', async () => {
  const { spawnSync } = await import('node:child_process');
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const cli = path.join(repoRoot, 'bin', 'capability-graph.cjs');
  const config = path.join(repoRoot, 'examples', 'capability-graph.json');
  const served = await serveCli(['--config', config, '--http', '0']);
  const { url } = served;
  try {
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const client = new Client({ name: 'cli-http', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), SEED_TOOLS.slice(0, 10).map((n) => `seed_${n}`));
    assert.ok(client.getInstructions().includes('`seed_list_catalog`'));
    const result = await client.callTool({ name: 'seed_match', arguments: { intent: 'validate the request body before the handler runs' } });
    assert.equal(result.structuredContent.matches[0].qualifiedId, 'seed.http::route.validation');
    await client.close();
    const port = Number(new URL(url).port);
    assert.equal((await rawRequest(port, { 'content-type': 'application/json', accept: 'application/json, text/event-stream', host: `evil.example:${port}` }, '{}')).status, 403);
  } finally {
    await served.stop();
  }
  // A port in use is the config's to change.
  const net = await import('node:net');
  const taken = net.createServer();
  await new Promise((resolve) => taken.listen(0, '127.0.0.1', resolve));
  try {
    const run = spawnSync(process.execPath, [cli, 'mcp', '--config', config, '--http', `127.0.0.1:${taken.address().port}`], { encoding: 'utf8', input: '' });
    assert.equal(run.status, 1);
    const { error } = JSON.parse(run.stderr);
    assert.deepEqual([error.code, error.phase, error.details.path], ['CG_CONFIG_INVALID', 'config', '--http']);
  } finally {
    await new Promise((resolve) => taken.close(resolve));
  }
  // Bad addresses and flags are usage errors.
  for (const args of [['--http', 'nope'], ['--http', '70000'], ['--allowed-host', 'x:1']]) {
    const run = spawnSync(process.execPath, [cli, 'mcp', '--config', config, ...args], { encoding: 'utf8', input: '' });
    assert.equal(run.status, 1, args.join(' '));
    const { error } = JSON.parse(run.stderr);
    assert.deepEqual([error.code, error.phase, error.details.field], ['CG_INPUT_INVALID', 'config', args[0]]);
  }
});

/** A config serving the seed provider with `http` as its mcp.http block, in a fresh folder
 *  beside a token file `token` holding `token`. */
async function httpProject(http, token = 'cli-token-1') {
  const { mkdtempSync, writeFileSync } = await import('node:fs');
  const os = await import('node:os');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cg-mcp-http-'));
  writeFileSync(path.join(dir, 'token'), `${token}\n`);
  const config = path.join(dir, 'capability-graph.json');
  const providers = [{ providerId: 'seed.http', authority: { kind: 'file', rootDir: seedRoot, definitionLayout: 'directory' } }];
  writeFileSync(config, JSON.stringify({ providers, mcp: { prefix: 'seed_', ...(http ? { http } : {}) } }));
  return { dir, config };
}

/** `capability-graph mcp ARGS` serving over HTTP: its URL and port, and stop() (asserting exit 0). */
async function serveCli(args, env = {}) {
  const { spawn } = await import('node:child_process');
  const cli = path.join(repoRoot, 'bin', 'capability-graph.cjs');
  const child = spawn(process.execPath, [cli, 'mcp', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let stderr = '';
  const url = await new Promise((resolve, reject) => {
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      const found = /at (http:\/\/\S+)\n/.exec(stderr);
      if (found) resolve(found[1]);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${stderr}`)));
  });
  const stop = async () => {
    const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    if (child.exitCode === null) child.kill('SIGTERM');
    assert.deepEqual(await exited, { code: 0, signal: null });
  };
  return { url, port: Number(new URL(url).port), stop };
}

/** What a raw TCP client reads on `port` after writing `text`, until the server closes. */
async function rawExchange(port, text) {
  const net = await import('node:net');
  return new Promise((resolve, reject) => {
    let got = '';
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
    socket.on('data', (d) => (got += d));
    socket.on('error', reject);
    socket.on('close', () => resolve(got));
  });
}

const toolsCall = (id, params) => ({ jsonrpc: '2.0', id, method: 'tools/call', params });

// The guard ends the wait of a server that would never answer; nothing here measures time.
test('Streamable HTTP answers every request of a batch that cancels its own call', { timeout: 30_000 }, () =>
  withSeedHttp({ prefix: 'seed_' }, async ({ port, headers }) => {
    const batch = [
      toolsCall(1, { name: 'seed_list_providers', arguments: {} }),
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'changed my mind' } },
    ];
    const answered = await rawRequest(port, headers, JSON.stringify(batch));
    assert.equal(answered.status, 200);
    const answers = JSON.parse(answered.text);
    assert.deepEqual(answers.map((a) => a.id).sort(), [1, 2]);
    assert.ok(answers.every((a) => a.result || a.error), answered.text);
  }));

test('tools/call without a name or with non-object arguments is invalid params (-32602) in one line', () =>
  withSeedHttp({ prefix: 'seed_' }, async ({ port, headers }) => {
    for (const params of [{}, { arguments: {} }, { name: 'seed_list_providers', arguments: 5 }, { name: 'seed_list_providers', arguments: [] }, { name: 7 }]) {
      const one = await rawRequest(port, headers, JSON.stringify(toolsCall(3, params)));
      const { error } = JSON.parse(one.text);
      assert.equal(error.code, -32602, JSON.stringify(params));
      assert.doesNotMatch(error.message, /\n/);
      assert.match(error.message, /params\.(name|arguments)/);
    }
  }));

test('`capability-graph mcp --http` takes its tokens and origins from the config\'s mcp.http block and the flags', async () => {
  const { config, dir } = await httpProject({ tokenFile: 'token', allowedOrigins: ['https://app.example'] });
  const served = await serveCli(['--config', config, '--http', '0']);
  const { port } = served;
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', host: `127.0.0.1:${port}` };
  const bearer = { ...headers, authorization: 'Bearer cli-token-1' };
  try {
    const refused = await rawRequest(port, headers, HTTP_INIT);
    assert.equal(refused.status, 401);
    assert.equal(refused.headers['www-authenticate'], 'Bearer');
    assert.equal((await rawRequest(port, { ...headers, authorization: 'Bearer nope' }, HTTP_INIT)).status, 401);
    assert.equal((await rawRequest(port, bearer, HTTP_INIT)).status, 200);
    assert.equal((await rawRequest(port, { ...bearer, origin: 'https://app.example' }, HTTP_INIT)).status, 200);
    assert.equal((await rawRequest(port, { ...bearer, origin: 'https://attacker.example' }, HTTP_INIT)).status, 403);
  } finally {
    await served.stop();
  }
  // Flags win over the block; the environment's token serves when no --token-file is given.
  const flagged = await serveCli(['--config', config, '--http', '0', '--allowed-origin', 'https://other.example'], { CAPABILITY_GRAPH_MCP_TOKEN: 'env-token' });
  try {
    const h = { ...headers, host: `127.0.0.1:${flagged.port}`, authorization: 'Bearer env-token' };
    assert.equal((await rawRequest(flagged.port, { ...h, origin: 'https://other.example' }, HTTP_INIT)).status, 200);
    assert.equal((await rawRequest(flagged.port, { ...h, origin: 'https://app.example' }, HTTP_INIT)).status, 403);
    assert.equal((await rawRequest(flagged.port, { ...h, authorization: 'Bearer cli-token-1' }, HTTP_INIT)).status, 401);
  } finally {
    await flagged.stop();
  }
  const byFlag = await serveCli(['--config', config, '--http', '0', '--token-file', path.join(dir, 'token')], { CAPABILITY_GRAPH_MCP_TOKEN: 'env-token' });
  try {
    const h = { ...headers, host: `127.0.0.1:${byFlag.port}` };
    assert.equal((await rawRequest(byFlag.port, { ...h, authorization: 'Bearer cli-token-1' }, HTTP_INIT)).status, 200);
    assert.equal((await rawRequest(byFlag.port, { ...h, authorization: 'Bearer env-token' }, HTTP_INIT)).status, 401);
  } finally {
    await byFlag.stop();
  }
});

test('`capability-graph mcp --http` refuses a non-loopback address without a token before it listens', async () => {
  const { spawnSync } = await import('node:child_process');
  const cli = path.join(repoRoot, 'bin', 'capability-graph.cjs');
  const { config, dir } = await httpProject({});
  // A `.invalid` name never resolves (RFC 6761), so listening fails on every machine, whatever
  // it allows binding to: an error without the reason would mean the check came after listening.
  const run = (args, env = {}) => {
    const r = spawnSync(process.execPath, [cli, 'mcp', '--config', config, '--http', 'cg-test.invalid:8080', ...args], { encoding: 'utf8', input: '', env: { ...process.env, CAPABILITY_GRAPH_MCP_TOKEN: '', ...env }, timeout: 60_000 });
    assert.equal(r.status, 1, r.stderr);
    return JSON.parse(r.stderr).error;
  };
  const refused = run([]);
  assert.deepEqual([refused.code, refused.phase, refused.nextAction, refused.details], ['CG_CONFIG_INVALID', 'config', 'check_config', { path: '--http', reason: 'unauthenticated_bind' }]);
  // With a token or the explicit waiver the bind is attempted (and fails here as any address).
  for (const [args, env] of [[['--allow-unauthenticated'], {}], [['--token-file', path.join(dir, 'token')], {}], [[], { CAPABILITY_GRAPH_MCP_TOKEN: 't' }]]) {
    const { details } = run(args, env);
    assert.deepEqual([details.path, details.reason], ['--http', undefined], args.join(' '));
  }
  const waived = await httpProject({ allowUnauthenticated: true });
  const r = spawnSync(process.execPath, [cli, 'mcp', '--config', waived.config, '--http', 'cg-test.invalid:8080'], { encoding: 'utf8', input: '', timeout: 60_000 });
  assert.deepEqual([JSON.parse(r.stderr).error.details.path, JSON.parse(r.stderr).error.details.reason], ['--http', undefined]);
  // A token file that holds no token is the config's to fix; the HTTP flags need --http.
  const { writeFileSync } = await import('node:fs');
  writeFileSync(path.join(dir, 'empty'), '\n');
  assert.deepEqual(run(['--token-file', path.join(dir, 'empty')]).details.path, '--token-file');
  for (const flag of [['--token-file', 'x'], ['--allowed-origin', 'https://a.example'], ['--allow-unauthenticated']]) {
    const u = spawnSync(process.execPath, [cli, 'mcp', '--config', config, ...flag], { encoding: 'utf8', input: '' });
    assert.equal(u.status, 1);
    assert.deepEqual([JSON.parse(u.stderr).error.code, JSON.parse(u.stderr).error.details.field], ['CG_INPUT_INVALID', flag[0]]);
  }
});

test('`capability-graph mcp --http` on another loopback address serves without a token, reached by that address', async () => {
  const { config } = await httpProject({});
  // All of 127/8 is this machine: no token needed, and its own address passes the Host and Origin checks.
  const served = await serveCli(['--config', config, '--http', '127.0.0.2:0'], { CAPABILITY_GRAPH_MCP_TOKEN: '' });
  const { port } = served;
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  try {
    assert.equal(new URL(served.url).hostname, '127.0.0.2');
    const own = await rawRequest(port, { ...headers, host: `127.0.0.2:${port}`, origin: `http://127.0.0.2:${port}` }, HTTP_INIT, '127.0.0.2');
    assert.equal(own.status, 200, own.text);
    assert.equal((await rawRequest(port, { ...headers, host: `localhost:${port}` }, HTTP_INIT, '127.0.0.2')).status, 200);
    assert.equal((await rawRequest(port, { ...headers, host: `127.0.0.3:${port}` }, HTTP_INIT, '127.0.0.2')).status, 403);
    assert.equal((await rawRequest(port, { ...headers, host: `attacker.example:${port}` }, HTTP_INIT, '127.0.0.2')).status, 403);
  } finally {
    await served.stop();
  }
});

test('`capability-graph mcp --http` caps connections (503 past maxConnections) and unfinished requests (408)', async () => {
  const net = await import('node:net');
  const { config } = await httpProject({ tokenFile: 'token', maxConnections: 2 });
  const capped = await serveCli(['--config', config, '--http', '0']);
  const held = [];
  try {
    // Two connections each answered once and kept open hold the cap.
    for (let i = 0; i < 2; i += 1) {
      const socket = net.connect(capped.port, '127.0.0.1');
      held.push(socket);
      await new Promise((resolve, reject) => {
        socket.once('data', (d) => (String(d).startsWith('HTTP/1.1 405') ? resolve() : reject(new Error(String(d)))));
        socket.once('error', reject);
        socket.write(`GET /mcp HTTP/1.1\r\nhost: 127.0.0.1:${capped.port}\r\nauthorization: Bearer cli-token-1\r\n\r\n`);
      });
    }
    const refused = await rawExchange(capped.port, `GET /mcp HTTP/1.1\r\nhost: 127.0.0.1:${capped.port}\r\n\r\n`);
    assert.match(refused, /^HTTP\/1\.1 503 /);
    assert.equal(JSON.parse(refused.slice(refused.indexOf('\r\n\r\n') + 4)).error.message, 'Too many connections');
  } finally {
    for (const socket of held) socket.destroy();
    await capped.stop();
  }
  const short = await httpProject({ tokenFile: 'token', headersTimeoutMs: 50, bodyTimeoutMs: 50 });
  const bounded = await serveCli(['--config', short.config, '--http', '0']);
  try {
    // Headers never finished, then a body never finished: each answered 408 and closed.
    assert.match(await rawExchange(bounded.port, `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:${bounded.port}\r\n`), /^HTTP\/1\.1 408 /);
    const head = `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:${bounded.port}\r\nauthorization: Bearer cli-token-1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: 100000\r\n\r\n{"jsonrpc":`;
    assert.match(await rawExchange(bounded.port, head), /^HTTP\/1\.1 408 /);
  } finally {
    await bounded.stop();
  }
});

test('the mcp.http block holds exactly the D27 settings; anything else there is CG_CONFIG_INVALID at its key', async () => {
  const { spawnSync } = await import('node:child_process');
  const cli = path.join(repoRoot, 'bin', 'capability-graph.cjs');
  for (const [http, where] of [
    [{ tokenFile: '' }, 'mcp.http.tokenFile'],
    [{ allowedOrigins: [] }, 'mcp.http.allowedOrigins'],
    [{ allowUnauthenticated: 'yes' }, 'mcp.http.allowUnauthenticated'],
    [{ maxConnections: 0 }, 'mcp.http.maxConnections'],
    [{ headersTimeoutMs: 1.5 }, 'mcp.http.headersTimeoutMs'],
    [{ bodyTimeoutMs: -1 }, 'mcp.http.bodyTimeoutMs'],
    [{ token: 'secret' }, 'mcp.http.token'],
    [[], 'mcp.http'],
  ]) {
    const { config } = await httpProject(http);
    const r = spawnSync(process.execPath, [cli, 'mcp', '--config', config], { encoding: 'utf8', input: '' });
    assert.equal(r.status, 1, JSON.stringify(http));
    const { error } = JSON.parse(r.stderr);
    assert.deepEqual([error.code, error.details.path], ['CG_CONFIG_INVALID', where], JSON.stringify(http));
  }
  // Every setting together is accepted (stdio serves until its input ends).
  const { config } = await httpProject({ allowedOrigins: ['https://a.example'], tokenFile: 'token', allowUnauthenticated: false, maxConnections: 8, headersTimeoutMs: 1000, bodyTimeoutMs: 1000 });
  const ok = spawnSync(process.execPath, [cli, 'mcp', '--config', config], { encoding: 'utf8', input: '' });
  assert.equal(ok.status, 0, ok.stderr);
});

test("MCP tool annotations say which tools answer from host components", async () => {
  const { lexicalExecutor } = await import('@devcodex/capability-graph');
  const closed = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
  const open = { ...closed, openWorldHint: true };
  const GRAPH_ONLY = ['list_providers', 'get_provider', 'list_catalog', 'get_capabilities', 'get_neighbors', 'resolve', 'resolve_selection', 'list_knowledge_members', 'list_specification_documents'];
  const BODIES = ['read_documents', 'read_document_page', 'read_specification', 'read_specification_page'];
  const HOSTED = ['retrieve_capabilities', 'query_knowledge', 'query_runtime'];
  const annotations = async (graph) => {
    const mcp = await connected(graph, { documentBodies: true, tools: [...GRAPH_ONLY, 'match', ...BODIES, ...HOSTED] });
    const { tools } = await mcp.client.listTools();
    await mcp.close();
    return new Map(tools.map((t) => [t.name, t]));
  };
  const hosts = {
    capabilityRetriever: { id: 'r', retrieve: () => ({ candidates: [] }) },
    knowledgeRetriever: { id: 'k', retrieve: () => ({ hits: [] }) },
    runtimeAdapters: [{ id: 'rt', providerId: 'seed.http', query: () => ({ items: [] }) }],
  };
  // The engine's own executor, documents from the provider's files only.
  const engine = await CapabilityGraph.open({ providers: [seedSource()], executor: lexicalExecutor(), ...hosts });
  let tools = await annotations(engine);
  for (const name of [...GRAPH_ONLY, 'match', ...BODIES]) assert.deepEqual(tools.get(name).annotations, { title: tools.get(name).title, ...closed }, name);
  for (const name of HOSTED) {
    assert.deepEqual(tools.get(name).annotations, { title: tools.get(name).title, ...open }, name);
    assert.match(`${tools.get(name).title} ${tools.get(name).description}`, /host's/, name);
  }
  assert.match(tools.get('match').description, /built-in/);
  await engine.close();
  // A host executor (a model, say) and the host's readers: their tools say their answers come
  // from the host.
  const hosted = await CapabilityGraph.open({
    providers: [seedSource()],
    executor: { id: 'model', match: async () => ({ matches: [] }) },
    readers: [{ id: 'web', canRead: () => false, read: async () => ({}) }],
    ...hosts,
  });
  tools = await annotations(hosted);
  for (const name of GRAPH_ONLY) assert.deepEqual(tools.get(name).annotations, { title: tools.get(name).title, ...closed }, name);
  for (const name of ['match', ...BODIES, ...HOSTED]) {
    assert.deepEqual(tools.get(name).annotations, { title: tools.get(name).title, ...open }, name);
    assert.match(`${tools.get(name).title} ${tools.get(name).description}`, /host's/, name);
  }
  await hosted.close();
});

test('Streamable HTTP: a body is measured before it is parsed: too long 413, too deep or too wide -32700 unparsed; the server goes on', async () => {
  const http = await import('node:http');
  const { createMcpHttpHandler } = await import('@devcodex/capability-graph');
  const graph = await CapabilityGraph.open({ providers: [seedSource()] });
  const handler = createMcpHttpHandler(graph, { maxRequestBodySize: 2 * 1024 * 1024 });
  const server = http.createServer((req, res) => handler(req, res));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', host: `127.0.0.1:${port}` };
  // Work done: the longest text JSON.parse was handed while the refused bodies were answered.
  const parse = JSON.parse;
  let longest = 0;
  JSON.parse = function (text, ...rest) {
    if (typeof text === 'string') longest = Math.max(longest, text.length);
    return parse.call(this, text, ...rest);
  };
  try {
    const deep = '['.repeat(1024 * 1024);
    const wide = `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":[${'0,'.repeat(100_000)}0]}}`;
    for (const body of [deep, wide]) {
      const answer = await rawRequest(port, headers, body);
      assert.equal(answer.status, 400);
      assert.equal(parse(answer.text).error.code, -32700);
    }
    assert.ok(longest < wide.length, `JSON.parse saw ${longest} characters`);
    assert.equal((await rawRequest(port, headers, 'x'.repeat(2 * 1024 * 1024 + 1))).status, 413);
    const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    assert.equal((await rawRequest(port, headers, init)).status, 200);
  } finally {
    JSON.parse = parse;
    await new Promise((resolve) => server.close(resolve));
    await graph.close();
  }
});
