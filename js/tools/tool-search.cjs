'use strict';
// providerFromTools: a host's own tools as an inline provider, so match can choose the tools a
// model sees. JS only collects the tools as plain JSON (an AI SDK tool set holds functions and
// schema objects only JS can read); the engine reads every dialect, makes the capability IDs
// and builds the definition.

const { native, unwrap, call } = require('../engine/native.cjs');
const { toWireJson } = require('../pure-json.cjs');

const BOUND = Object.freeze({ ...require('../engine-tables.cjs').walkBounds.tools });

const isPlainJsonObject = (v) => {
  const proto = Object.getPrototypeOf(v);
  return (proto === Object.prototype || proto === null) && Object.getOwnPropertySymbols(v).length === 0;
};

/**
 * The JSON Schema of a schema object an AI SDK tool holds: `jsonSchema()`'s (marked by symbols,
 * with a `jsonSchema` property) or a Standard JSON Schema's (`~standard.jsonSchema.input()`, as
 * Zod 4 gives). Undefined when it is neither; the walk then marks it and the engine refuses it.
 */
function schemaOf(value) {
  try {
    const given = value.jsonSchema;
    if (given !== null && typeof given === 'object' && isPlainJsonObject(given)) return given;
    const standard = value['~standard']?.jsonSchema;
    if (typeof standard?.input === 'function') {
      const converted = standard.input({ target: 'draft-07' });
      if (converted !== null && typeof converted === 'object' && isPlainJsonObject(converted)) return converted;
    }
  } catch {
    // A schema that throws while read is not readable: the walk marks it.
  }
  return undefined;
}

/** Which fields of a tool are its schema is the engine's to say: any schema object a tool holds
 *  (`tools / <index or name> / <field>`) is printed as its JSON Schema. */
function hook(value, path) {
  if (path.length !== 3 || path[0] !== 'tools') return undefined;
  if (typeof value !== 'object' || isPlainJsonObject(value)) return undefined;
  const schema = schemaOf(value);
  return schema === undefined ? undefined : toWireJson(schema, undefined, BOUND);
}

/**
 * `{ definition, toolNames, capabilityIds }`: an inline provider definition with a capability
 * per tool, `toolNames` (capability ID → tool name) and `capabilityIds` (tool name →
 * capability ID), both in the tools' order.
 */
function providerFromTools(options) {
  const out = unwrap(call(native.providerFromTools, toWireJson(options === undefined ? null : options, hook, BOUND)));
  return {
    definition: out.definition,
    toolNames: new Map(out.tools.map((t) => [t.capabilityId, t.name])),
    capabilityIds: new Map(out.tools.map((t) => [t.name, t.capabilityId])),
  };
}

module.exports = { providerFromTools };
