'use strict';
// The public classes. Each verb prints its argument as JSON (the pure-JSON walk), calls the
// engine once and parses one JSON answer; every failure rejects with a GraphError.

const { native, unwrap, call } = require('../engine/native.cjs');
const { GraphError, inputInvalid } = require('../errors.cjs');
const { toWireJson, ARGUMENTS } = require('../pure-json.cjs');
const { readConfig, reloadTarget } = require('./config.cjs');
const { loadConfigFile } = require('./config-file.cjs');
const { readDatabases } = require('./databases.cjs');
const { POOL_VERBS, CLOSED, closedError } = require('./host-calls.cjs');
const { readBodies } = require('./readers.cjs');
const { embedWith, runHosted: runHostedOn } = require('./hosted.cjs');
const { keepSubscribed, watchFiles } = require('./watch.cjs');

const CONSTRUCT = Symbol('construct');
// Set in the class bodies, where the private fields they read are visible.
let runQuery;
let runRead;
let runHosted;
let graphOf;
let isGraph;
let isBound;
let nativeOf;
let embedding;

/** The error of `verb` called on something that is not its graph (a detached method). */
const notAGraph = (verb) => GraphError.fromJSON(native.receiverInvalid(verb));

// An omitted argument means {}; null is never "omitted".
const wire = (query) => (query === undefined ? '{}' : toWireJson(query, undefined, ARGUMENTS));
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
  /** Calls waiting for a host component (executor, retrievers, adapters, readers, databases);
   *  close() settles them, and marks the set `closed`: no component is called after it. */
  #active = Object.assign(new Set(), { closed: false });
  /** The reload running now (reloads are serial: read, validate, publish). */
  #reloading = Promise.resolve();
  /** What `on('reload')` registered, called in that order. */
  #listeners = new Set();
  /** Aborted by close(): every watch stops. */
  #watching = new AbortController();
  /** The providers a watch asked to reload whose reload has not started yet. */
  #queued = new Set();
  /** The host embedder's run over the batches the engine hands out, while one runs. */
  #embedding = null;

  /** @internal Use `CapabilityGraph.open()`. */
  constructor(token, nativeGraph, hosts) {
    if (token !== CONSTRUCT) throw inputInvalid('constructor');
    this.#native = nativeGraph;
    this.#hosts = hosts;
  }

  /** Validates the config, loads every provider and resolves the open graph. */
  static async open(config) {
    const { wired, hosts, databases } = await readConfig(config);
    const opened = await call(native.open, wired, databases);
    if (typeof opened === 'string') unwrap(opened);
    const graph = new CapabilityGraph(CONSTRUCT, opened, hosts);
    graph.#watch();
    graph.#embed();
    return graph;
  }

  /** Opens the command line's config file as its graph commands do (the `mcp` block ignored). */
  static async openConfigFile(file) {
    if (typeof file !== 'string' || file === '') throw inputInvalid('path', { phase: 'config' });
    const { config } = await loadConfigFile(file);
    return CapabilityGraph.open(config);
  }

  /** Subscribes the watch of every watched provider: a change reloads that provider. */
  #watch() {
    const { watches, watch: timings } = this.#hosts.databases;
    const signal = this.#watching.signal;
    for (const { providerId, kind, handle, rootDir } of watches) {
      const subscribe =
        kind === 'file'
          ? watchFiles(rootDir, timings.debounceMs)
          : (notify, own) => this.#hosts.all[handle].watch(providerId, notify, { signal: own });
      const lost = () => this.#emit({ providerId, ok: false, trigger: 'watch', error: GraphError.fromJSON(native.watchFailed(providerId)) });
      keepSubscribed(subscribe, { changed: () => this.#changed(providerId), lost, timings, signal }).catch(() => {});
    }
  }

  /** A watch says `providerId` may have changed: its reload is queued unless one already
   *  waits (that one reads the latest state), so a burst costs one reload running and at most
   *  one queued. Reloads stay serial with the host's own. */
  #changed(providerId) {
    if (this.#active.closed || this.#queued.has(providerId)) return;
    this.#queued.add(providerId);
    const turn = this.#reloading.then(() => {
      this.#queued.delete(providerId);
      // close() drops the reloads still queued.
      if (this.#active.closed) return undefined;
      return this.#reloadNow(JSON.stringify({ providerId }), 'watch');
    });
    this.#reloading = turn.then(
      () => {},
      () => {},
    );
    turn.catch((error) => {
      if (this.#active.closed) return;
      this.#emit({ providerId, ok: false, trigger: 'watch', error: error instanceof GraphError ? error : new GraphError({ code: 'CG_INTERNAL', phase: 'load' }) });
    });
  }

  /** Tells every listener; what a listener throws or rejects with stays with it. */
  #emit(event) {
    Object.freeze(event);
    for (const listener of [...this.#listeners]) {
      try {
        const out = listener(event);
        if (out !== null && typeof out === 'object' && typeof out.then === 'function') out.then(undefined, () => {});
      } catch {
        // A listener's failure is its own.
      }
    }
  }

  /** Reports each provider's entry of a reload to the listeners. */
  #report(result, trigger) {
    if (this.#listeners.size === 0) return;
    for (const entry of result.providers) {
      const own = JSON.parse(JSON.stringify(entry));
      this.#emit({
        providerId: own.providerId,
        ok: own.ok,
        trigger,
        entry: own,
        ...(own.error === undefined ? {} : { error: GraphError.fromJSON(JSON.stringify(own.error)) }),
      });
    }
  }

  /** Calls `listener(event)` after every reload of a provider (the host's or a watch's) and
   *  when a watch is lost. Returns the graph. */
  on(event, listener) {
    if (!isGraph(this)) throw notAGraph('on');
    checkListener(event, listener);
    if (this.#active.closed) throw closedError();
    this.#listeners.add(listener);
    return this;
  }

  /** Removes a listener `on` added. Returns the graph. */
  off(event, listener) {
    if (!isGraph(this)) throw notAGraph('off');
    checkListener(event, listener);
    this.#listeners.delete(listener);
    return this;
  }

  /**
   * Embeds, with the host's embedder, the capability texts the engine hands out, a batch at a
   * time, each within `match.embedTimeoutMs`; the engine judges every answer. Stops when no
   * batch is left, after a failed batch (the next match starts again) or at close(). Resolves
   * when it stops; never rejects.
   */
  #embed() {
    const embedder = this.#hosts.embedder;
    if (embedder === undefined || this.#native.isClosed()) return Promise.resolve();
    if (this.#embedding !== null) return this.#embedding;
    const active = this.#active;
    const run = async () => {
      for (;;) {
        if (active.closed) return;
        const claimed = this.#native.claimEmbedBatch();
        if (claimed == null) return;
        const { batch, texts, timeoutMs } = JSON.parse(claimed);
        const embedded = await embedWith(embedder, texts, { timeoutMs, active });
        if (embedded === CLOSED || this.#native.putEmbedBatch(batch, embedded.vectors, embedded.failure) != null) return;
      }
    };
    this.#embedding = run()
      .catch(() => {})
      .finally(() => {
        this.#embedding = null;
      });
    return this.#embedding;
  }

  /** A facade bound to one provider: local capability IDs, no request scope. */
  forProvider(providerId) {
    if (!isGraph(this)) throw notAGraph('forProvider');
    const id = unwrap(call(() => this.#native.checkBound(toWireJson(providerId, undefined, ARGUMENTS))));
    return new BoundProviderGraph(CONSTRUCT, this, id);
  }

  static {
    // A brand check: true only for a graph this class made (never for a Proxy of one).
    isGraph = (value) => value !== null && typeof value === 'object' && #native in value;
    nativeOf = (graph) => graph.#native;
    embedding = (graph) => graph.#embed();
    runQuery = (graph, verb, args, providerId) => {
      if (!isGraph(graph)) throw notAGraph(verb);
      // Work that grows with the graph runs on the pool; a page's worth answers right here.
      if (POOL_VERBS.has(verb)) return call(() => graph.#native.queryOnPool(verb, args, providerId)).then(unwrap);
      return unwrap(call(() => graph.#native.query(verb, args, providerId)));
    };
    // What the modules that run a graph's calls need of it.
    const parts = (graph) => ({ native: graph.#native, hosts: graph.#hosts, active: graph.#active, embed: () => graph.#embed() });
    runRead = async (graph, verb, query, providerId) => {
      if (!isGraph(graph)) throw notAGraph(verb);
      return readBodies(parts(graph), verb, query, providerId);
    };
    runHosted = async (graph, verb, query, providerId) => {
      if (!isGraph(graph)) throw notAGraph(verb);
      return runHostedOn(parts(graph), verb, query, providerId);
    };
  }

  /** Re-reads providers; resolves a report, never rejects for a provider's failure. One reload
   *  runs at a time, from its reads to its publication, so the last one started publishes last. */
  async reload(options) {
    if (!isGraph(this)) throw notAGraph('reload');
    // The options are read once, by the pure-JSON walk; the engine judges them. Like a config,
    // they may carry whole inline definitions: the arguments' bound does not apply.
    const args = options === undefined ? '{}' : toWireJson(options);
    const turn = this.#reloading.then(() => this.#reloadNow(args));
    this.#reloading = turn.then(
      () => {},
      () => {},
    );
    return turn;
  }

  async #reloadNow(args, trigger = 'reload') {
    const only = reloadTarget(args);
    const { sources, budgets } = this.#hosts.databases;
    const chosen = sources.filter((s) => only === undefined || s.providerId === only);
    // The engine's collector for this reload knows what each current snapshot was read from.
    const databases = this.#native.isClosed()
      ? new native.NativeDatabaseReads()
      : await readDatabases(chosen, this.#hosts, budgets, this.#active, call(() => this.#native.databaseReads(args, JSON.stringify(budgets))));
    const result = unwrap(await call(() => this.#native.reload(args, databases)));
    this.#report(result, trigger);
    this.#embed();
    return result;
  }

  /** Turns an intent into capabilities with the configured executor. */
  async match(query) {
    return runHosted(this, 'match', query);
  }

  /** What became of each provider's precomputed vectors (its vectors file or its database
   *  view's `vectors()`): `{ providers: [{ providerId, vectors }] }`. */
  async status() {
    if (!isGraph(this)) throw notAGraph('status');
    return unwrap(call(() => this.#native.status()));
  }

  /** The engine's own accounting of the memory its snapshots keep, for benchmarks: `{ providers:
   *  [{ providerId, capabilities, snapshotBytes, previousSnapshotBytes, lexicalIndexBytes }] }`
   *  (null where there is none). Not public API. */
  [Symbol.for('capability-graph.stats')]() {
    if (!isGraph(this)) throw notAGraph('stats');
    return unwrap(call(() => this.#native.stats()));
  }

  /** Idempotent; never rejects. Calls still waiting for a host component reject CG_GRAPH_CLOSED
   *  and the component's signal is aborted. */
  async close() {
    if (!isGraph(this)) return; // nothing to release (D13)
    this.#active.closed = true;
    this.#watching.abort();
    this.#queued.clear();
    this.#listeners.clear();
    for (const pending of [...this.#active]) pending.close();
    try {
      // Engine reads started before close() finish on their pins; the root handles are closed
      // now, or once they have finished (then close() resolves after them).
      const idle = this.#native.close();
      const released = this.#native.release();
      if (!idle) await released;
    } catch {
      // D13: failures while releasing are swallowed.
    }
  }

}

/** The events `on` and `off` take. */
const EVENTS = ['reload'];

function checkListener(event, listener) {
  if (!EVENTS.includes(event)) throw inputInvalid('event', { phase: 'lifecycle', expected: EVENTS.join(', ') });
  if (typeof listener !== 'function') throw inputInvalid('listener', { phase: 'lifecycle', expected: 'function' });
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
    isBound = (value) => value !== null && typeof value === 'object' && #graph in value;
    graphOf = (bound, verb) => {
      if (!isBound(bound)) throw notAGraph(verb);
      return bound.#graph;
    };
  }
}

// The verbs are the same on both classes; a bound facade passes its provider along.
for (const verb of UNARY_VERBS) {
  CapabilityGraph.prototype[verb] = async function (query) {
    return runQuery(this, verb, wire(query));
  };
  BoundProviderGraph.prototype[verb] = async function (query) {
    return runQuery(graphOf(this, verb), verb, wire(query), this.providerId);
  };
}
for (const verb of READ_VERBS) {
  CapabilityGraph.prototype[verb] = async function (query) {
    return runRead(this, verb, query);
  };
  BoundProviderGraph.prototype[verb] = async function (query) {
    return runRead(graphOf(this, verb), verb, query, this.providerId);
  };
}
for (const verb of BINARY_VERBS) {
  CapabilityGraph.prototype[verb] = async function (target, query) {
    return runQuery(this, verb, wirePair(target, query));
  };
  BoundProviderGraph.prototype[verb] = async function (target, query) {
    return runQuery(graphOf(this, verb), verb, wirePair(target, query), this.providerId);
  };
}

BoundProviderGraph.prototype.match = async function (query) {
  return runHosted(graphOf(this, 'match'), 'match', query, this.providerId);
};
// Verbs served by the host's retrievers and runtime adapters.
for (const verb of ['retrieveCapabilities', 'queryKnowledge', 'queryRuntime']) {
  CapabilityGraph.prototype[verb] = async function (query) {
    return runHosted(this, verb, query);
  };
  BoundProviderGraph.prototype[verb] = async function (query) {
    return runHosted(graphOf(this, verb), verb, query, this.providerId);
  };
}

CapabilityGraph.prototype.getProvider = async function (providerId, query) {
  return runQuery(this, 'getProvider', wirePair(providerId, query));
};
// A bound facade's provider is its binding.
BoundProviderGraph.prototype.getProvider = async function (query) {
  return runQuery(graphOf(this, 'getProvider'), 'getProvider', wirePair(this.providerId, query), this.providerId);
};

/** The entries of a vectors file (`capability-graph embed`'s `vectors/<model-id>.bin`), as a
 *  database view's `vectors()` pages give them: `{ modelId, dimensions, entries }`. */
function readVectorsFile(bytes) {
  let view;
  try {
    // ArrayBuffer.isView reads no Proxy trap; a getter that throws after it is refused alike.
    if (ArrayBuffer.isView(bytes)) view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  } catch {
    view = undefined;
  }
  if (view === undefined) throw inputInvalid('bytes', { phase: 'query', expected: 'Uint8Array' });
  return unwrap(call(native.vectorsFileEntries, view));
}

function parseQualifiedId(value) {
  return unwrap(call(native.parseQualifiedId, toWireJson(value, undefined, ARGUMENTS)));
}

function formatQualifiedId(value) {
  return unwrap(call(native.formatQualifiedId, toWireJson(value, undefined, ARGUMENTS)));
}

/** The graph and provider binding behind a graph or bound facade. */
const target = (graph, verb) => (isBound(graph) ? [graphOf(graph, verb), graph.providerId] : [graph, undefined]);

/** @internal What the CLI and the Tool Adapter use that is not part of the public surface. */
const internal = {
  query: (graph, verb, query) => runQuery(graph, verb, wire(query)),
  /** The vectors file of a provider's current snapshot once its vectors are built (waited for
   *  at most `timeoutMs`): `{ file, count, bytes }`. For `capability-graph embed`. */
  async vectorsFile(graph, providerId, timeoutMs) {
    if (!isGraph(graph)) throw notAGraph('vectorsFile');
    embedding(graph);
    const n = nativeOf(graph);
    const { file, count } = unwrap(await call(() => n.vectorsFile(providerId, timeoutMs)));
    return { file, count, bytes: n.takeVectorsFile() };
  },
  /** `{ match, retrieveCapabilities, queryKnowledge, queryRuntime }`: which verbs served by a
   *  host component can answer this graph or bound facade. */
  hostVerbs(graph) {
    const [g, providerId] = target(graph, 'hostVerbs');
    if (!isGraph(g)) throw notAGraph('hostVerbs');
    return unwrap(call(() => nativeOf(g).hostVerbs(providerId)));
  },
  /** A query verb answered on this thread, for a page's worth (the Tool Adapter's examples). */
  querySync(graph, verb, ...args) {
    const [g, providerId] = target(graph, verb);
    if (!isGraph(g)) throw notAGraph(verb);
    const wired = args.length === 2 ? wirePair(...args) : wire(args[0]);
    return unwrap(call(() => nativeOf(g).query(verb, wired, providerId)));
  },
  /** Every definition problem of each provider of `config` (what `open` stops at first). */
  async diagnose(config) {
    const { wired, databases } = await readConfig(config, { vectors: false });
    return unwrap(call(native.diagnose, wired, databases));
  },
};

module.exports = {
  CapabilityGraph,
  BoundProviderGraph,
  parseQualifiedId,
  readVectorsFile,
  formatQualifiedId,
  internal,
  isGraph: (value) => isGraph(value),
  isBound: (value) => isBound(value),
};
