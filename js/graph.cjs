'use strict';
// The public classes. Each verb prints its argument as JSON (the pure-JSON walk), calls the
// engine once and parses one JSON answer; every failure rejects with a GraphError.

const { native, unwrap, failure, call } = require('./native.cjs');
const { GraphError, inputInvalid } = require('./errors.cjs');
const { toWireJson, HOST_KEY } = require('./pure-json.cjs');

const CONSTRUCT = Symbol('construct');
// Set in the class bodies, where the private fields they read are visible.
let runQuery;
let runRead;
let runHosted;
let graphOf;

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
  try {
    id = text(value.id);
    providerId = text(value.providerId);
  } catch {
    // Reported by the engine as a missing id.
  }
  return JSON.stringify({ [HOST_KEY]: handle, id, providerId, methods: methodNames(value) });
}

/** The host objects of a config by slot, for the calls the JS layer makes to them. */
function newHosts() {
  return { all: [], readers: [], runtime: new Map(), executor: undefined, capabilityRetriever: undefined, knowledgeRetriever: undefined };
}

/** Markers made by lexicalExecutor(): the engine runs that executor itself. */
const LEXICAL = new WeakSet();

/** The built-in lexical executor, for `executor` in the open config. */
function lexicalExecutor(options) {
  const normalized = unwrap(call(native.lexicalOptions, toWireJson(options === undefined ? null : options)));
  const marker = Object.freeze({ id: 'lexical', options: Object.freeze(normalized) });
  LEXICAL.add(marker);
  return marker;
}

function wireConfig(config, hosts) {
  return toWireJson(config, (value, path) => {
    if (!atHostSlot(path)) return undefined;
    if (path[0] === 'executor' && LEXICAL.has(value)) {
      return JSON.stringify({ [HOST_KEY]: 'lexical', options: value.options });
    }
    if (path[0] === 'readers') hosts.readers[path[1]] = value;
    if (['executor', 'capabilityRetriever', 'knowledgeRetriever'].includes(path[0])) hosts[path[0]] = value;
    const described = describeHost(value, hosts.all);
    // A runtime adapter is found by the provider ID the engine was given, read once here.
    if (path[0] === 'runtimeAdapters') hosts.runtime.set(JSON.parse(described).providerId, value);
    return described;
  });
}

/** `code`, `nextAction` and `details.package` of whatever an executor threw, when strings. */
function thrownFields(error) {
  try {
    const text = (v) => (typeof v === 'string' ? v : undefined);
    return error !== null && (typeof error === 'object' || typeof error === 'function')
      ? [text(error.code), text(error.nextAction), text(error.details?.package)]
      : [undefined, undefined, undefined];
  } catch {
    return [undefined, undefined, undefined];
  }
}

/**
 * Runs the host component a pending call waits for. The first of its answer, the deadline, the
 * caller's abort and close() (for `active` calls) settles the call; the component's own signal is
 * aborted in the last three and a late answer is discarded. Every outcome is judged by the engine.
 */
function runHost(pending, invoke, { signal, active, timeoutCode, prepare, issued } = {}) {
  return new Promise((resolve, reject) => {
    const controller = new AbortController();
    let settled = false;
    let timer;
    const settle = (abortComponent, fn) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      active?.delete(entry);
      if (abortComponent) controller.abort();
      fn();
    };
    const fail = (code, action, pkg) => settle(true, () => reject(failure(pending.fail(code, action, pkg))));
    const onAbort = () => fail('CG_MODEL_CANCELLED');
    const entry = { close: () => settle(true, () => reject(new GraphError({ code: 'CG_GRAPH_CLOSED' }))) };
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    if (pending.timeoutMs != null) timer = setTimeout(() => fail(timeoutCode), pending.timeoutMs);
    active?.add(entry);
    let answer;
    try {
      answer = invoke(JSON.parse(pending.request), controller.signal);
    } catch (error) {
      return fail(...thrownFields(error));
    }
    Promise.resolve(answer)
      .then(async (output) => {
        await prepare?.();
        return output;
      })
      .then(
        (output) =>
          settle(false, () => {
            try {
              resolve(unwrap(pending.finish(toWireJson(output))));
            } catch (error) {
              reject(error);
            }
          }),
        // An error the engine itself raised during the call (issued) travels unchanged.
        (error) => (issued?.has(error) ? settle(true, () => reject(error)) : fail(...thrownFields(error))),
      );
  });
}

