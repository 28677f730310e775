// The Tool Adapter as OpenAI function tools, end to end through the official client over a fake
// fetch, for Chat Completions and Responses: the model calls a tool, handleToolCalls answers with
// the adapter's JSON, an error as { ok: false, error }.
import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { handleToolCalls, openaiChatTools, openaiResponsesTools } from '@devcodex/capability-graph/openai';
import { FAILS, SUCCEEDS, assertFailed, assertSucceeded, boom, fakeFetch, getter, loadSdk, modelArgs, seedAdapter, trap as hostileProxy } from './sdk-fixtures.mjs';
import { throwsWith, rejectsWith } from './helpers.mjs';

const { sdk: openai, skip } = await loadSdk('openai');
const client = (fetch) => new openai.default({ apiKey: 'test', baseURL: 'http://127.0.0.1:9/v1', fetch, maxRetries: 0 });
const DIALECTS = ['json-schema', 'strict'];

test('OpenAI Chat Completions: tool_calls → handleToolCalls → tool messages with the adapter JSON', { skip }, async () => {
  for (const dialect of DIALECTS) {
    const { graph, adapter } = await seedAdapter(dialect);
    try {
      const tools = openaiChatTools(adapter);
      const toolCalls = [SUCCEEDS, FAILS].map((c, i) => ({ id: `call_${i}`, type: 'function', function: { name: c.name, arguments: JSON.stringify(modelArgs(adapter, c.name, c.args)) } }));
      // A call of the host's own tool is the host's to answer.
      toolCalls.push({ id: 'call_host', type: 'function', function: { name: 'host_tool', arguments: '{}' } });
      const completion = (message, finish) => ({ id: 'c', object: 'chat.completion', created: 0, model: 'gpt-test', choices: [{ index: 0, message, finish_reason: finish, logprobs: null }] });
      const { fetch, sent } = fakeFetch([
        completion({ role: 'assistant', content: null, tool_calls: toolCalls, refusal: null }, 'tool_calls'),
        completion({ role: 'assistant', content: 'done', refusal: null }, 'stop'),
      ]);
      const api = client(fetch);
      const messages = [{ role: 'user', content: 'What does routing do?' }];
      const first = await api.chat.completions.create({ model: 'gpt-test', messages, tools });
      const message = first.choices[0].message;
      const answers = await handleToolCalls(adapter, message.tool_calls);
      assert.deepEqual(answers.map((a) => [a.role, a.tool_call_id]), [['tool', 'call_0'], ['tool', 'call_1']]);
      const second = await api.chat.completions.create({ model: 'gpt-test', messages: [...messages, message, ...answers], tools });
      assert.equal(second.choices[0].message.content, 'done');

      const offered = sent[0].body.tools;
      assert.deepEqual(offered.map((t) => [t.type, t.function.name, t.function.strict]), adapter.tools.map((t) => ['function', t.name, dialect === 'strict']));
      for (const [i, t] of offered.entries()) assert.deepEqual(t.function.parameters, adapter.tools[i].inputSchema);
      const back = sent[1].body.messages.filter((m) => m.role === 'tool').map((m) => JSON.parse(m.content));
      assertSucceeded(back[0]);
      assertFailed(back[1]);
    } finally {
      await graph.close();
    }
  }
});

test('OpenAI Responses: function_call items → handleToolCalls → function_call_output items with the adapter JSON', { skip }, async () => {
  for (const dialect of DIALECTS) {
    const { graph, adapter } = await seedAdapter(dialect);
    try {
      const tools = openaiResponsesTools(adapter);
      const usage = { input_tokens: 1, output_tokens: 1, total_tokens: 2, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } };
      const response = (id, output) => ({ id, object: 'response', created_at: 0, status: 'completed', model: 'gpt-test', output, usage });
      const calls = [SUCCEEDS, FAILS].map((c, i) => ({ type: 'function_call', id: `fc_${i}`, call_id: `call_${i}`, name: c.name, arguments: JSON.stringify(modelArgs(adapter, c.name, c.args)), status: 'completed' }));
      const { fetch, sent } = fakeFetch([
        response('resp_1', [{ type: 'reasoning', id: 'rs_1', summary: [] }, ...calls]),
        response('resp_2', [{ type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'done', annotations: [] }] }]),
      ]);
      const api = client(fetch);
      const first = await api.responses.create({ model: 'gpt-test', input: 'What does routing do?', tools });
      const outputs = await handleToolCalls(adapter, first.output);
      assert.deepEqual(outputs.map((o) => [o.type, o.call_id]), [['function_call_output', 'call_0'], ['function_call_output', 'call_1']]);
      const second = await api.responses.create({ model: 'gpt-test', previous_response_id: first.id, input: outputs, tools });
      assert.equal(second.output_text, 'done');

      const offered = sent[0].body.tools;
      assert.deepEqual(offered.map((t) => [t.type, t.name, t.strict]), adapter.tools.map((t) => ['function', t.name, dialect === 'strict']));
      for (const [i, t] of offered.entries()) assert.deepEqual(t.parameters, adapter.tools[i].inputSchema);
      const back = sent[1].body.input.map((o) => JSON.parse(o.output));
      assertSucceeded(back[0]);
      assertFailed(back[1]);
    } finally {
      await graph.close();
    }
  }
});

