// The seed MCP example driven by a real MCP client over stdio (SPEC §10, seed 003).
import test from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CapabilityGraph } from '@devcodex/capability-graph';
import { repoRoot, seedRoot, seedSource } from './helpers.mjs';

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
    assert.ok(tools.length >= 18);
    assert.ok(tools.every((t) => t.name.startsWith('example_') && t.inputSchema.type === 'object'));
    const metadata = JSON.stringify(tools);
    for (const data of ['route.validation', 'schema.request', 'D-02', 'seed.http']) assert.ok(!metadata.includes(data), `tool metadata mentions ${data}`);

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
    await assert.rejects(client.callTool({ name: 'example_nope', arguments: {} }), /Unknown tool/);

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
