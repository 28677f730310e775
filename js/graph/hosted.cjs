'use strict';
// The verbs a host component serves: match (the engine's lexical or semantic executor, or the
// host's), retrieveCapabilities, queryKnowledge (with reads through the engine) and queryRuntime.
// The engine starts each call and judges its answer; the component runs here, bounded.

const { unwrap, failure, call } = require('../engine/native.cjs');
const { GraphError, inputInvalid } = require('../errors.cjs');
const { toWireJson, ownValue, ARGUMENTS } = require('../pure-json.cjs');
const { POOL_VERBS, TIMED_OUT, CLOSED, bounded, closedError, runHost, wireQuery } = require('./host-calls.cjs');
const { askEngine, ownField } = require('./readers.cjs');

/** What a host embedder gave for `texts`: `{ vectors }` (its Float32Array), `{ failure }` when
 *  it threw (`threw`), missed `timeoutMs` (`timeout`) or gave anything else (none: the engine
 *  judges that as it judges the vectors' length and values), or CLOSED after close(). */
async function embedWith(embedder, texts, { timeoutMs, signal, active }) {
  try {
    const out = await bounded((own) => embedder.embed(texts, { signal: own }), { timeoutMs, signal, active });
    return out instanceof Float32Array ? { vectors: out } : {};
  } catch (error) {
    if (error === CLOSED) return CLOSED;
    return { failure: error === TIMED_OUT ? 'timeout' : 'threw' };
  }
}

/**
 * The `access` a knowledge retriever receives: reads of its targets through the engine, which
 * checks each target and records the content it served. Each read or scan is numbered as it
 * starts; when the retriever settles the engine is told how many started, so those may still
 * finish (the answer waits for them in `prepare`, at most the reader deadline) while any started
 * later expires. `prepare` then has the engine read every target not read yet. `close()` of the
 * graph rejects the operations still in flight with CG_GRAPH_CLOSED. `signal` is the
 * retriever's own, aborted when its call is settled without its answer.
 */
function knowledgeAccess(pending, readers, active) {
  const inFlight = new Set();
  // What the engine raises here, as it raised it: a retriever rethrowing it gets the caller the
  // engine's copy, never the object the retriever may have changed.
  const issued = new WeakMap();
  let unread;
  let readerTimeoutMs;
  // Whether a scan was handed on while a reader streamed it (its hits are checked at their ranges).
  let streamedScan = false;
  let started = 0;
  let closed = false;
  const closing = new Set();
  // Ends the operations still in flight with `error`; they ask the engine nothing more.
  const stop = (error) => {
    closed = true;
    for (const reject of [...closing]) reject(error);
  };
  const entry = {
    close: () => {
      active.delete(entry);
      stop(closedError());
    },
  };
  const engine = (question, consume) =>
    askEngine(pending, question, readers, active, consume).catch((error) => {
      if (error instanceof GraphError) issued.set(error, JSON.stringify(error.toJSON()));
      throw error;
    });
  const question = (op, target, extra) => `{"op":"${op}","target":${toWireJson(target === undefined ? null : target)},${toWireJson(extra).slice(1)}`;
  const operation = (run) => {
    const id = ++started;
    let reject;
    const promise = new Promise((resolve, fail) => {
      reject = fail;
      // After close() the operation has already been rejected; it asks nothing more.
      const ask = (op, target, extra, consume) => (closed ? new Promise(() => {}) : engine(question(op, target, { ...extra, operation: id }), consume));
      run(ask).then(resolve, fail);
    });
    closing.add(reject);
    inFlight.add(promise);
    active.add(entry);
    const done = () => {
      closing.delete(reject);
      inFlight.delete(promise);
      if (inFlight.size === 0) active.delete(entry);
    };
    promise.then(done, done);
    return promise;
  };
  const api = (signal) => Object.freeze({
    signal,
    read(target, budget) {
      return operation(async (ask) => {
        const maxBytes = budget === undefined ? { value: undefined } : ownValue(budget, 'maxBytes');
        if (maxBytes === undefined) throw inputInvalid('budget', { phase: 'query', expected: '{ maxBytes? }' });
        const out = await ask('read', target, { maxBytes: maxBytes.value ?? null });
        return { bytes: new Uint8Array(Buffer.from(out.text, 'utf8')), contentType: out.contentType, contentId: out.contentId, source: out.source };
      });
    },
    scan(target, consume, options) {
      return operation(async (ask) => {
        if (typeof consume !== 'function') throw inputInvalid('consume', { phase: 'query', expected: 'function' });
        const read = (key) => (options === undefined ? { value: undefined } : ownValue(options, key));
        const [signalOption, chunkOption] = [read('signal'), read('chunkBytes')];
        if (signalOption === undefined || chunkOption === undefined) throw inputInvalid('options', { phase: 'query', expected: '{ signal?, chunkBytes? }' });
        const signal = signalOption.value;
        if (signal !== undefined && !(signal instanceof AbortSignal)) throw inputInvalid('options.signal', { phase: 'query', expected: 'AbortSignal' });
        const chunkBytes = chunkOption.value ?? null;
        // Chunks of at most chunkBytes, cut on character boundaries, in order: handed on while
        // a reader streams the document, else asked for one by one.
        let streamedTo = 0;
        const handOn = async (bytes) => {
          signal?.throwIfAborted();
          await consume(bytes, streamedTo);
          streamedTo += bytes.byteLength;
        };
        const out = await ask('scan', target, { chunkBytes }, handOn);
        streamedScan ||= out.streamed;
        if (out.streamed) return { contentId: out.contentId, totalBytes: out.totalBytes, contentType: out.contentType, source: out.source };
        for (let offset = 0; offset < out.totalBytes; ) {
          signal?.throwIfAborted();
          const chunk = await ask('chunk', target, { chunkBytes, offset });
          await consume(new Uint8Array(Buffer.from(chunk.text, 'utf8')), offset);
          offset = chunk.end;
        }
        return { contentId: out.contentId, totalBytes: out.totalBytes, contentType: out.contentType, source: out.source };
      });
    },
  });
  return {
    api,
    issued,
    expire: () => {
      ({ unread, readerTimeoutMs } = unwrap(call(() => pending.expire(started))));
    },
    prepare: async (answer) => {
      // Reads the retriever started but did not await get the reader deadline to finish; past
      // it the retriever's call fails like one past its own deadline.
      if (inFlight.size > 0) {
        try {
          await bounded(() => Promise.allSettled([...inFlight]), { timeoutMs: readerTimeoutMs });
        } catch (error) {
          if (error === TIMED_OUT) stop(failure(pending.fail()));
          throw error;
        }
      }
      // The engine reads every target the retriever did not read, if any.
      const rest = unread === 0 ? { ranges: streamedScan } : await engine('{"op":"rest"}');
      // Hits in documents streamed without being held are checked at their ranges, streamed again.
      // (The walk is bounded: past it no range is read and the answer's own checks refuse it.)
      if (rest.ranges) await engine(`{"op":"ranges","hits":${toWireJson(ownField(answer, 'hits') ?? null, undefined, ARGUMENTS)}}`);
    },
  };
}

