'use strict';
// The Tool Adapter as Vercel AI SDK tools (`ai`, an optional peer loaded on first use): `tool()`
// with `jsonSchema()`, so `generateText({ tools })` and `streamText` run them as they are.

const { inputInvalid } = require('../../errors.cjs');
const { requirePeer } = require('../../engine/peer.cjs');
const { checkAdapter, schemaOf, withSignal } = require('../../tools/host-tools.cjs');

/** `{ [name]: tool }` for every tool of `adapter`; each resolves the adapter's outcome. */
function aiSdkTools(adapter) {
  checkAdapter(adapter);
  const { tool, jsonSchema } = requirePeer('ai');
  const strict = adapter.dialect === 'strict';
  return Object.fromEntries(
    adapter.tools.map((t) => [
      t.name,
      tool({
        title: t.title,
        description: t.description,
        // No validate function: the verbs validate the arguments, once, and answer in the
        // outcome; a schema check here would turn their error into a thrown tool error.
        inputSchema: jsonSchema(schemaOf(t)),
        ...(strict ? { strict: true } : {}),
        execute: (input, options) => adapter.call(t.name, input, withSignal(options?.abortSignal)),
      }),
    ]),
  );
}

/**
 * The tool names a `match` answer stands for, in its order, each once, then the tools of
 * `options.always` not named yet (the pinned tools a model always sees; alone for an answer
 * without matches). `toolNames` maps a capability (qualified ID, or its local capability ID) to
 * the name of the tool it describes, as a plain object, a Map (providerFromTools's `toolNames`)
 * or a function. A match without a tool name is left out, and so, when `tools` (the tool set)
 * is given, is a name it does not hold.
 */
function activeToolsFromMatch(answer, toolNames, tools, options) {
  if (answer === null || typeof answer !== 'object' || !Array.isArray(answer.matches)) throw inputInvalid('answer');
  const lookup = nameLookup(toolNames);
  if (tools !== undefined && (tools === null || typeof tools !== 'object' || Array.isArray(tools))) throw inputInvalid('tools');
  const always = pinned(options, toolNames, tools);
  const names = [];
  for (const m of answer.matches) {
    if (m === null || typeof m !== 'object' || typeof m.qualifiedId !== 'string') throw inputInvalid('answer');
    const name = lookup(m.qualifiedId, m.id?.capabilityId);
    if (name === undefined || names.includes(name)) continue;
    if (tools === undefined || Object.hasOwn(tools, name)) names.push(name);
  }
  return [...names, ...always.filter((name) => !names.includes(name))];
}

/**
 * `options.always`: distinct tool names, each one `toolNames` maps a capability to (a table's
 * values; a function's names cannot be listed) and, when `tools` is given, one it holds.
 */
function pinned(options, toolNames, tools) {
  if (options === undefined) return [];
  if (options === null || typeof options !== 'object' || Array.isArray(options)) throw inputInvalid('options');
  // Read once, as plain values: a getter or a Proxy that throws is a bad option, never a raw error.
  let keys;
  let always;
  try {
    keys = Object.keys(options);
    always = options.always;
    if (Array.isArray(always)) always = [...always];
  } catch {
    throw inputInvalid('options');
  }
  for (const key of keys) if (key !== 'always') throw inputInvalid(key);
  if (always === undefined) return [];
  if (!Array.isArray(always)) throw inputInvalid('always', { expected: 'array of tool names' });
  const known = typeof toolNames === 'function' ? undefined : new Set(toolNames instanceof Map ? toolNames.values() : Object.values(toolNames));
  const seen = new Set();
  for (const name of always) {
    if (typeof name !== 'string' || name === '') throw inputInvalid('always', { expected: 'array of tool names' });
    if (seen.has(name)) throw inputInvalid('always', { reason: 'duplicate' });
    if ((known !== undefined && !known.has(name)) || (tools !== undefined && !Object.hasOwn(tools, name))) throw inputInvalid('always', { reason: 'unknown_tool' });
    seen.add(name);
  }
  return always;
}

function nameLookup(toolNames) {
  const checked = (name) => {
    if (name === undefined || name === null) return undefined;
    if (typeof name !== 'string' || name === '') throw inputInvalid('toolNames');
    return name;
  };
  // A function is asked with the qualified ID; a table is looked up by it, then by the local ID.
  if (typeof toolNames === 'function') return (qualified) => checked(toolNames(qualified));
  let get;
  if (toolNames instanceof Map) get = (id) => toolNames.get(id);
  else if (toolNames !== null && typeof toolNames === 'object' && !Array.isArray(toolNames)) get = (id) => (Object.hasOwn(toolNames, id) ? toolNames[id] : undefined);
  if (get) return (qualified, local) => checked(get(qualified)) ?? (typeof local === 'string' ? checked(get(local)) : undefined);
  throw inputInvalid('toolNames');
}

module.exports = { aiSdkTools, activeToolsFromMatch };
