'use strict';
// The pure-JSON walk: only JavaScript can see getters, prototypes, symbols, holes and cycles,
// so this walk prints a value as JSON text once, strictly, without invoking anything. Where a
// value is not plain JSON it prints the marker {"$cgNonJson":"<kind>"}; the engine decides what
// that means where it stands (every other rule lives in Rust).

const NON_JSON_KEY = '$cgNonJson';
const HOST_KEY = '$cgHost';
const BOUNDS = require('./engine-tables.cjs').walkBounds;
/** The deepest nesting the walk prints; deeper is not plain JSON (the engine's bound). */
const MAX_DEPTH = BOUNDS.arguments.maxDepth;

const marker = (kind) => `{"${NON_JSON_KEY}":"${kind}"}`;

/**
 * The bound of the walk of query and tool arguments, from the engine: at most `maxValues` JSON
 * values and `maxChars` characters of JSON text. Past either the walk stops and the whole value
 * prints as one marker, which the engine refuses (CG_INPUT_TOO_LARGE) before any other rule.
 */
const ARGUMENTS = Object.freeze({ ...BOUNDS.arguments });

/**
 * The bound of the walk of what an SDK dispatcher is handed (tool calls, content blocks): the
 * list as a whole, and any one string in it (`maxStringChars`, a call's arguments text at most:
 * a longer one prints as the `too_many_chars` marker where it stands, unprinted).
 */
const DISPATCH = Object.freeze({ ...BOUNDS.dispatch });

/** Thrown inside the walk when it crosses its bound: never a value a host can throw. */
const OVER_VALUES = Symbol('overValues');
const OVER_CHARS = Symbol('overChars');

/** Stand-ins for arguments already walked and refused at the bound (see `refusedAtBound`). */
const REFUSED = new WeakMap();