/**
 * Asks the host's readers for one URL document: the first reader whose canRead accepts it
 * reads it. What comes back is passed to the engine unjudged; the engine validates it.
 */
async function askReaders(readers, request, bodies) {
  const answer = { key: request.key };
  const failed = (error) => ({ ...answer, kind: 'failed', code: typeof error?.code === 'string' ? error.code : null });
  for (const reader of readers) {
    let accepts;
    try {
      accepts = reader.canRead(request.ref) === true;
    } catch (error) {
      return failed(error);
    }
    if (!accepts) continue;
    let out;
    try {
      out = await reader.read(request.ref, { providerId: request.providerId, staticRevision: request.staticRevision }, { maxBytes: request.maxBytes });
    } catch (error) {
      return failed(error);
    }
    const field = (name) => {
      try {
        return typeof out?.[name] === 'string' ? out[name] : null;
      } catch {
        return null;
      }
    };
    let buffer = null;
    if (out?.bytes instanceof Uint8Array) buffer = bodies.push(Buffer.from(out.bytes.buffer, out.bytes.byteOffset, out.bytes.byteLength)) - 1;
    return { ...answer, kind: 'body', buffer, contentType: field('contentType'), contentId: field('contentId'), source: field('source') };
  }
  return { ...answer, kind: 'none' };
}

/** Rounds of host reads a call may need: documents can only be added by a reload in between. */
const MAX_READ_ROUNDS = 4;

/**
 * Runs an engine call that may need the host's readers for URL documents: `send(answers,
 * bodies)` answers the result, or `?` + the reads it still needs, which the readers answer for
 * the next round.
 */
async function withReaders(send, readers, phase) {
  const answers = [];
  const bodies = [];
  for (let round = 0; round < MAX_READ_ROUNDS; round++) {
    const text = await call(() => send(answers.length ? JSON.stringify(answers) : undefined, bodies));
    if (text[0] !== '?') return unwrap(text);
    for (const request of JSON.parse(text.slice(1))) answers.push(await askReaders(readers, request, bodies));
  }
  throw new GraphError({ code: 'CG_INTERNAL', phase });
}

/** Asks a pending host call `question` (JSON text); the engine may need the host's readers. */
const askEngine = (pending, question, readers) =>
  withReaders((answers, bodies) => pending.ask(question, answers, bodies), readers, 'query');

/**
 * The `access` a knowledge retriever receives: reads of its targets through the engine, which
 * checks each target and records the content it served. It expires when the retriever settles;
 * `prepare` waits for reads in flight and has the engine read every target not read yet.
 */
