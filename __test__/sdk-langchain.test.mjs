// The Tool Adapter as LangChain.js structured tools, end to end with LangChain's own fake chat
// model: bound tools, the model's tool calls run as ToolMessages with the adapter's JSON, an error
// as { ok: false, error }.
import test from 'node:test';
import assert from 'node:assert/strict';
import { langchainTools } from '@devcodex/capability-graph/langchain';
import { FAILS, SUCCEEDS, assertFailed, assertSucceeded, loadSdk, modelArgs, seedAdapter } from './sdk-fixtures.mjs';

const { sdk: testing, skip } = await loadSdk('@langchain/core/utils/testing');
const messages = skip ? undefined : await import('@langchain/core/messages');
const calling = skip ? undefined : await import('@langchain/core/utils/function_calling');

test('LangChain.js: a bound model calls the structured tools; a result is the adapter JSON, an error { ok: false, error }', { skip }, async () => {
  for (const dialect of ['json-schema', 'strict']) {
    const { graph, adapter } = await seedAdapter(dialect);
    try {
      const tools = langchainTools(adapter);
      assert.deepEqual(tools.map((t) => t.name), adapter.tools.map((t) => t.name));
      // As a model provider binds them: the adapter's schema, as it is.
      for (const [i, t] of tools.entries()) {
        const spec = calling.convertToOpenAITool(t);
        assert.equal(spec.function.description, adapter.tools[i].description);
        assert.deepEqual(spec.function.parameters, adapter.tools[i].inputSchema);
      }
      const toolCalls = [SUCCEEDS, FAILS].map((c, i) => ({ id: `call_${i}`, name: c.name, args: modelArgs(adapter, c.name, c.args), type: 'tool_call' }));
      const model = new testing.FakeStreamingChatModel({ chunks: [new messages.AIMessageChunk({ content: '', tool_calls: toolCalls })] }).bindTools(tools);
      assert.deepEqual(model.config.tools.map((t) => t.function.parameters), adapter.tools.map((t) => t.inputSchema));
      const reply = await model.invoke('What does routing do?');
      assert.equal(reply.tool_calls.length, 2);
      const byName = new Map(tools.map((t) => [t.name, t]));
      const answers = await Promise.all(reply.tool_calls.map((call) => byName.get(call.name).invoke(call)));
      assert.ok(answers.every((m) => messages.ToolMessage.isInstance(m)));
      assert.deepEqual(answers.map((m) => m.tool_call_id), ['call_0', 'call_1']);
      const [ok, failed] = answers.map((m) => JSON.parse(m.content));
      assertSucceeded(ok);
      assertFailed(failed);
    } finally {
      await graph.close();
    }
  }
});

test("LangChain.js: in the strict dialect a malformed ID reaches the verbs and comes back as CG_INPUT_INVALID", { skip }, async () => {
  const { graph, adapter } = await seedAdapter('strict');
  try {
    const neighbors = langchainTools(adapter).find((t) => t.name === 'get_neighbors');
    const outcome = JSON.parse(await neighbors.invoke(modelArgs(adapter, 'get_neighbors', { id: 'Not Valid' })));
    assert.equal(outcome.ok, false);
    assert.deepEqual([outcome.error.code, outcome.error.nextAction], ['CG_INPUT_INVALID', 'fix_input']);
  } finally {
    await graph.close();
  }
});
