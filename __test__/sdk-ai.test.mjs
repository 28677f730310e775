// The Tool Adapter as Vercel AI SDK tools, end to end through generateText and the SDK's own
// mock model: a model that calls a tool gets the adapter's JSON, an error as { ok: false, error }.
import test from 'node:test';
import assert from 'node:assert/strict';
import { CapabilityGraph, lexicalExecutor, providerFromTools } from '@devcodex/capability-graph';
import { aiSdkTools, activeToolsFromMatch } from '@devcodex/capability-graph/ai-sdk';
import { FAILS, SUCCEEDS, assertFailed, assertSucceeded, loadSdk, modelArgs, seedAdapter } from './sdk-fixtures.mjs';
import { throwsWith } from './helpers.mjs';

const { sdk: ai, skip } = await loadSdk('ai');
const mock = skip ? undefined : await import('ai/test');

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: 1, reasoning: undefined } };
const text = (t) => ({ content: [{ type: 'text', text: t }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] });

/** A mock model that first calls `calls`, then answers in text; `seen` records each request. */
function callingModel(calls) {
  const seen = [];
  // The mock of the SDK's model spec: V4 in ai 7, V3 in ai 6 (what npm picks on Node 20).
  const model = new (mock.MockLanguageModelV4 ?? mock.MockLanguageModelV3)({
    doGenerate: async (options) => {
      seen.push(options);
      if (seen.length > 1) return text('done');
      const content = calls.map((c, i) => ({ type: 'tool-call', toolCallId: `call-${i}`, toolName: c.name, input: JSON.stringify(c.args) }));
      return { content, finishReason: { unified: 'tool-calls', raw: undefined }, usage, warnings: [] };
    },
  });
  return { model, seen };
}

test('AI SDK: generateText runs the tools; a result is the adapter JSON, an error { ok: false, error }', { skip }, async () => {
  for (const dialect of ['json-schema', 'strict']) {
    const { graph, adapter } = await seedAdapter(dialect);
    try {
      const tools = aiSdkTools(adapter);
      assert.deepEqual(Object.keys(tools), adapter.tools.map((t) => t.name));
      const calls = [SUCCEEDS, FAILS].map((c) => ({ name: c.name, args: modelArgs(adapter, c.name, c.args) }));
      const { model, seen } = callingModel(calls);
      const result = await ai.generateText({ model, tools, stopWhen: ai.stepCountIs(2), prompt: 'What does routing do?' });
      assert.equal(result.text, 'done');
      // The model was offered every tool with the adapter's schema, strict in the strict dialect.
      const offered = seen[0].tools;
      assert.deepEqual(offered.map((t) => t.name), adapter.tools.map((t) => t.name));
      for (const [i, t] of offered.entries()) {
        assert.equal(t.type, 'function');
        assert.equal(t.description, adapter.tools[i].description);
        assert.deepEqual(t.inputSchema, adapter.tools[i].inputSchema);
        assert.equal(t.strict, dialect === 'strict' ? true : undefined);
      }
      const [ok, failed] = result.steps[0].toolResults.map((r) => r.output);
      assertSucceeded(ok);
      assertFailed(failed);
      // The second request carried both outcomes back to the model as JSON.
      const parts = seen[1].prompt.filter((m) => m.role === 'tool').flatMap((m) => m.content);
      assert.deepEqual(parts.map((p) => p.output), [{ type: 'json', value: ok }, { type: 'json', value: failed }]);
    } finally {
      await graph.close();
    }
  }
});

test('AI SDK: arguments the verbs refuse come back as CG_INPUT_INVALID, not as a thrown tool error', { skip }, async () => {
  const { graph, adapter } = await seedAdapter('strict');
  try {
    const { model } = callingModel([{ name: 'get_neighbors', args: { id: 'Not Valid' } }]);
    const result = await ai.generateText({ model, tools: aiSdkTools(adapter), stopWhen: ai.stepCountIs(2), prompt: 'x' });
    const [outcome] = result.steps[0].toolResults.map((r) => r.output);
    assert.equal(outcome.ok, false);
    assert.equal(outcome.error.code, 'CG_INPUT_INVALID');
    assert.equal(outcome.error.nextAction, 'fix_input');
    assert.equal(result.steps[0].content.filter((p) => p.type === 'tool-error').length, 0);
  } finally {
    await graph.close();
  }
});