function knowledgeAccess(pending, readers) {
  const inFlight = new Set();
  const issued = new WeakSet();
  let unread;
  // What the engine raises here reaches the caller unchanged if the retriever rethrows it.
  const engine = (question) =>
    askEngine(pending, question, readers).catch((error) => {
      if (error instanceof GraphError) issued.add(error);
      throw error;
    });
  const ask = (question) => {
    const promise = engine(question);
    inFlight.add(promise);
    promise.then(
      () => inFlight.delete(promise),
      () => inFlight.delete(promise),
    );
    return promise;
  };
  const question = (op, target, extra) => `{"op":"${op}","target":${toWireJson(target === undefined ? null : target)},${JSON.stringify(extra).slice(1)}`;
  const api = Object.freeze({
    async read(target, budget) {
      const out = await ask(question('read', target, { maxBytes: budget?.maxBytes ?? null }));
      return { bytes: new Uint8Array(Buffer.from(out.text, 'utf8')), contentType: out.contentType, contentId: out.contentId, source: out.source };
    },
    async scan(target, consume, options) {
      if (typeof consume !== 'function') throw inputInvalid('consume', { phase: 'query', expected: 'function' });
      const signal = options?.signal;
      if (signal !== undefined && !(signal instanceof AbortSignal)) throw inputInvalid('options.signal', { phase: 'query', expected: 'AbortSignal' });
      const chunkBytes = options?.chunkBytes ?? null;
      const out = await ask(question('scan', target, { chunkBytes }));
      // Chunks of at most chunkBytes, cut on character boundaries, in order.
      for (let offset = 0; offset < out.totalBytes; ) {
        signal?.throwIfAborted();
        const chunk = await ask(question('chunk', target, { chunkBytes, offset }));
        await consume(new Uint8Array(Buffer.from(chunk.text, 'utf8')), offset);
        offset = chunk.end;
      }
      return { contentId: out.contentId, totalBytes: out.totalBytes, contentType: out.contentType, source: out.source };
    },
  });
  return {
    api,
    issued,
    expire: () => {
      unread = unwrap(call(() => pending.expire())).unread;
    },
    prepare: async () => {
      await Promise.allSettled([...inFlight]);
      if (unread === 0) return; // every target was read while the retriever ran
      await engine('{"op":"rest"}');
    },
  };
}

/** Pages the engine asks a database adapter for at a time. */
const DATABASE_PAGE = { limit: 100, maxBytes: 262_144 };
const NEIGHBOR_KINDS = require('./engine-tables.cjs').neighborKinds;

/**
 * Every page of a paged adapter call. A page over its limit, or a cursor seen before (a loop
 * that would never end), breaks the contract.
 */
async function allPages(fetch) {
  const items = [];
  const seen = new Set();
  let cursor;
  for (;;) {
    const page = await fetch(cursor);
    if (page === null || typeof page !== 'object' || !Array.isArray(page.items) || page.items.length > DATABASE_PAGE.limit) {
      throw { code: 'CG_ADAPTER_CONTRACT_INVALID' };
    }
    items.push(...page.items);
    if (page.nextCursor === undefined || page.nextCursor === null) return items;
    if (typeof page.nextCursor !== 'string' || seen.has(page.nextCursor)) throw { code: 'CG_ADAPTER_CONTRACT_INVALID' };
    seen.add(page.nextCursor);
    cursor = page.nextCursor;
  }
}

/**
 * Reads one provider whole from a database authority: the provider record, every capability
 * record (scan order), and each capability's eight relation streams. The engine validates all
 * of it; a failure travels as its `code` only.
 */
async function readDatabase(adapter, providerId) {
  let view;
  try {
    view = await adapter.openView(providerId);
    const capabilities = await allPages((cursor) => view.scanCapabilities({ ...DATABASE_PAGE, ...(cursor ? { cursor } : {}) }));
    const streams = {};
    for (const record of capabilities) {
      const id = record?.capabilityId;
      if (typeof id !== 'string') continue;
      streams[id] = {};
      for (const kind of NEIGHBOR_KINDS) {
        streams[id][kind] = await allPages((cursor) => view.neighbors(id, kind, { limit: DATABASE_PAGE.limit, ...(cursor ? { cursor } : {}) }));
      }
    }
    return { provider: view.provider, sourceRevision: view.sourceRevision, knowledgeRootDir: view.knowledgeRootDir, capabilities, streams };
  } catch (error) {
    return { failed: { code: thrownFields(error)[0] ?? null } };
  } finally {
    try {
      await view?.close?.();
    } catch {
      // Releasing a view cannot change what was read.
    }
  }
}

/** Reads the database authorities `sources` ([{ providerId, handle }]) for the engine (JSON). */
async function readDatabases(sources, hosts) {
  if (sources.length === 0) return undefined;
  const reads = {};
  for (const { providerId, handle } of sources) reads[providerId] = await readDatabase(hosts.all[handle], providerId);
  return toWireJson(reads);
}

