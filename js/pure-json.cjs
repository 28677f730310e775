'use strict';
// The pure-JSON walk (SPEC §14 D11): only JavaScript can see getters, prototypes, symbols,
// holes and cycles, so this walk prints a value as JSON text once, strictly, without invoking
// anything. Where a value is not plain JSON it prints the marker {"$cgNonJson":"<kind>"}; the
// engine decides what that means where it stands (every other rule lives in Rust).

const NON_JSON_KEY = '$cgNonJson';
const HOST_KEY = '$cgHost';
const MAX_DEPTH = 64;

const marker = (kind) => `{"${NON_JSON_KEY}":"${kind}"}`;

function isPlainObject(v) {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/**
 * Prints `value` as JSON text. `hook(value, path)` may return replacement JSON text for an
 * object or function at a shallow path (host objects in a config); `path` is the key stack.
 */
function toWireJson(value, hook) {
  // One walk state per call; the walk itself is module-level, so a call allocates no closures.
  return safeWalk(value, { hook, path: [], ancestors: [] });
}

// Proxies can throw from any reflection trap; such a value is simply not plain JSON.
function safeWalk(v, state) {
  const depth = state.path.length;
  const open = state.ancestors.length;
  try {
    return walk(v, state);
  } catch {
    // What the failed walk left open is closed again: a sibling is judged on its own.
    state.path.length = depth;
    state.ancestors.length = open;
    return marker('unreadable');
  }
}

function walk(v, state) {
  const { hook, path, ancestors } = state;
  switch (typeof v) {
    case 'string':
      return v.isWellFormed() ? JSON.stringify(v) : marker('lone_surrogate');
    case 'number':
      return Number.isFinite(v) ? JSON.stringify(v) : marker('non_finite_number');
    case 'boolean':
      return v ? 'true' : 'false';
    case 'undefined':
      return marker('undefined');
    case 'bigint':
      return marker('bigint');
    case 'symbol':
      return marker('symbol');
    case 'function': {
      const replaced = hook && path.length <= 4 ? hook(v, path) : undefined;
      return replaced === undefined ? marker('function') : replaced;
    }
    default:
      break;
  }
  if (v === null) return 'null';
  if (hook && path.length <= 4) {
    const replaced = hook(v, path);
    if (replaced !== undefined) return replaced;
  }
  // The objects being printed, outermost first (at most MAX_DEPTH of them).
  if (ancestors.includes(v)) return marker('cycle');
  if (path.length >= MAX_DEPTH) return marker('too_deep');
  if (Array.isArray(v)) {
    if (Object.getPrototypeOf(v) !== Array.prototype) return marker('class_instance');
    ancestors.push(v);
    let out = '[';
    for (let i = 0; i < v.length; i++) {
      const d = Object.getOwnPropertyDescriptor(v, i);
      path.push(i);
      if (i > 0) out += ',';
      if (d === undefined) out += marker('hole');
      else if (!('value' in d)) out += marker('accessor');
      else out += d.enumerable ? safeWalk(d.value, state) : marker('non_enumerable');
      path.pop();
    }
    ancestors.pop();
    return `${out}]`;
  }
  if (!isPlainObject(v)) return marker('class_instance');
  if (Object.getOwnPropertySymbols(v).length > 0) return marker('symbol_key');
  const keys = Object.getOwnPropertyNames(v);
  if (keys.includes(NON_JSON_KEY) || keys.includes(HOST_KEY)) return marker('reserved_key');
  ancestors.push(v);
  let out = '{';
  for (const key of keys) {
    const d = Object.getOwnPropertyDescriptor(v, key);
    // A key whose value is undefined counts as absent (JS semantics); null never does.
    if ('value' in d && d.value === undefined) continue;
    // A hidden (non-enumerable) property is not silently dropped: it is not plain JSON.
    const kind = !('value' in d) ? 'accessor' : d.enumerable ? undefined : 'non_enumerable';
    path.push(key);
    if (out.length > 1) out += ',';
    out += `${JSON.stringify(key)}:${kind === undefined ? safeWalk(d.value, state) : marker(kind)}`;
    path.pop();
  }
  ancestors.pop();
  return `${out}}`;
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

module.exports = { toWireJson, ownValue, HOST_KEY, NON_JSON_KEY };
