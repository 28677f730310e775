// Tool search: a host's own tools (MCP, AI SDK, OpenAI, Anthropic) as a provider, and the
// recipe that turns a match into the few tools a model sees.
import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { CapabilityGraph, lexicalExecutor, providerFromTools } from '@devcodex/capability-graph';
import { createToolServer, TOOLS } from '../examples/tool-search/server.mjs';
import { modelBuilt, throwsWith } from './helpers.mjs';

const require = createRequire(import.meta.url);
const options = (tools, extra = {}) => ({ providerId: 'host.tools', name: 'Host tools', tools, ...extra });

test('providerFromTools is one function for import and require', () => {
  assert.equal(typeof providerFromTools, 'function');
  assert.equal(require('@devcodex/capability-graph').providerFromTools, providerFromTools);
});

test('MCP, OpenAI and Anthropic tool lists become a provider a graph opens, with the mapping back', async () => {
  const tools = [
    { name: 'get_weather', title: 'Current weather', description: 'Current weather for a city. Uses a forecast service.', inputSchema: { type: 'object', properties: { city: { type: 'string', description: 'City name' } } } },
    { type: 'function', function: { name: 'sendEmail', description: 'Send an email to a person.', parameters: { type: 'object', properties: { to: { type: 'string' } } } } },
    { type: 'function', name: 'list-files', description: 'List files in a folder.', parameters: { type: 'object' }, strict: null },
    { name: 'create_ticket', description: 'Open a support ticket.', input_schema: { type: 'object', properties: { priorityLevel: { type: 'string', enum: ['low', 'high'] } } }, cache_control: { type: 'ephemeral' } },
  ];
  const { definition, toolNames, capabilityIds } = providerFromTools(options(tools));
  assert.deepEqual([...toolNames], [['get_weather', 'get_weather'], ['send_email', 'sendEmail'], ['list_files', 'list-files'], ['create_ticket', 'create_ticket']]);
  assert.deepEqual([...capabilityIds], [...toolNames].map(([id, name]) => [name, id]));
  assert.equal(definition.capabilities[0].name, 'Current weather');
  assert.deepEqual(definition.capabilities[3].examples, ['priority level (one of: low, high)']);
  const graph = await CapabilityGraph.open({ providers: [{ definition }], executor: lexicalExecutor() });
  try {
    const r = await graph.match({ intent: 'current weather in Paris' });
    assert.equal(r.status, 'matched');
    assert.equal(toolNames.get(r.matches[0].id.capabilityId), 'get_weather');
  } finally {
    await graph.close();
  }
});

test('an AI SDK tool set: schemas from jsonSchema() and Standard JSON Schema, functions ignored', () => {
  const schemaSymbol = Symbol.for('vercel.ai.schema');
  // What the AI SDK's jsonSchema() returns: marked by symbols, with a validate function.
  const aiSchema = (jsonSchema) => ({ [schemaSymbol]: true, _type: undefined, jsonSchema, validate: (value) => ({ success: true, value }) });
  class StandardSchema {
    get ['~standard']() {
      return { version: 1, vendor: 'test', validate: () => ({}), jsonSchema: { input: () => ({ type: 'object', properties: { path: { type: 'string', description: 'Where the file is' } } }) } };
    }
  }
  const tools = {
    getWeather: { description: 'Weather for a city.', inputSchema: aiSchema({ type: 'object', properties: { city: { type: 'string', description: 'City' } } }), execute: async () => ({}) },
    readFile: { type: 'function', description: 'Read a file.', inputSchema: new StandardSchema(), execute: async () => '' },
    legacy: { description: 'An AI SDK 4 tool.', parameters: aiSchema({ type: 'object', properties: { q: { type: 'string' } } }), execute: () => 1 },
  };
  const { definition, toolNames } = providerFromTools(options(tools));
  assert.deepEqual([...toolNames.values()], ['getWeather', 'readFile', 'legacy']);
  assert.deepEqual(definition.capabilities.map((c) => c.examples), [['city: City'], ['path: Where the file is'], ['q']]);
  // A schema that is neither JSON nor convertible is refused where it stands.
  class Opaque {}
  throwsWith(() => providerFromTools(options({ x: { inputSchema: new Opaque() } })), 'CG_INPUT_INVALID', 'query', 'fix_input', { field: 'tools.x.inputSchema', expected: 'JSON Schema object' });
});

