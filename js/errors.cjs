'use strict';
// GraphError and the frozen ErrorCode / Phase / NextAction constants, all taken from the
// engine's one catalog (generated from it into engine-tables.cjs, so they cannot disagree and
// load without the native binary).

const catalog = require('./engine-tables.cjs').errorCatalog;
const byCode = new Map(catalog.codes.map((entry) => [entry.code, entry]));

const keyed = (names) => Object.freeze(Object.fromEntries(names.map((n) => [n, n])));
const ErrorCode = keyed(catalog.codes.map((c) => c.code));
const Phase = keyed(catalog.phases);
const NextAction = keyed(catalog.nextActions);

const FROM_ENGINE = Symbol('fromEngine');

/** CG_INPUT_INVALID for `field`; `more` may give the phase and further details (e.g. `expected`). */
function inputInvalid(field, { phase, ...details } = {}) {
  return new GraphError({ code: 'CG_INPUT_INVALID', ...(phase ? { phase } : {}), details: { field, ...details } });
}

/**
 * The one error class of the package. Branch on `code` and `phase`, never on `message`.
 */
class GraphError extends Error {
  constructor(init, fromEngine) {
    const fields = init !== null && typeof init === 'object' ? init : {};
    const entry = byCode.get(fields.code);
    if (fromEngine !== FROM_ENGINE) {
      if (entry === undefined) throw inputInvalid('code');
      if (fields.phase !== undefined && !(fields.phase in Phase)) throw inputInvalid('phase');
      if (fields.nextAction !== undefined && !(fields.nextAction in NextAction)) {
        throw inputInvalid('nextAction');
      }
      if (fields.message !== undefined && typeof fields.message !== 'string') throw inputInvalid('message');
    }
    super(fields.message ?? entry.messages[0]);
    Object.defineProperty(this, 'name', { value: 'GraphError', enumerable: false, configurable: true, writable: true });
    this.code = fields.code;
    this.phase = fields.phase ?? entry.phase;
    const action = fromEngine === FROM_ENGINE ? fields.nextAction : fields.nextAction ?? entry.nextAction;
    if (action !== undefined && action !== null) this.nextAction = action;
    if (fields.details !== undefined) this.details = fields.details;
  }

  /** `{ code, phase, message, nextAction?, details? }`, in that order. */
  toJSON() {
    const json = { code: this.code, phase: this.phase, message: this.message };
    if (this.nextAction !== undefined) json.nextAction = this.nextAction;
    if (this.details !== undefined) json.details = this.details;
    return json;
  }

  /** @internal An error the engine reported, as its JSON text. */
  static fromJSON(text) {
    return new GraphError(JSON.parse(text), FROM_ENGINE);
  }
}

module.exports = { GraphError, ErrorCode, Phase, NextAction, catalog, inputInvalid };
