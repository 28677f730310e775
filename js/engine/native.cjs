'use strict';
// The generated napi loader (binding.js, never edited by hand) and the string protocol of its
// calls: a result is JSON text; a failure is "!" followed by the error's JSON.

const { GraphError } = require('../errors.cjs');
const { missingBinding } = require('./platform.cjs');

/**
 * The engine, or — when no native binary loads on this platform (no platform package installed,
 * an unsupported platform) — a stand-in whose every function throws the one GraphError saying
 * so. Importing the package, `--help` and `--version` never need the engine.
 */
const native = (() => {
  let loaded;
  try {
    loaded = require('../../binding.js');
  } catch {
    return missingBinding();
  }
  // The engine's catalog call also silences Rust's panic message (a panic is CG_INTERNAL).
  loaded.errorCatalog();
  return loaded;
})();

const FAILURE = 33; // "!"

/** The GraphError of a native failure string. */
const failure = (text) => GraphError.fromJSON(text.slice(1));

/** Parses a native result, throwing its GraphError. */
function unwrap(text) {
  if (text.charCodeAt(0) === FAILURE) throw failure(text);
  return JSON.parse(text);
}

/**
 * Calls the engine. napi reports arguments it cannot convert by throwing an Error with a
 * status `code` (CG_INPUT_INVALID); anything else thrown is a bug (CG_INTERNAL, no detail).
 */
function call(fn, ...args) {
  try {
    return fn(...args);
  } catch (error) {
    if (error instanceof GraphError) throw error;
    const converting = error instanceof Error && typeof error.code === 'string';
    throw new GraphError({ code: converting ? 'CG_INPUT_INVALID' : 'CG_INTERNAL' });
  }
}

module.exports = { native, unwrap, failure, call };