test('a tool keeps its capability ID whatever the order of the list; colliding names take a hash', () => {
  const names = ['get_weather', 'getWeather', 'get-weather', 'list_files', 'Send Email', '3d_render', '天气'];
  const forward = providerFromTools(options(names.map((name) => ({ name })))).capabilityIds;
  const backward = providerFromTools(options([...names].reverse().map((name) => ({ name })))).capabilityIds;
  for (const name of names) assert.equal(forward.get(name), backward.get(name), name);
  assert.equal(new Set(forward.values()).size, names.length);
  assert.match(forward.get('getWeather'), /^get_weather_[0-9a-f]{8}$/);
  assert.equal(forward.get('list_files'), 'list_files');
  assert.equal(forward.get('Send Email'), 'send_email');
  assert.equal(forward.get('3d_render'), 'tool_3d_render');
  assert.equal(forward.get('天气'), 'tool');
});

test('bad options and tools are CG_INPUT_INVALID or CG_INPUT_TOO_LARGE naming where', () => {
  const bad = (value, field, code = 'CG_INPUT_INVALID', action = 'fix_input') =>
    throwsWith(() => providerFromTools(value), code, 'query', action, { field });
  bad(undefined, '$');
  bad({ name: 'x', tools: [] }, 'providerId');
  bad(options([], { other: 1 }), 'other');
  bad(options('tools'), 'tools');
  bad(options([{ description: 'no name' }]), 'tools[0].name');
  bad(options([{ name: 'a' }, { name: 'a' }]), 'tools[1].name');
  bad(options([{ name: 'a', description: 1 }]), 'tools[0].description');
  bad(options([{ name: 'a', get description() { return 'x'; } }]), 'tools[0].description');
  bad(options([{ type: 'function', function: { parameters: {} } }]), 'tools[0].function.name');
  bad(options([{ type: 'web_search_20250305', name: 'web_search' }]), 'tools[0].type');
  bad(options({ 'my-tool': { inputSchema: { properties: [] } } }), 'tools["my-tool"].inputSchema.properties');
  bad(options([{ name: 'x'.repeat(257) }]), 'tools[0].name', 'CG_INPUT_TOO_LARGE', 'narrow_scope');
  bad(options(Array.from({ length: 10_001 }, (_, i) => ({ name: `t${i}` }))), 'tools', 'CG_INPUT_TOO_LARGE', 'narrow_scope');
  // The walk of the options is bounded before any other rule.
  bad(options(new Array(2_000_001).fill(0)), '$', 'CG_INPUT_TOO_LARGE', 'narrow_scope');
});

test('recipe: 150 tools from an MCP server, matched to the 5 a model sees', async () => {
  const server = createToolServer();
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'host', version: '1.0.0' });
  await client.connect(clientSide);
  try {
    const { tools } = await client.listTools();
    assert.equal(tools.length, 150);
    assert.equal(TOOLS.length, 150);
    const { definition, toolNames } = providerFromTools({ providerId: 'host.tools', name: 'Host tools', tools });
    const graph = await CapabilityGraph.open({ providers: [{ definition }], executor: lexicalExecutor() });
    try {
      const { status, matches } = await graph.match({ intent: 'refund the last payment of this customer', limit: 5 });
      assert.equal(status, 'matched');
      const activeTools = matches.map((m) => toolNames.get(m.id.capabilityId));
      assert.ok(activeTools.length >= 1 && activeTools.length <= 5);
      assert.ok(activeTools.includes('payments_refund_charge'), activeTools.join(', '));
      const listed = new Set(tools.map((t) => t.name));
      assert.ok(activeTools.every((name) => listed.has(name)));
      // Anthropic's tool search: every tool is sent, the matched ones loaded up front.
      const anthropicTools = tools.map((t) => ({
        name: t.name,
        description: t.description,
        input_schema: t.inputSchema,
        ...(activeTools.includes(t.name) ? {} : { defer_loading: true }),
      }));
      assert.equal(anthropicTools.filter((t) => !t.defer_loading).length, activeTools.length);
    } finally {
      await graph.close();
    }
  } finally {
    await client.close();
    await server.close();
  }
});

