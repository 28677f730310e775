'use strict';
// What the agent SDK helpers share: they take a Tool Adapter, never a graph, and hand every SDK
// the adapter's own outcome ({ ok: true, result } / { ok: false, error }) as the tool result, so
// the model reads the same JSON, with its nextAction, whichever SDK runs the loop.

const { GraphError, inputInvalid } = require('../errors.cjs');
const { native } = require('../engine/native.cjs');
const { toWireJson, ownValue, ARGUMENTS, DISPATCH, NON_JSON_KEY } = require('../pure-json.cjs');
const { isToolAdapter } = require('./adapter.cjs');
const { isPlainObject } = require('./dialect.cjs');

const isMarker = (v) => isPlainObject(v) && Object.hasOwn(v, NON_JSON_KEY);
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
 * model's mistake to fix, CG_INPUT_INVALID (`field: 'arguments'`). The text is measured against
 * the arguments' bounds (length, then nesting depth and values, scanned by the engine) before
 * it is parsed: past one, CG_INPUT_TOO_LARGE naming it, never parsed.
 */
async function callWithText(adapter, name, text, signal) {
  const refused = (json) => ({ ok: false, error: GraphError.fromJSON(json).toJSON() });
  if (isMarker(text) && text[NON_JSON_KEY] === 'too_many_chars') return refused(native.measureJsonText(null, 'arguments'));
  if (typeof text !== 'string') return { ok: false, error: inputInvalid('arguments').toJSON() };
  if (text.trim() === '') return adapter.call(name, undefined, withSignal(signal));
  const over = native.measureJsonText(text.length > ARGUMENTS.maxChars ? null : text, 'arguments');
  if (over !== null) return refused(over);
  let args;
  try {
    args = JSON.parse(text);
  } catch {
    return { ok: false, error: inputInvalid('arguments').toJSON() };
  }
  return adapter.call(name, args, withSignal(signal));
}

/** The `{ signal }` of a dispatcher's options, read without invoking anything, or
 *  CG_INPUT_INVALID (`field: 'options'`, or the key that is not `signal`). */
function dispatchSignal(options) {
  if (options === undefined) return undefined;
  const signal = ownValue(options, 'signal');
  let keys;
  try {
    keys = signal === undefined || Array.isArray(options) ? undefined : Reflect.ownKeys(options);
  } catch {
    keys = undefined;
  }
  if (keys === undefined) throw inputInvalid('options');
  for (const key of keys) if (key !== 'signal') throw inputInvalid(typeof key === 'string' ? key : 'options');
  if (signal.value !== undefined && !(signal.value instanceof AbortSignal)) throw inputInvalid('signal');
  return signal.value;
}

/**
 * `items` (a dispatcher's list) read once by the pure-JSON walk within the dispatch bound, so no
 * getter or Proxy of the host's is invoked: an array of plain objects, else CG_INPUT_INVALID
 * (`field`; `field[i]` for an item that could not be read), past the bound CG_INPUT_TOO_LARGE.
 * A string over the bound (an arguments text at most) stands as a marker, never printed.
 */
function plainItems(items, field) {
  const text = toWireJson(items, undefined, DISPATCH);
  const refused = text.length < 64 ? native.dispatchRefused(text, field) : null;
  if (refused !== null) throw GraphError.fromJSON(refused);
  const list = JSON.parse(text);
  if (!Array.isArray(list)) throw inputInvalid(field);
  list.forEach((item, i) => {
    if (isMarker(item)) throw inputInvalid(`${field}[${i}]`);
    if (!isPlainObject(item)) throw inputInvalid(field);
  });
  return list;
}

/**
 * `item[key]` of a walked item (`path` names the item): a value that was not plain JSON there (a
 * getter, a Proxy, a function) is CG_INPUT_INVALID naming it; `long` lets a string over the
 * dispatch bound through (the arguments text, refused for the model as too large).
 */
function read(item, key, path, long = false) {
  const value = Object.hasOwn(item, key) ? item[key] : undefined;
  if (isMarker(value) && !(long && value[NON_JSON_KEY] === 'too_many_chars')) throw inputInvalid(`${path}.${key}`);
  return value;
}

module.exports = { checkAdapter, schemaOf, withSignal, callWithText, dispatchSignal, plainItems, read };
