'use strict';
// The generated napi loader (binding.js, never edited by hand) and the string protocol of its
// calls: a result is JSON text; a failure is "!" followed by the error's JSON.

const native = require('../binding.js');
const { GraphError } = require('./errors.cjs');

const FAILURE = 33; // "!"

/** Parses a native result, throwing its GraphError. */
function unwrap(text) {
  if (text.charCodeAt(0) === FAILURE) throw GraphError.fromJSON(text.slice(1));
  return JSON.parse(text);
}

module.exports = { native, unwrap };
