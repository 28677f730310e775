'use strict';
// The Tool Adapter as OpenAI function tools, for Chat Completions and for Responses, and a
// dispatcher that answers the model's calls of them. Plain JSON: no OpenAI package is loaded,
// so they serve the official client, another one or a raw HTTP call alike.

const { checkAdapter, schemaOf, callWithText, dispatchSignal, plainItems, read } = require('../../tools/host-tools.cjs');

/** Strict function calling only where the adapter's dialect meets it. */
const strictOf = (adapter) => adapter.dialect === 'strict';

/** Chat Completions `tools`: `{ type: 'function', function: { name, description, parameters, strict } }`. */
function openaiChatTools(adapter) {
  checkAdapter(adapter);
  const strict = strictOf(adapter);
  return adapter.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: schemaOf(t), strict } }));
}

/** Responses `tools`: `{ type: 'function', name, description, parameters, strict }`. */
function openaiResponsesTools(adapter) {
  checkAdapter(adapter);
  const strict = strictOf(adapter);
  return adapter.tools.map((t) => ({ type: 'function', name: t.name, description: t.description, parameters: schemaOf(t), strict }));
}

/**
 * Runs the calls of this adapter's tools among `calls` — a Chat Completions message's
 * `tool_calls` (undefined: none), or a Responses `output` (its other items are passed over) — and resolves, in
 * their order, a `{ role: 'tool', tool_call_id, content }` message per Chat call and a
 * `{ type: 'function_call_output', call_id, output }` item per Responses call, the content the
 * adapter's outcome as JSON. Calls of tools the adapter does not have are left to the host.
 */
async function handleToolCalls(adapter, calls, options) {
  checkAdapter(adapter);
  const signal = dispatchSignal(options);
  const answers = (calls === undefined ? [] : plainItems(calls, 'calls')).map((call, i) => {
    const at = `calls[${i}]`;
    const type = read(call, 'type', at);
    if (type === 'function_call' && adapter.has(read(call, 'name', at))) {
      const [id, text] = [read(call, 'call_id', at), read(call, 'arguments', at, true)];
      return callWithText(adapter, call.name, text, signal).then((outcome) => ({ type: 'function_call_output', call_id: id, output: JSON.stringify(outcome) }));
    }
    const fn = type === 'function' ? read(call, 'function', at) : undefined;
    if (fn !== null && typeof fn === 'object' && !Array.isArray(fn) && adapter.has(read(fn, 'name', `${at}.function`))) {
      const [id, text] = [read(call, 'id', at), read(fn, 'arguments', `${at}.function`, true)];
      return callWithText(adapter, fn.name, text, signal).then((outcome) => ({ role: 'tool', tool_call_id: id, content: JSON.stringify(outcome) }));
    }
    return undefined;
  });
  return (await Promise.all(answers)).filter((answer) => answer !== undefined);
}

module.exports = { openaiChatTools, openaiResponsesTools, handleToolCalls };