function isPlainObject(v) {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/**
 * Prints `value` as JSON text. `hook(value, path)` may return replacement JSON text for an
 * object or function at a shallow path (host objects in a config); `path` is the key stack.
 * `bound` ({ maxValues?, maxChars? }, e.g. ARGUMENTS) stops the walk where it is crossed.
 */
function toWireJson(value, hook, bound) {
  if (value !== null && typeof value === 'object' && REFUSED.has(value)) return REFUSED.get(value);
  // One walk state per call; the walk itself is module-level, so a call allocates no closures.
  const state = {
    hook,
    path: [],
    ancestors: [],
    values: 0,
    chars: 0,
    maxValues: bound?.maxValues ?? Infinity,
    maxChars: bound?.maxChars ?? Infinity,
    maxStringChars: bound?.maxStringChars ?? Infinity,
  };
  try {
    return safeWalk(value, state);
  } catch (error) {
    if (error === OVER_VALUES) return marker('too_many_values');
    if (error === OVER_CHARS) return marker('too_many_chars');
    throw error;
  }
}

/**
 * When `text` (printed by toWireJson) is a refusal at the bound, an object that prints as that
 * text again, for a layer that walks arguments first and hands them on (the Tool Adapter): the
 * verb's own walk then gives the engine the same refusal. Otherwise undefined.
 */
function refusedAtBound(text) {
  if (text !== marker('too_many_values') && text !== marker('too_many_chars')) return undefined;
  const standIn = Object.freeze(Object.create(null));
  REFUSED.set(standIn, text);
  return standIn;
}

/** Counts `text` (one value's or punctuation's) against the bound; returns it. */
function spend(state, text, values) {
  state.values += values;
  state.chars += text.length;
  if (state.values > state.maxValues) throw OVER_VALUES;
  if (state.chars > state.maxChars) throw OVER_CHARS;
  return text;
}

// Proxies can throw from any reflection trap; such a value is simply not plain JSON.
function safeWalk(v, state) {
  const depth = state.path.length;
  const open = state.ancestors.length;
  try {
    return walk(v, state);
  } catch (error) {
    if (error === OVER_VALUES || error === OVER_CHARS) throw error;
    // What the failed walk left open is closed again: a sibling is judged on its own.
    state.path.length = depth;
    state.ancestors.length = open;
    return spend(state, marker('unreadable'), 1);
  }
}

function walk(v, state) {
  const { hook, path, ancestors } = state;
  switch (typeof v) {
    case 'string':
      if (v.length > state.maxStringChars) return spend(state, marker('too_many_chars'), 1);
      return spend(state, v.isWellFormed() ? JSON.stringify(v) : marker('lone_surrogate'), 1);
    case 'number':
      return spend(state, Number.isFinite(v) ? JSON.stringify(v) : marker('non_finite_number'), 1);
    case 'boolean':
      return spend(state, v ? 'true' : 'false', 1);
    case 'undefined':
      return spend(state, marker('undefined'), 1);
    case 'bigint':
      return spend(state, marker('bigint'), 1);
    case 'symbol':
      return spend(state, marker('symbol'), 1);
    case 'function': {
      const replaced = hook && path.length <= 4 ? hook(v, path) : undefined;
      return spend(state, replaced === undefined ? marker('function') : replaced, 1);
    }
    default:
      break;
  }
  if (v === null) return spend(state, 'null', 1);
  if (hook && path.length <= 4) {
    const replaced = hook(v, path);
    if (replaced !== undefined) return spend(state, replaced, 1);
  }
  // The objects being printed, outermost first (at most MAX_DEPTH of them).
  if (ancestors.includes(v)) return spend(state, marker('cycle'), 1);
  if (path.length >= MAX_DEPTH) return spend(state, marker('too_deep'), 1);
  if (Array.isArray(v)) {
    if (Object.getPrototypeOf(v) !== Array.prototype) return spend(state, marker('class_instance'), 1);
    spend(state, '[]', 1);
    ancestors.push(v);
    let out = '[';
    for (let i = 0; i < v.length; i++) {
      const d = Object.getOwnPropertyDescriptor(v, i);
      path.push(i);
      if (i > 0) out += spend(state, ',', 0);
      if (d === undefined) out += spend(state, marker('hole'), 1);
      else if (!('value' in d)) out += spend(state, marker('accessor'), 1);
      else out += d.enumerable ? safeWalk(d.value, state) : spend(state, marker('non_enumerable'), 1);
      path.pop();
    }
    ancestors.pop();
    return `${out}]`;
  }
  if (!isPlainObject(v)) return spend(state, marker('class_instance'), 1);
  if (Object.getOwnPropertySymbols(v).length > 0) return spend(state, marker('symbol_key'), 1);
  const keys = Object.getOwnPropertyNames(v);
  if (keys.includes(NON_JSON_KEY) || keys.includes(HOST_KEY)) return spend(state, marker('reserved_key'), 1);
  const names = printedKeys(keys);
  if (names === undefined) return spend(state, marker('lone_surrogate_key'), 1);
  spend(state, '{}', 1);
  ancestors.push(v);
  let out = '{';
  for (let k = 0; k < keys.length; k++) {
    const key = keys[k];
    const d = Object.getOwnPropertyDescriptor(v, key);
    // A key whose value is undefined counts as absent (JS semantics); null never does.
    if ('value' in d && d.value === undefined) continue;
    // A hidden (non-enumerable) property is not silently dropped: it is not plain JSON; nor is
    // a key that is not well-formed text (its value is marked where the key stands).
    const name = names === null ? null : names[k];
    const kind = !('value' in d) ? 'accessor' : !d.enumerable ? 'non_enumerable' : name === null ? undefined : 'lone_surrogate_key';
    path.push(key);
    if (out.length > 1) out += spend(state, ',', 0);
    out += `${spend(state, `${JSON.stringify(name ?? key)}:`, 0)}${kind === undefined ? safeWalk(d.value, state) : spend(state, marker(kind), 1)}`;
    path.pop();
  }
  ancestors.pop();
  return `${out}}`;
}

/**
 * null when every key prints as itself; else for each key null or its well-formed stand-in
 * (lone surrogates replaced by U+FFFD), under which the engine reports the property; undefined
 * when a stand-in would collide with another key, so the whole object is marked instead.
 */
function printedKeys(keys) {
  let names = null;
  for (let k = 0; k < keys.length; k++) {
    if (keys[k].isWellFormed()) continue;
    names ??= keys.map(() => null);
    names[k] = keys[k].toWellFormed();
  }
  if (names === null) return null;
  const printed = new Set(keys.map((key, k) => names[k] ?? key));
  return printed.size === keys.length ? names : undefined;
}

/**
 * `{ value }` of the own data property `key` of a plain object, read without invoking anything
 * (`value` undefined when the key is absent); `undefined` when `object` is not a plain object,
 * the property is an accessor, or a Proxy throws. For options that hold host objects (an
 * AbortSignal), which the walk would mark as not plain JSON.
 */
function ownValue(object, key) {
  try {
    if (object === null || typeof object !== 'object' || !isPlainObject(object)) return undefined;
    const d = Object.getOwnPropertyDescriptor(object, key);
    if (d === undefined) return { value: undefined };
    return 'value' in d ? { value: d.value } : undefined;
  } catch {
    return undefined;
  }
}

const isRefusedAtBound = (value) => value !== null && typeof value === 'object' && REFUSED.has(value);

module.exports = { toWireJson, refusedAtBound, isRefusedAtBound, ownValue, marker, ARGUMENTS, DISPATCH, HOST_KEY, NON_JSON_KEY };