// An omitted argument means {}; null is never "omitted".
const wire = (query) => toWireJson(query === undefined ? {} : query);
const wirePair = (first, second) => `[${wire(first)},${wire(second)}]`;

/** Query verbs taking one query object. */
const UNARY_VERBS = [
  'resolve',
  'listProviders',
  'listCatalog',
  'listSpecificationDocuments',
  'listKnowledgeMembers',
  'resolveSelection',
];
/** Body reads: one query object, run off the JS thread. */
const READ_VERBS = ['readDocuments', 'readSpecification', 'readDocumentPage', 'readSpecificationPage'];
/** Query verbs taking a target and a query object (getProvider's target is the bound provider). */
const BINARY_VERBS = ['getCapabilities', 'getNeighbors'];

class CapabilityGraph {
  #native;
  #hosts;
  /** Matches waiting for the host's executor; close() ends them. */
  #active = new Set();

  /** @internal Use `CapabilityGraph.open()`. */
  constructor(token, nativeGraph, hosts) {
    if (token !== CONSTRUCT) throw inputInvalid('constructor');
    this.#native = nativeGraph;
    this.#hosts = hosts;
  }

  /** Validates the config, loads every provider and resolves the open graph. */
  static async open(config) {
    const hosts = newHosts();
    const wired = wireConfig(config, hosts);
    // Database authorities are read whole before the engine loads them (config errors first).
    hosts.databases = unwrap(call(native.databaseSources, wired));
    const opened = await call(native.open, wired, await readDatabases(hosts.databases, hosts));
    if (typeof opened === 'string') unwrap(opened);
    return new CapabilityGraph(CONSTRUCT, opened, hosts);
  }