test('the tool-search evaluation: at least 60 requests, each naming one of the 150 tools; an executor this build lacks is said', async () => {
  const { evaluateToolSearch, loadIntents } = await import('../bench/eval-tool-search.mjs');
  const intents = await loadIntents();
  const names = new Set(TOOLS.map((t) => t.name));
  assert.ok(intents.length >= 60, `${intents.length} requests`);
  for (const { intent, tool } of intents) assert.ok(names.has(tool), `${intent} → ${tool}`);
  const { rows, summary } = await evaluateToolSearch(lexicalExecutor());
  assert.equal(summary.tools, 150);
  assert.equal(rows.length, intents.length);
  assert.ok(rows.every((r) => r.got.length <= 5 && r.got.every((name) => names.has(name))));
  assert.equal(summary.counts.top3, rows.filter((r) => r.rank >= 0 && r.rank < 3).length);
  // Rank mode, as tool search asks: the best five every time a request shares anything with the
  // tools, so fewer requests are left without tools and no right tool is lost.
  const ranked = await evaluateToolSearch(lexicalExecutor(), { mode: 'rank' });
  assert.ok(ranked.summary.noMatch < summary.noMatch, `${ranked.summary.noMatch} no_match answers in rank mode`);
  assert.ok(ranked.summary.counts.top5 > summary.counts.top5);
  ranked.rows.forEach((r, i) => {
    if (r.status === 'no_match') assert.equal(rows[i].status, 'no_match', r.intent);
    else assert.ok(r.got.length >= rows[i].got.length, r.intent);
  });

  const { spawnSync } = await import('node:child_process');
  const script = new URL('../bench/eval-tool-search.mjs', import.meta.url).pathname;
  const run = spawnSync(process.execPath, [script, '--executor=semantic'], { encoding: 'utf8', timeout: 60_000 });
  const hasSemantic = typeof (await import('@devcodex/capability-graph')).semanticExecutor === 'function';
  if (hasSemantic && modelBuilt) {
    assert.equal(run.status, 0, run.stderr);
  } else {
    assert.equal(run.status, 1);
    assert.match(run.stderr, /the semantic executor is not available/);
    // Without its model package, the package to install is named.
    if (hasSemantic) assert.match(run.stderr, /@devcodex\/capability-graph-minilm/);
    assert.equal(run.stdout, '');
  }
});

test('an AI SDK tool set with Zod 4 schemas (Standard JSON Schema), as tool({ inputSchema: z.object(...) }) holds them', async (t) => {
  // Zod comes with the MCP SDK (a devDependency); not a dependency of this package.
  const zod = await import('zod').catch(() => undefined);
  if (zod === undefined || typeof zod.z.object({})['~standard']?.jsonSchema?.input !== 'function') return t.skip('no Zod with Standard JSON Schema installed');
  const { z } = zod;
  const tools = {
    getWeather: { description: 'Current weather for a city.', inputSchema: z.object({ city: z.string().describe('City name'), unit: z.enum(['celsius', 'fahrenheit']) }), execute: async () => ({}) },
  };
  const { definition } = providerFromTools(options(tools));
  assert.deepEqual(definition.capabilities[0].examples, ['city: City name', 'unit (one of: celsius, fahrenheit)']);
});

test('the example tool server serves its 150 tools over stdio too', async () => {
  const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
  const script = new URL('../examples/tool-search/server.mjs', import.meta.url).pathname;
  const client = new Client({ name: 'host', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [script], stderr: 'pipe' }));
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), TOOLS.map((t) => t.name));
    const { capabilityIds } = providerFromTools(options(tools));
    assert.equal(capabilityIds.get('drive-upload-file'), 'drive_upload_file');
    assert.equal(capabilityIds.get('calendarCreateEvent'), 'calendar_create_event');
  } finally {
    await client.close();
  }
});

test('a converted schema past the walk bound is CG_INPUT_TOO_LARGE at its tool', () => {
  const huge = { [Symbol.for('vercel.ai.schema')]: true, jsonSchema: { type: 'object', examples: new Array(2_000_001).fill(0) } };
  throwsWith(() => providerFromTools(options({ x: { inputSchema: huge } })), 'CG_INPUT_TOO_LARGE', 'query', 'narrow_scope', { field: 'tools.x.inputSchema', limit: 2_000_000 });
});