test('OpenAI dispatcher: arguments that are not JSON are CG_INPUT_INVALID for the model; bad host input throws', async () => {
  const { graph, adapter } = await seedAdapter('strict');
  try {
    const [answer] = await handleToolCalls(adapter, [{ id: 'c', type: 'function', function: { name: 'list_catalog', arguments: '{"limit":' } }]);
    const outcome = JSON.parse(answer.content);
    assert.equal(outcome.ok, false);
    assert.deepEqual([outcome.error.code, outcome.error.phase, outcome.error.nextAction, outcome.error.details], ['CG_INPUT_INVALID', 'query', 'fix_input', { field: 'arguments' }]);
    // Empty arguments are none (the verb's defaults); a call without its arguments text is refused alike.
    const [none, missing] = await handleToolCalls(adapter, [
      { type: 'function_call', call_id: 'a', name: 'list_catalog', arguments: '' },
      { type: 'function_call', call_id: 'b', name: 'list_catalog' },
    ]);
    assert.equal(JSON.parse(none.output).ok, true);
    assert.deepEqual(JSON.parse(missing.output).error.details, { field: 'arguments' });
    assert.deepEqual(await handleToolCalls(adapter, undefined), []);
    await rejectsWith(handleToolCalls(adapter, 'calls'), 'CG_INPUT_INVALID', 'query', 'fix_input', { field: 'calls' });
    await rejectsWith(handleToolCalls(adapter, [], { signal: 'x' }), 'CG_INPUT_INVALID', 'query', 'fix_input', { field: 'signal' });
    await rejectsWith(handleToolCalls({}, []), 'CG_INPUT_INVALID', 'query', 'fix_input', { field: 'adapter' });
    throwsWith(() => openaiChatTools(null), 'CG_INPUT_INVALID', 'query', 'fix_input', { field: 'adapter' });
    // A cancelled dispatch reaches the tool that reads with a signal.
    const matching = await seedAdapter('strict', { tools: ['match'] });
    try {
      const controller = new AbortController();
      controller.abort();
      const [cancelled] = await handleToolCalls(matching.adapter, [{ type: 'function_call', call_id: 'm', name: 'match', arguments: JSON.stringify(modelArgs(matching.adapter, 'match', { intent: 'add an endpoint' })) }], { signal: controller.signal });
      assert.equal(JSON.parse(cancelled.output).error.code, 'CG_MODEL_CANCELLED');
    } finally {
      await matching.graph.close();
    }
  } finally {
    await graph.close();
  }
});

test('OpenAI dispatcher: calls are read by the pure-JSON walk: a throwing getter or a Proxy is CG_INPUT_INVALID naming where, never the host\'s own error', async () => {
  const { graph, adapter } = await seedAdapter('json-schema');
  try {
    const trap = hostileProxy();
    const cases = [
      [[getter({ id: 'c', type: 'function' }, 'function')], 'calls[0].function'],
      [[{ id: 'c', type: 'function', function: getter({ name: 'list_catalog' }, 'arguments') }], 'calls[0].function.arguments'],
      [[{ type: 'message' }, getter({ type: 'function_call', call_id: 'c', arguments: '{}' }, 'name')], 'calls[1].name'],
      [[trap], 'calls[0]'],
      [new Proxy([], { getPrototypeOf: boom, ownKeys: boom, get: boom }), 'calls'],
    ];
    for (const [calls, field] of cases) {
      const error = await rejectsWith(handleToolCalls(adapter, calls), 'CG_INPUT_INVALID', 'query', 'fix_input', { field });
      assert.doesNotMatch(JSON.stringify(error.toJSON()), /secret|boom/);
    }
    await rejectsWith(handleToolCalls(adapter, [], trap), 'CG_INPUT_INVALID', 'query', 'fix_input', { field: 'options' });
    await rejectsWith(handleToolCalls(adapter, [], getter({}, 'signal')), 'CG_INPUT_INVALID', 'query', 'fix_input', { field: 'options' });
  } finally {
    await graph.close();
  }
});

test('OpenAI dispatcher: an arguments text over its bounds is CG_INPUT_TOO_LARGE naming the bound, measured before it is parsed', async () => {
  const { graph, adapter } = await seedAdapter('json-schema');
  const { walkBounds } = createRequire(import.meta.url)('../js/engine-tables.cjs');
  const { maxChars, maxDepth, maxValues } = walkBounds.arguments;
  const texts = {
    argument_depth: '['.repeat(1_000_000),
    argument_values: `{"limit":[${'0,'.repeat(maxValues)}0]}`,
    argument_chars: `{"limit":${' '.repeat(maxChars)}1}`,
  };
  const limits = { argument_depth: maxDepth, argument_values: maxValues, argument_chars: maxChars };
  // Work done: what reached JSON.parse. The texts over a bound never do.
  const parse = JSON.parse;
  const parsed = new Set();
  JSON.parse = function (text, ...rest) {
    parsed.add(text);
    return parse.call(this, text, ...rest);
  };
  try {
    for (const [reason, text] of Object.entries(texts)) {
      const [chat, responses] = await handleToolCalls(adapter, [
        { id: 'c', type: 'function', function: { name: 'list_catalog', arguments: text } },
        { type: 'function_call', call_id: 'r', name: 'list_catalog', arguments: text },
      ]);
      for (const outcome of [JSON.parse(chat.content), JSON.parse(responses.output)]) {
        assert.equal(outcome.ok, false);
        assert.deepEqual([outcome.error.code, outcome.error.phase, outcome.error.nextAction, outcome.error.details], ['CG_INPUT_TOO_LARGE', 'query', 'narrow_scope', { field: 'arguments', limit: limits[reason], reason }]);
      }
      assert.equal(parsed.has(text), false, reason);
    }
    // Within the bounds, the same shapes are parsed and judged by the verb.
    const [ok] = await handleToolCalls(adapter, [{ type: 'function_call', call_id: 'r', name: 'list_catalog', arguments: `${'['.repeat(maxDepth - 1)}${']'.repeat(maxDepth - 1)}` }]);
    assert.equal(JSON.parse(ok.output).error.code, 'CG_INPUT_INVALID');
  } finally {
    JSON.parse = parse;
    await graph.close();
  }
});
