// The Tool Adapter as OpenAI Agents SDK tools, end to end through run() with the SDK's own
// Responses model over a fake fetch: strict tools, the adapter's JSON back, errors as
// { ok: false, error }; and the SDK's own converter keeps every strict schema strict.
import test from 'node:test';
import assert from 'node:assert/strict';
import { openaiAgentsTools } from '@devcodex/capability-graph/openai-agents';
import { FAILS, SUCCEEDS, assertFailed, assertSucceeded, fakeFetch, loadSdk, modelArgs, seedAdapter } from './sdk-fixtures.mjs';
import { throwsWith } from './helpers.mjs';

const { sdk: agents, skip: agentsSkip } = await loadSdk('@openai/agents');
const { sdk: openai, skip: openaiSkip } = await loadSdk('openai');
const skip = agentsSkip || openaiSkip;
if (!skip) agents.setTracingDisabled(true);

const usage = { input_tokens: 1, output_tokens: 1, total_tokens: 2, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } };
const response = (id, output) => ({ id, object: 'response', created_at: 0, status: 'completed', model: 'gpt-test', output, usage });

test('OpenAI Agents SDK: run() calls strict tools; a result is the adapter JSON, an error { ok: false, error }', { skip }, async () => {
  const { graph, adapter } = await seedAdapter('strict');
  try {
    const tools = openaiAgentsTools(adapter);
    assert.deepEqual(tools.map((t) => [t.type, t.name, t.strict]), adapter.tools.map((t) => ['function', t.name, true]));
    const calls = [SUCCEEDS, FAILS].map((c, i) => ({ type: 'function_call', id: `fc_${i}`, call_id: `call_${i}`, name: c.name, arguments: JSON.stringify(modelArgs(adapter, c.name, c.args)), status: 'completed' }));
    const { fetch, sent } = fakeFetch([
      response('resp_1', calls),
      response('resp_2', [{ type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'done', annotations: [] }] }]),
    ]);
    const client = new openai.default({ apiKey: 'test', baseURL: 'http://127.0.0.1:9/v1', fetch, maxRetries: 0 });
    const agent = new agents.Agent({ name: 'walker', instructions: adapter.instructions, tools, model: new agents.OpenAIResponsesModel(client, 'gpt-test') });
    const result = await agents.run(agent, 'What does routing do?');
    assert.equal(result.finalOutput, 'done');
    // The request offered every tool as a strict function with the adapter's schema.
    const offered = sent[0].body.tools;
    assert.deepEqual(offered.map((t) => [t.type, t.name, t.strict]), adapter.tools.map((t) => ['function', t.name, true]));
    for (const [i, t] of offered.entries()) assert.deepEqual(t.parameters, adapter.tools[i].inputSchema);
    const outputs = sent[1].body.input.filter((item) => item.type === 'function_call_output');
    assert.deepEqual(outputs.map((o) => o.call_id), ['call_0', 'call_1']);
    const [ok, failed] = outputs.map((o) => JSON.parse(typeof o.output === 'string' ? o.output : o.output.text));
    assertSucceeded(ok);
    assertFailed(failed);
  } finally {
    await graph.close();
  }
});

test("OpenAI Agents SDK: its MCP converter keeps every tool strict (no non-strict fallback)", { skip: agentsSkip }, async () => {
  for (const options of [{ documentBodies: true, entryPoints: ['seed.http::route'] }, {}]) {
    const { graph, adapter } = await seedAdapter('strict', options);
    try {
      for (const t of adapter.tools) {
        const converted = agents.mcpToFunctionTool({ name: t.name, description: t.description, inputSchema: t.inputSchema }, { name: 'seed' }, true);
        assert.equal(converted.strict, true, t.name);
        assert.deepEqual(converted.parameters, t.inputSchema, t.name);
      }
    } finally {
      await graph.close();
    }
  }
});

test('OpenAI Agents SDK: the tools need the strict dialect and an adapter', async () => {
  const { graph, adapter } = await seedAdapter('json-schema');
  try {
    throwsWith(() => openaiAgentsTools(adapter), 'CG_INPUT_INVALID', 'query', 'fix_input', { field: 'dialect' });
    throwsWith(() => openaiAgentsTools({ tools: [], call() {} }), 'CG_INPUT_INVALID', 'query', 'fix_input', { field: 'adapter' });
  } finally {
    await graph.close();
  }
});
