'use strict';
// GraphError and the frozen ErrorCode / Phase / NextAction constants, all taken from the
// engine's one catalog (generated from it into engine-tables.cjs, so they cannot disagree and
// load without the native binary).

const catalog = require('./engine-tables.cjs').errorCatalog;
const { toWireJson, NON_JSON_KEY } = require('./pure-json.cjs');

let engine;
/**
 * The engine's cut of every string in `details` (JSON text in and out; null when not plain
 * JSON). Without a native binary there is no engine to apply it: the details are copied as
 * they are.
 */
function hostDetails(json) {
  if (engine === undefined) {
    try {
      engine = require('../binding.js');
    } catch {
      engine = null;
    }
  }
  return engine === null ? json : engine.hostDetails(json);
}
const byCode = new Map(catalog.codes.map((entry) => [entry.code, entry]));

const keyed = (names) => Object.freeze(Object.fromEntries(names.map((n) => [n, n])));
const ErrorCode = keyed(catalog.codes.map((c) => c.code));
const Phase = keyed(catalog.phases);
const NextAction = keyed(catalog.nextActions);

/** The actions the catalog allows for `code`: its own and the ones it lists as also legal. */
const legalActions = (code) => {
  const entry = byCode.get(code);
  return entry.nextAction === null ? [] : [entry.nextAction, ...entry.alsoLegal];
};

const FROM_ENGINE = Symbol('fromEngine');
// Set in the class body, where its private brand is visible.
let isGraphError;

/** CG_INPUT_INVALID for `field`; `more` may give the phase and further details (e.g. `expected`). */
function inputInvalid(field, { phase, ...details } = {}) {
  return new GraphError({ code: 'CG_INPUT_INVALID', ...(phase ? { phase } : {}), details: { field, ...details } });
}

/** `value` and everything in it frozen (it is plain JSON). */
function deepFreeze(value) {
  if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/**
 * The fields of `init` as plain JSON, read once by the pure-JSON walk (a getter or a Proxy is
 * never invoked), with `details` copied and every string in them cut by the engine's rule.
 */
function hostFields(init) {
  // Another GraphError is taken as its JSON.
  const fields = JSON.parse(toWireJson(isGraphError(init) ? init.toJSON() : init));
  if (fields === null || typeof fields !== 'object' || Array.isArray(fields) || NON_JSON_KEY in fields) throw inputInvalid('$');
  if (!(typeof fields.code === 'string' && byCode.has(fields.code))) throw inputInvalid('code');
  if (fields.phase !== undefined && !Object.hasOwn(Phase, fields.phase)) throw inputInvalid('phase');
  if (fields.nextAction !== undefined && !legalActions(fields.code).includes(fields.nextAction)) throw inputInvalid('nextAction');
  if (fields.message !== undefined && typeof fields.message !== 'string') throw inputInvalid('message');
  if (fields.details !== undefined) {
    const details = hostDetails(JSON.stringify(fields.details));
    if (details === null) throw inputInvalid('details');
    fields.details = JSON.parse(details);
  }
  return fields;
}

const readOnly = (object, name, value) => Object.defineProperty(object, name, { value, enumerable: true, writable: false, configurable: false });

/**
 * The one error class of the package. Branch on `code` and `phase`, never on `message`. Its
 * fields are read-only and its `details` a frozen copy.
 */
class GraphError extends Error {
  /** Present on every GraphError: what `toJSON` checks its receiver by (a brand, not a field). */
  #brand;

  constructor(init, fromEngine) {
    const fields = fromEngine === FROM_ENGINE ? init : hostFields(init);
    const entry = byCode.get(fields.code);
    super(fields.message ?? entry.messages[0]);
    Object.defineProperty(this, 'name', { value: 'GraphError', enumerable: false, configurable: true, writable: true });
    readOnly(this, 'code', fields.code);
    readOnly(this, 'phase', fields.phase ?? entry.phase);
    const action = fromEngine === FROM_ENGINE ? fields.nextAction : fields.nextAction ?? entry.nextAction;
    if (action !== undefined && action !== null) readOnly(this, 'nextAction', action);
    if (fields.details !== undefined) readOnly(this, 'details', deepFreeze(fields.details));
  }

  /** `{ code, phase, message, nextAction?, details? }`, in that order. */
  toJSON() {
    if (!isGraphError(this)) throw inputInvalid('this');
    const json = { code: this.code, phase: this.phase, message: this.message };
    if (this.nextAction !== undefined) json.nextAction = this.nextAction;
    if (this.details !== undefined) json.details = this.details;
    return json;
  }

  static {
    isGraphError = (value) => value !== null && typeof value === 'object' && #brand in value;
  }

  /** @internal An error the engine reported, as its JSON text. */
  static fromJSON(text) {
    let init;
    try {
      init = typeof text === 'string' ? JSON.parse(text) : undefined;
    } catch {
      // Not the engine's JSON: reported below.
    }
    if (init === null || typeof init !== 'object' || !byCode.has(init.code)) throw inputInvalid('text');
    return new GraphError(init, FROM_ENGINE);
  }
}

module.exports = { GraphError, ErrorCode, Phase, NextAction, catalog, inputInvalid };