/**
 * Runs `verb` for the graph whose engine handle is `graph`, with its host objects (`hosts`), its
 * pending calls (`active`) and its embedding run (`embed()`, which resolves when it stops).
 */
async function runHosted({ native: graph, hosts, active, embed }, verb, query, providerId) {
  // A build whose last batch failed starts again before the match waits for it.
  if (verb === 'match') embed();
  const [args, signal] = wireQuery(query, verb === 'match');
  const started = POOL_VERBS.has(verb) ? await call(() => graph.startOnPool(verb, args, providerId)) : call(() => graph.start(verb, args, providerId));
  if (typeof started === 'string') return unwrap(started);
  // close() while the engine prepared the call: no host component is called any more.
  if (graph.isClosed()) throw closedError();
  const [kind, runtimeProvider] = started.host.split(':');
  if (kind === 'lexical') {
    // The engine ranks on the pool (after the snapshot's index is built); the call is held
    // to the same deadline, signal and close() as a host's executor. A ranking no longer
    // awaited still finishes, and so does the index build it waited for.
    return runHost(started, () => call(() => started.run()), { signal, active, timeoutCode: 'CG_MODEL_TIMEOUT', answered: true });
  }
  if (kind === 'semantic') {
    const request = JSON.parse(started.request);
    // The engine embeds the intent and scores on its own fixed pool once every capability
    // vector is built (a full queue answers encoder_busy at once); with a host embedder the
    // intent is embedded here first, within match.embedTimeoutMs, and scored on the libuv pool.
    return runHost(
      started,
      async (_, own) => {
        if (request.embed === undefined) return call(() => started.runQueued());
        const embedded = await embedWith(hosts.embedder, request.embed, { timeoutMs: request.timeoutMs, signal: own, active });
        if (embedded === CLOSED) throw CLOSED;
        await embed();
        return call(() => started.runWith(embedded.vectors, embedded.failure));
      },
      { signal, active, timeoutCode: 'CG_MODEL_TIMEOUT', answered: true },
    );
  }
  if (kind === 'executor') {
    const executor = hosts.executor;
    return runHost(started, (request, own) => executor.match(request, { signal: own }), { signal, active, timeoutCode: 'CG_MODEL_TIMEOUT' });
  }
  // close() settles every pending component call.
  if (kind === 'capabilityRetriever') {
    return runHost(started, (request, own) => hosts.capabilityRetriever.retrieve(request, { signal: own }), { active });
  }
  if (kind === 'knowledgeRetriever') {
    const access = knowledgeAccess(started, hosts.readers, active);
    const invoke = (request, own) => Promise.resolve().then(() => hosts.knowledgeRetriever.retrieve(request, access.api(own))).finally(access.expire);
    return runHost(started, invoke, { active, prepare: access.prepare, issued: access.issued });
  }
  const adapter = hosts.runtime.get(runtimeProvider);
  // A runtime adapter past its deadline is no longer awaited, never cancelled.
  return runHost(started, (request) => adapter.query(request), { active });
}

module.exports = { embedWith, runHosted };