  /** A facade bound to one provider: local capability IDs, no request scope. */
  forProvider(providerId) {
    const id = unwrap(call(() => this.#native.checkBound(toWireJson(providerId))));
    return new BoundProviderGraph(CONSTRUCT, this, id);
  }

  static {
    runQuery = (graph, verb, args, providerId) => unwrap(call(() => graph.#native.query(verb, args, providerId)));
    runRead = (graph, verb, args, providerId) =>
      withReaders((answers, bodies) => graph.#native.read(verb, args, providerId, answers, bodies), graph.#hosts.readers, 'document');
    runHosted = async (graph, verb, query, providerId) => {
      let signal;
      const args = toWireJson(query === undefined ? {} : query, (value, path) => {
        if (verb !== 'match' || path.length !== 1 || path[0] !== 'signal' || !(value instanceof AbortSignal)) return undefined;
        signal = value;
        return JSON.stringify({ [HOST_KEY]: 'signal' });
      });
      const started = call(() => graph.#native.start(verb, args, providerId));
      if (typeof started === 'string') return unwrap(started);
      const hosts = graph.#hosts;
      const [kind, runtimeProvider] = started.host.split(':');
      if (kind === 'executor') {
        const executor = hosts.executor;
        return runHost(started, (request, own) => executor.match(request, { signal: own }), {
          signal,
          active: graph.#active,
          timeoutCode: 'CG_MODEL_TIMEOUT',
        });
      }
      // close() settles every pending component call.
      const active = graph.#active;
      if (kind === 'capabilityRetriever') {
        return runHost(started, (request, own) => hosts.capabilityRetriever.retrieve(request, { signal: own }), { active });
      }
      if (kind === 'knowledgeRetriever') {
        const access = knowledgeAccess(started, hosts.readers);
        const invoke = (request) => Promise.resolve().then(() => hosts.knowledgeRetriever.retrieve(request, access.api)).finally(access.expire);
        return runHost(started, invoke, { active, prepare: access.prepare, issued: access.issued });
      }
      const adapter = hosts.runtime.get(runtimeProvider);
      // A runtime adapter past its deadline is no longer awaited, never cancelled.
      return runHost(started, (request) => adapter.query(request), { active });
    };
  }

  /** Re-reads providers; resolves a report, never rejects for a provider's failure. */
  async reload(options) {
    const only = options !== null && typeof options === 'object' && typeof options.providerId === 'string' ? options.providerId : undefined;
    const sources = (this.#hosts.databases ?? []).filter((s) => only === undefined || s.providerId === only);
    const databases = this.#native.isClosed() ? undefined : await readDatabases(sources, this.#hosts);
    return unwrap(await call(() => this.#native.reload(wire(options), databases)));
  }

  /** Turns an intent into capabilities with the configured executor. */
  async match(query) {
    return runHosted(this, 'match', query);
  }

  /** Idempotent; never rejects. Matches still waiting for an executor reject CG_GRAPH_CLOSED. */
  async close() {
    for (const pending of [...this.#active]) pending.close();
    try {
      this.#native.close();
    } catch {
      // D13: failures while releasing are swallowed.
    }
  }

}

class BoundProviderGraph {
  #graph;

  /** @internal Use `graph.forProvider()`. */
  constructor(token, graph, providerId) {
    if (token !== CONSTRUCT) throw inputInvalid('constructor');
    this.#graph = graph;
    Object.defineProperty(this, 'providerId', { value: providerId, enumerable: true });
  }

  static {
    graphOf = (bound) => bound.#graph;
  }
}

// The verbs are the same on both classes; a bound facade passes its provider along.
for (const verb of UNARY_VERBS) {
  CapabilityGraph.prototype[verb] = async function (query) {
    return runQuery(this, verb, wire(query));
  };
  BoundProviderGraph.prototype[verb] = async function (query) {
    return runQuery(graphOf(this), verb, wire(query), this.providerId);
  };
}
for (const verb of READ_VERBS) {
  CapabilityGraph.prototype[verb] = async function (query) {
    return runRead(this, verb, wire(query));
  };
  BoundProviderGraph.prototype[verb] = async function (query) {
    return runRead(graphOf(this), verb, wire(query), this.providerId);
  };
}
for (const verb of BINARY_VERBS) {
  CapabilityGraph.prototype[verb] = async function (target, query) {
    return runQuery(this, verb, wirePair(target, query));
  };
  BoundProviderGraph.prototype[verb] = async function (target, query) {
    return runQuery(graphOf(this), verb, wirePair(target, query), this.providerId);
  };
}

BoundProviderGraph.prototype.match = async function (query) {
  return runHosted(graphOf(this), 'match', query, this.providerId);
};
// Verbs served by the host's retrievers and runtime adapters.
for (const verb of ['retrieveCapabilities', 'queryKnowledge', 'queryRuntime']) {
  CapabilityGraph.prototype[verb] = async function (query) {
    return runHosted(this, verb, query);
  };
  BoundProviderGraph.prototype[verb] = async function (query) {
    return runHosted(graphOf(this), verb, query, this.providerId);
  };
}

CapabilityGraph.prototype.getProvider = async function (providerId, query) {
  return runQuery(this, 'getProvider', wirePair(providerId, query));
};
// A bound facade's provider is its binding.
BoundProviderGraph.prototype.getProvider = async function (query) {
  return runQuery(graphOf(this), 'getProvider', wirePair(this.providerId, query), this.providerId);
};

function parseQualifiedId(value) {
  return unwrap(call(native.parseQualifiedId, toWireJson(value)));
}

function formatQualifiedId(value) {
  return unwrap(call(native.formatQualifiedId, toWireJson(value)));
}

/** @internal Verbs the CLI uses that are not part of the public surface (export, checkDocuments). */
const internal = { query: (graph, verb, query) => runQuery(graph, verb, wire(query)) };

module.exports = { CapabilityGraph, BoundProviderGraph, parseQualifiedId, formatQualifiedId, lexicalExecutor, internal };
