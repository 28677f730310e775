'use strict';
// What the agent SDK helpers share: they take a Tool Adapter, never a graph, and hand every SDK
// the adapter's own outcome ({ ok: true, result } / { ok: false, error }) as the tool result, so
// the model reads the same JSON, with its nextAction, whichever SDK runs the loop.

const { inputInvalid } = require('../errors.cjs');
const { isToolAdapter } = require('./adapter.cjs');

/** `adapter` if createToolAdapter made it, else CG_INPUT_INVALID (`field: 'adapter'`). */
function checkAdapter(adapter) {
  if (!isToolAdapter(adapter)) throw inputInvalid('adapter');
  return adapter;
}

/** A tool's input schema as its own copy: an SDK that decorates the schema it is given cannot
 *  change the adapter's. */
const schemaOf = (tool) => JSON.parse(JSON.stringify(tool.inputSchema));

/** The `{ signal }` call option for an SDK's abort signal, if it gave one. */
const withSignal = (signal) => (signal === undefined || signal === null ? undefined : { signal });

/**
 * `adapter.call` for a call whose arguments arrive as JSON text (OpenAI's `arguments`): empty
 * text is no arguments (models send it for a call without any); text that is not JSON is the
 * model's mistake to fix, CG_INPUT_INVALID (`field: 'arguments'`).
 */
async function callWithText(adapter, name, text, signal) {
  if (typeof text !== 'string') return { ok: false, error: inputInvalid('arguments').toJSON() };
  if (text.trim() === '') return adapter.call(name, undefined, withSignal(signal));
  let args;
  try {
    args = JSON.parse(text);
  } catch {
    return { ok: false, error: inputInvalid('arguments').toJSON() };
  }
  return adapter.call(name, args, withSignal(signal));
}

/** The `{ signal }` of a dispatcher's options, or CG_INPUT_INVALID (`field: 'options'`). */
function dispatchSignal(options) {
  if (options === undefined) return undefined;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) throw inputInvalid('options');
  for (const key of Object.keys(options)) if (key !== 'signal') throw inputInvalid(key);
  const { signal } = options;
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw inputInvalid('signal');
  return signal;
}

/** `items` as an array of objects, or CG_INPUT_INVALID (`field`). */
function objects(items, field) {
  if (!Array.isArray(items) || !items.every((item) => item !== null && typeof item === 'object')) throw inputInvalid(field);
  return items;
}

module.exports = { checkAdapter, schemaOf, withSignal, callWithText, dispatchSignal, objects };