test('AI SDK: activeTools from a match answer names the tools its capabilities stand for', { skip }, async () => {
  const schema = (key) => ai.jsonSchema({ type: 'object', properties: { [key]: { type: 'string' } }, required: [key], additionalProperties: false });
  const tools = {
    get_weather: ai.tool({ description: 'Current weather for a city.', inputSchema: schema('city'), execute: async () => 'sunny' }),
    get_time: ai.tool({ description: 'The current time in a time zone.', inputSchema: schema('zone'), execute: async () => 'noon' }),
  };
  // The tool-search recipe: the host's tools as a provider, match, the names back.
  const { definition, toolNames } = providerFromTools({ providerId: 'host.tools', name: 'Host tools', tools });
  const graph = await CapabilityGraph.open({ providers: [{ definition }], executor: lexicalExecutor() });
  try {
    const answer = await graph.match({ intent: 'the current weather in a city' });
    assert.equal(answer.status, 'matched');
    const activeTools = activeToolsFromMatch(answer, toolNames, tools);
    assert.deepEqual(activeTools, ['get_weather']);
    // By qualified ID in an object, or a function, alike; a name the tool set lacks is left out.
    assert.deepEqual(activeToolsFromMatch(answer, { 'host.tools::get_weather': 'get_weather' }), ['get_weather']);
    assert.deepEqual(activeToolsFromMatch(answer, (id) => (id === 'host.tools::get_weather' ? 'get_weather' : undefined)), ['get_weather']);
    assert.deepEqual(activeToolsFromMatch(answer, new Map([['get_weather', 'weather_v1']]), tools), []);
    assert.deepEqual(activeToolsFromMatch(await graph.match({ intent: 'zzzz qqqq' }), toolNames), []);

    const { model, seen } = callingModel([{ name: 'get_weather', args: { city: 'Paris' } }]);
    const result = await ai.generateText({ model, tools, activeTools, stopWhen: ai.stepCountIs(2), prompt: 'weather in Paris?' });
    assert.deepEqual(seen[0].tools.map((t) => t.name), ['get_weather']);
    assert.equal(result.steps[0].toolResults[0].output, 'sunny');

    throwsWith(() => activeToolsFromMatch({ status: 'matched' }, toolNames), 'CG_INPUT_INVALID', 'query', 'fix_input', { field: 'answer' });
    throwsWith(() => activeToolsFromMatch(answer, 'get_weather'), 'CG_INPUT_INVALID', 'query', 'fix_input', { field: 'toolNames' });
    throwsWith(() => activeToolsFromMatch(answer, toolNames, ['get_weather']), 'CG_INPUT_INVALID', 'query', 'fix_input', { field: 'tools' });
  } finally {
    await graph.close();
  }
});

test('AI SDK: a tool set of tool() with jsonSchema() and with Zod becomes a provider; the matched names go to generateText', { skip }, async () => {
  const { z } = await import('zod');
  const tools = {
    getWeather: ai.tool({
      description: 'Current weather conditions and temperature for a city.',
      inputSchema: ai.jsonSchema({ type: 'object', properties: { city: { type: 'string', description: 'The city name' } }, required: ['city'] }),
      execute: async () => 'sunny',
    }),
    convertCurrency: ai.tool({
      description: 'Convert an amount of money from one currency to another at the current exchange rate.',
      inputSchema: z.object({ amount: z.number().describe('How much money'), from: z.string().describe('Currency code to convert from'), to: z.string() }),
      execute: async () => 42,
    }),
    sendEmail: ai.tool({ description: 'Send an email message to a recipient.', inputSchema: z.object({ to: z.string(), body: z.string() }), execute: async () => 'sent' }),
  };
  const { definition, toolNames, capabilityIds } = providerFromTools({ providerId: 'host.tools', name: 'Host tools', tools });
  assert.deepEqual([...capabilityIds], [['getWeather', 'get_weather'], ['convertCurrency', 'convert_currency'], ['sendEmail', 'send_email']]);
  // The parameters' names and descriptions are searchable, from either kind of schema.
  assert.deepEqual(definition.capabilities.map((c) => c.examples), [['city: The city name'], ['amount: How much money', 'from: Currency code to convert from', 'to'], ['to', 'body']]);
  const graph = await CapabilityGraph.open({ providers: [{ definition }], executor: lexicalExecutor() });
  try {
    const answer = await graph.match({ intent: 'convert 20 euros to dollars at the exchange rate', limit: 1 });
    assert.equal(answer.status, 'matched');
    const activeTools = activeToolsFromMatch(answer, toolNames, tools);
    assert.deepEqual(activeTools, ['convertCurrency']);
    const { model, seen } = callingModel([{ name: 'convertCurrency', args: { amount: 20, from: 'EUR', to: 'USD' } }]);
    const result = await ai.generateText({ model, tools, activeTools, stopWhen: ai.stepCountIs(2), prompt: 'convert 20 EUR to USD' });
    assert.deepEqual(seen[0].tools.map((t) => t.name), ['convertCurrency']);
    assert.equal(result.steps[0].toolResults[0].output, 42);
  } finally {
    await graph.close();
  }
  // A description that is a function of the call's context has no call to describe yet: refused
  // where it stands, never called.
  let called = false;
  const dynamic = { getWeather: ai.tool({ description: () => ((called = true), 'Weather'), inputSchema: ai.jsonSchema({ type: 'object' }), execute: async () => 1 }) };
  throwsWith(() => providerFromTools({ providerId: 'host.tools', name: 'Host tools', tools: dynamic }), 'CG_INPUT_INVALID', 'query', 'fix_input', { field: 'tools.getWeather.description', expected: 'string' });
  assert.equal(called, false);
});
