'use strict';
// The dialects a tool's input schema is written in: JSON Schema as it is, or the strict
// function-calling dialect (OpenAI, Anthropic, Gemini): every member required, the optional
// ones nullable, maps as `{ key, value }` entries, refused keywords said in the description.

const { inputInvalid } = require('../errors.cjs');

const DIALECTS = ['json-schema', 'strict'];

/** A map from keys to `value` (an open object in the JSON Schema dialect, `{ key, value }`
 *  entries in the strict one). */
const MAP_KEY = Symbol('map key');
const map = (key, value, description, extra = {}) => ({
  type: 'object',
  additionalProperties: value,
  description,
  [MAP_KEY]: key,
  ...extra,
});

/** Keywords strict function calling refuses (OpenAI, Anthropic and Gemini each refuse some);
 *  a limit among them is said in the description instead. */
const REFUSED = {
  minLength: (n) => (n === 1 ? 'Not empty' : `At least ${n} characters`),
  maxLength: (n) => `at most ${n} characters`,
  minimum: (n) => `at least ${n}`,
  maximum: (n) => `at most ${n}`,
  minItems: (n) => `at least ${n} item${n === 1 ? '' : 's'}`,
  maxItems: (n) => `at most ${n} items`,
  maxProperties: (n) => `at most ${n} entries`,
  uniqueItems: () => 'no duplicates',
  pattern: () => undefined,
  format: () => undefined,
  examples: () => undefined,
  default: () => undefined,
};

/** `description` with the limits of `schema` that the strict dialect drops, unless it says them. */
function withLimits(schema) {
  const said = (schema.description ?? '').toLowerCase();
  const limits = Object.entries(REFUSED)
    .filter(([key]) => schema[key] !== undefined)
    .map(([key, text]) => [text(schema[key]), schema[key]])
    .filter(([text, value]) => text !== undefined && !(typeof value === 'number' && said.includes(String(value))) && !said.includes(text.toLowerCase()));
  if (limits.length === 0) return schema.description;
  const sentence = limits.map(([text]) => text).join('; ');
  return `${schema.description ?? ''} ${sentence[0].toUpperCase()}${sentence.slice(1)}.`.trim();
}

/** `schema` in the strict dialect; `nullable` adds `null` to what it accepts. */
function strict(schema, nullable = false) {
  if (schema[MAP_KEY]) {
    const entry = {
      type: 'object',
      properties: { key: strict(schema[MAP_KEY]), value: strict(schema.additionalProperties) },
      required: ['key', 'value'],
      additionalProperties: false,
      description: 'One entry.',
    };
    const description = `${withLimits(schema)} Given as a list of { key, value } entries, each key once.`;
    return { type: nullable ? ['array', 'null'] : 'array', items: entry, description };
  }
  const out = {};
  if (schema.anyOf) {
    out.anyOf = schema.anyOf.map((s) => strict(s));
    if (nullable && !schema.anyOf.some((s) => s.type === 'null')) out.anyOf.push({ type: 'null' });
  } else if (schema.type !== undefined) {
    out.type = nullable ? [schema.type, 'null'] : schema.type;
  }
  if (schema.enum) out.enum = nullable ? [...schema.enum, null] : [...schema.enum];
  if (schema.items) out.items = strict(schema.items);
  if (schema.properties) Object.assign(out, strictObject(schema.properties, schema.required ?? []));
  const description = withLimits(schema);
  if (description !== undefined) out.description = description;
  return out;
}

/** An object's members in the strict dialect: every one required, the optional ones nullable. */
function strictObject(properties, required) {
  return {
    properties: Object.fromEntries(Object.entries(properties).map(([k, s]) => [k, strict(s, !required.includes(k))])),
    required: Object.keys(properties),
    additionalProperties: false,
  };
}

/** A documented example in the strict dialect: every property present, maps as entries. */
function strictExample(example, properties) {
  return Object.fromEntries(
    Object.keys(properties).map((k) => {
      const value = example[k];
      if (value === undefined) return [k, null];
      if (properties[k][MAP_KEY]) return [k, Object.entries(value).map(([key, v]) => ({ key, value: v }))];
      return [k, value];
    }),
  );
}

/** The JSON Schema dialect's schema as plain JSON (the map marker is not part of it). */
const published = (schema) => JSON.parse(JSON.stringify(schema));

/** An object of its own (a plain or null prototype), as arguments and options are. */
function isPlainObject(v) {
  return v !== null && typeof v === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(v));
}

/** The properties of a tool as the graph (bound or not) takes them. */
function toolProperties(tool, bound) {
  const properties = { ...tool.properties };
  if (bound) {
    delete properties.requestProviderScope;
    for (const p of tool.boundDrops ?? []) delete properties[p];
  }
  return properties;
}

/** A documented example as the graph (bound or not) takes it. */
function boundExample(example, properties) {
  return Object.fromEntries(Object.entries(example).filter(([k]) => k in properties));
}

/** The input schema and examples of a tool in `dialect`. */
function inputSchema(tool, bound, dialect) {
  const properties = toolProperties(tool, bound);
  const required = (tool.required ?? []).filter((r) => r in properties);
  const examples = tool.examples.map((e) => boundExample(e, properties));
  if (dialect === 'strict') {
    return { schema: { type: 'object', ...strictObject(properties, required) }, examples: examples.map((e) => strictExample(e, properties)) };
  }
  const schema = {
    type: 'object',
    properties: published(properties),
    ...(required.length ? { required } : {}),
    additionalProperties: false,
    examples,
  };
  return { schema, examples };
}

/**
 * Strict-dialect arguments as the verb takes them: a `null` optional argument is omitted, and a
 * map given as `{ key, value }` entries becomes the object. Anything else goes to the verb as
 * it is, which judges it.
 */
function fromStrict(args, properties, required) {
  if (!isPlainObject(args)) return args;
  const out = {};
  for (const [key, value] of Object.entries(args)) {
    if (value === null && key in properties && !required.includes(key)) continue;
    if (properties[key]?.[MAP_KEY] && Array.isArray(value) && value.every(isEntry)) {
      const entries = {};
      for (const entry of value) {
        if (Object.hasOwn(entries, entry.key)) throw inputInvalid(key);
        entries[entry.key] = entry.value;
      }
      out[key] = entries;
    } else {
      out[key] = value;
    }
  }
  return out;
}
const isEntry = (e) => isPlainObject(e) && typeof e.key === 'string' && Object.hasOwn(e, 'value') && Object.keys(e).length === 2;

module.exports = { DIALECTS, map, isPlainObject, toolProperties, inputSchema, fromStrict };
