'use strict';
// The executors the engine runs itself: lexicalExecutor() and semanticExecutor() make markers
// for `executor` in the open config; the config's wiring asks builtinOf() what a marker stands for.

const { GraphError } = require('../errors.cjs');
const { native, unwrap, call } = require('../engine/native.cjs');
const { toWireJson, HOST_KEY } = require('../pure-json.cjs');
const { resolveModel } = require('./model.cjs');

/** Markers made by lexicalExecutor(): the engine runs that executor itself. */
const LEXICAL = new WeakSet();

/** The built-in lexical executor, for `executor` in the open config. */
function lexicalExecutor(options) {
  const normalized = unwrap(call(native.lexicalOptions, toWireJson(options === undefined ? null : options)));
  const marker = Object.freeze({ id: 'lexical', options: Object.freeze(normalized) });
  LEXICAL.add(marker);
  return marker;
}

/** The model package's folder as the engine takes it: `{ dir }`, or `{ package }` to install
 *  (every match then fails CG_MODEL_UNAVAILABLE / check_config naming it). */
function modelSpec() {
  try {
    return { dir: resolveModel().dir };
  } catch (error) {
    if (error instanceof GraphError && error.code === 'CG_MODEL_UNAVAILABLE') return { package: error.details?.package ?? null };
    throw error;
  }
}

/** Markers made by semanticExecutor(), with the host embedder each was given (if any). */
const SEMANTIC = new WeakMap();

/** The semantic executor, for `executor` in the open config: the engine scores; vectors come
 *  from `embedder` (a host embedder, called on this thread in batches) or the first-party
 *  encoder of the optional model package. */
function semanticExecutor(options) {
  let embedder;
  const wired = toWireJson(options === undefined ? null : options, (value, path) => {
    if (path.length !== 1 || path[0] !== 'embedder') return undefined;
    embedder = value;
    return JSON.stringify({ [HOST_KEY]: 'embedder' });
  });
  const normalized = unwrap(call(native.semanticOptions, wired));
  const marker = Object.freeze({ id: 'semantic', options: Object.freeze(normalized) });
  SEMANTIC.set(marker, { embedder });
  return marker;
}

/**
 * What an `executor` value of a config stands for when it is a marker made here: `{ kind:
 * 'lexical', options }`, `{ kind: 'semantic', options, embedder? }` (no embedder: the first-party
 * encoder, whose folder is `model()`), else undefined (a host executor).
 */
function builtinOf(value) {
  if (LEXICAL.has(value)) return { kind: 'lexical', options: value.options };
  if (SEMANTIC.has(value)) return { kind: 'semantic', options: value.options, embedder: SEMANTIC.get(value).embedder, model: modelSpec };
  return undefined;
}

module.exports = { lexicalExecutor, semanticExecutor, builtinOf };
