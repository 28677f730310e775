'use strict';
// An open config as the engine takes it: its wire JSON with a described handle where each host
// object sits, the host objects kept by slot for the calls the JS layer makes, and what its
// database authorities hold.

const { native, unwrap, call } = require('../engine/native.cjs');
const { toWireJson, HOST_KEY } = require('../pure-json.cjs');
const { builtinOf } = require('../executors/builtin.cjs');
const { readDatabases } = require('./databases.cjs');

/** Where host objects may sit in an open config: [path pattern, …]. */
const HOST_SLOTS = [
  ['executor'],
  ['capabilityRetriever'],
  ['knowledgeRetriever'],
  ['readers', '#'],
  ['runtimeAdapters', '#'],
  ['providers', '#', 'authority', 'adapter'],
];

function atHostSlot(path) {
  return HOST_SLOTS.some(
    (slot) =>
      slot.length === path.length &&
      slot.every((part, i) => (part === '#' ? typeof path[i] === 'number' : part === path[i])),
  );
}

function methodNames(value) {
  const names = new Set();
  try {
    for (let o = value; o !== null && o !== Object.prototype && o !== Function.prototype; o = Object.getPrototypeOf(o)) {
      for (const name of Object.getOwnPropertyNames(o)) {
        try {
          if (typeof value[name] === 'function' && name !== 'constructor') names.add(name);
        } catch {
          // A throwing getter is simply not a method.
        }
      }
    }
  } catch {
    // An object whose prototype chain cannot be read offers no methods.
  }
  return [...names];
}

/** Describes a host object to the engine and keeps it for the calls the JS layer makes. */
function describeHost(value, hosts) {
  const handle = hosts.push(value) - 1;
  const text = (v) => (typeof v === 'string' ? v : null);
  let id = null;
  let providerId = null;
  let dimensions = null;
  try {
    id = text(value.id);
    providerId = text(value.providerId);
    dimensions = typeof value.dimensions === 'number' ? value.dimensions : null;
  } catch {
    // Reported by the engine as a missing id.
  }
  return JSON.stringify({ [HOST_KEY]: handle, id, providerId, dimensions, methods: methodNames(value) });
}

/** The host objects of a config by slot, for the calls the JS layer makes to them. */
function newHosts() {
  return { all: [], readers: [], runtime: new Map(), executor: undefined, embedder: undefined, capabilityRetriever: undefined, knowledgeRetriever: undefined };
}

function wireConfig(config, hosts) {
  return toWireJson(config, (value, path) => {
    if (!atHostSlot(path)) return undefined;
    const builtin = path[0] === 'executor' ? builtinOf(value) : undefined;
    if (builtin?.kind === 'lexical') {
      return JSON.stringify({ [HOST_KEY]: 'lexical', options: builtin.options });
    }
    if (builtin?.kind === 'semantic') {
      const { embedder } = builtin;
      const wired = { [HOST_KEY]: 'semantic', options: builtin.options };
      if (embedder === undefined) {
        // The first-party encoder: the engine loads it from the model package's folder.
        wired.model = builtin.model();
      } else {
        hosts.embedder = embedder;
        wired.embedder = JSON.parse(describeHost(embedder, hosts.all));
      }
      return JSON.stringify(wired);
    }
    if (path[0] === 'readers') hosts.readers[path[1]] = value;
    if (['executor', 'capabilityRetriever', 'knowledgeRetriever'].includes(path[0])) hosts[path[0]] = value;
    const described = describeHost(value, hosts.all);
    // A runtime adapter is found by the provider ID the engine was given, read once here.
    if (path[0] === 'runtimeAdapters') hosts.runtime.set(JSON.parse(described).providerId, value);
    return described;
  });
}

/** A config as the engine takes it: its wire JSON, its host objects, and what its database
 *  authorities hold — read a page at a time into the engine, before it loads them (config
 *  errors first). Views are asked for precomputed vectors unless `vectors` is false (doctor
 *  checks definitions only). */
async function readConfig(config, { vectors = true } = {}) {
  const hosts = newHosts();
  const wired = wireConfig(config, hosts);
  hosts.databases = unwrap(call(native.databaseSources, wired));
  const { sources, budgets } = hosts.databases;
  return { wired, hosts, databases: await readDatabases(sources, hosts, vectors ? budgets : { ...budgets, vectors: null }) };
}

/** The one provider a reload's options (wire JSON) name, if any. */
function reloadTarget(args) {
  const options = JSON.parse(args);
  return options !== null && typeof options === 'object' && typeof options.providerId === 'string' ? options.providerId : undefined;
}

module.exports = { readConfig, reloadTarget };
