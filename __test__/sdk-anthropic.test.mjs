// The Tool Adapter as Anthropic Messages tools, end to end through the official client over a
// fake fetch: the model's tool_use blocks → handleToolUse → tool_result blocks with the adapter's
// JSON, an error as is_error with { ok: false, error }.
import test from 'node:test';
import assert from 'node:assert/strict';
import { anthropicTools, handleToolUse } from '@devcodex/capability-graph/anthropic';
import { FAILS, SUCCEEDS, assertFailed, assertSucceeded, fakeFetch, getter, loadSdk, modelArgs, seedAdapter, trap as hostileProxy } from './sdk-fixtures.mjs';
import { rejectsWith, throwsWith } from './helpers.mjs';

const { sdk: anthropic, skip } = await loadSdk('@anthropic-ai/sdk');

test('Anthropic Messages: tool_use → handleToolUse → tool_result blocks with the adapter JSON', { skip }, async () => {
  for (const dialect of ['json-schema', 'strict']) {
    const { graph, adapter } = await seedAdapter(dialect);
    try {
      const tools = anthropicTools(adapter);
      const uses = [SUCCEEDS, FAILS].map((c, i) => ({ type: 'tool_use', id: `toolu_${i}`, name: c.name, input: modelArgs(adapter, c.name, c.args) }));
      const message = (content, stop) => ({ id: 'msg', type: 'message', role: 'assistant', model: 'claude-test', content, stop_reason: stop, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } });
      const { fetch, sent } = fakeFetch([
        message([{ type: 'text', text: 'Let me look.' }, ...uses, { type: 'tool_use', id: 'toolu_host', name: 'host_tool', input: {} }], 'tool_use'),
        message([{ type: 'text', text: 'done' }], 'end_turn'),
      ]);
      const client = new anthropic.default({ apiKey: 'test', baseURL: 'http://127.0.0.1:9', fetch, maxRetries: 0 });
      const messages = [{ role: 'user', content: 'What does routing do?' }];
      const first = await client.messages.create({ model: 'claude-test', max_tokens: 256, system: adapter.instructions, messages, tools });
      const results = await handleToolUse(adapter, first.content);
      assert.deepEqual(results.map((r) => [r.type, r.tool_use_id, r.is_error]), [['tool_result', 'toolu_0', undefined], ['tool_result', 'toolu_1', true]]);
      const second = await client.messages.create({ model: 'claude-test', max_tokens: 256, messages: [...messages, { role: 'assistant', content: first.content }, { role: 'user', content: results }], tools });
      assert.equal(second.content[0].text, 'done');

      const offered = sent[0].body.tools;
      assert.deepEqual(offered.map((t) => [t.name, t.strict]), adapter.tools.map((t) => [t.name, dialect === 'strict' ? true : undefined]));
      for (const [i, t] of offered.entries()) assert.deepEqual(t.input_schema, adapter.tools[i].inputSchema);
      const back = sent[1].body.messages.at(-1).content.map((b) => JSON.parse(b.content));
      assertSucceeded(back[0]);
      assertFailed(back[1]);
    } finally {
      await graph.close();
    }
  }
});

test('Anthropic dispatcher: bad host input throws CG_INPUT_INVALID', async () => {
  const { graph, adapter } = await seedAdapter('strict');
  try {
    await rejectsWith(handleToolUse(adapter, { type: 'tool_use' }), 'CG_INPUT_INVALID', 'query', 'fix_input', { field: 'content' });
    await rejectsWith(handleToolUse(adapter, [], { signal: 1 }), 'CG_INPUT_INVALID', 'query', 'fix_input', { field: 'signal' });
    await rejectsWith(handleToolUse(adapter, [], { timeout: 1 }), 'CG_INPUT_INVALID', 'query', 'fix_input', { field: 'timeout' });
    throwsWith(() => anthropicTools(undefined), 'CG_INPUT_INVALID', 'query', 'fix_input', { field: 'adapter' });
  } finally {
    await graph.close();
  }
});

test('Anthropic dispatcher: blocks are read by the pure-JSON walk: a throwing getter or a Proxy is CG_INPUT_INVALID naming where, never the host\'s own error', async () => {
  const { graph, adapter } = await seedAdapter('json-schema');
  try {
    const trap = hostileProxy();
    const cases = [
      [[getter({ type: 'tool_use', id: 'u', name: 'list_catalog' }, 'input')], 'content[0].input'],
      [[{ type: 'text', text: 'hi' }, getter({ id: 'u', name: 'list_catalog', input: {} }, 'type')], 'content[1].type'],
      [[trap], 'content[0]'],
    ];
    for (const [content, field] of cases) {
      const error = await rejectsWith(handleToolUse(adapter, content), 'CG_INPUT_INVALID', 'query', 'fix_input', { field });
      assert.doesNotMatch(JSON.stringify(error.toJSON()), /secret|boom/);
    }
    // A getter inside the input is the call's own argument: the model's outcome names it.
    const [result] = await handleToolUse(adapter, [{ type: 'tool_use', id: 'u', name: 'list_catalog', input: getter({}, 'limit') }]);
    const outcome = JSON.parse(result.content);
    assert.deepEqual([result.is_error, outcome.error.code, outcome.error.details.field], [true, 'CG_INPUT_INVALID', 'limit']);
  } finally {
    await graph.close();
  }
});
