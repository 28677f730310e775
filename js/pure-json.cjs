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
  const ancestors = new Set();
  const path = [];

  function walk(v) {
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
    if (ancestors.has(v)) return marker('cycle');
    if (path.length >= MAX_DEPTH) return marker('too_deep');
    if (Array.isArray(v)) {
      if (Object.getPrototypeOf(v) !== Array.prototype) return marker('class_instance');
      ancestors.add(v);
      const parts = new Array(v.length);
      for (let i = 0; i < v.length; i++) {
        const d = Object.getOwnPropertyDescriptor(v, i);
        path.push(i);
        if (d === undefined) parts[i] = marker('hole');
        else if (!('value' in d)) parts[i] = marker('accessor');
        else parts[i] = d.enumerable ? safeWalk(d.value) : marker('non_enumerable');
        path.pop();
      }
      ancestors.delete(v);
      return `[${parts.join(',')}]`;
    }
    if (!isPlainObject(v)) return marker('class_instance');
    if (Object.getOwnPropertySymbols(v).length > 0) return marker('symbol_key');
    const keys = Object.getOwnPropertyNames(v);
    if (keys.includes(NON_JSON_KEY) || keys.includes(HOST_KEY)) return marker('reserved_key');
    ancestors.add(v);
    const parts = [];
    for (const key of keys) {
      const d = Object.getOwnPropertyDescriptor(v, key);
      // A key whose value is undefined counts as absent (JS semantics); null never does.
      if ('value' in d && d.value === undefined) continue;
      // A hidden (non-enumerable) property is not silently dropped: it is not plain JSON.
      const kind = !('value' in d) ? 'accessor' : d.enumerable ? undefined : 'non_enumerable';
      path.push(key);
      parts.push(`${JSON.stringify(key)}:${kind === undefined ? safeWalk(d.value) : marker(kind)}`);
      path.pop();
    }
    ancestors.delete(v);
    return `{${parts.join(',')}}`;
  }

  // Proxies can throw from any reflection trap; such a value is simply not plain JSON.
  function safeWalk(v) {
    try {
      return walk(v);
    } catch {
      return marker('unreadable');
    }
  }

  return safeWalk(value);
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
