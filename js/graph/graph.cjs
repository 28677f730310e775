'use strict';
// The public classes. Each verb prints its argument as JSON (the pure-JSON walk), calls the
// engine once and parses one JSON answer; every failure rejects with a GraphError.

const { native, unwrap, failure, call } = require('../engine/native.cjs');
const { GraphError, inputInvalid } = require('../errors.cjs');
const { toWireJson, ownValue, ARGUMENTS, HOST_KEY, NON_JSON_KEY } = require('../pure-json.cjs');
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

/** Markers made by lexicalExecutor(): the engine runs that executor itself. */
const LEXICAL = new WeakSet();

/** The built-in lexical executor, for `executor` in the open config. */
function lexicalExecutor(options) {
  const normalized = unwrap(call(native.lexicalOptions, toWireJson(options === undefined ? null : options)));
  const marker = Object.freeze({ id: 'lexical', options: Object.freeze(normalized) });
  LEXICAL.add(marker);
  return marker;
}

/** The model package's folder as the engine takes it: `{ dir }`, or `{ package }` to install
 *  (every match then fails CG_MODEL_UNAVAILABLE / check_config naming it). */
function modelSpec() {
  try {
    return { dir: require('../executors/model.cjs').resolveModel().dir };
  } catch (error) {
    if (error instanceof GraphError && error.code === 'CG_MODEL_UNAVAILABLE') return { package: error.details?.package ?? null };
    throw error;
  }
}

/** Markers made by semanticExecutor(), with the host embedder each was given (if any). */
const SEMANTIC = new WeakMap();

/** The semantic executor, for `executor` in the open config: the engine scores; vectors come
 *  from `embedder` (a host embedder, called on this thread in batches) or the first-party
 *  encoder of the optional model package. */
function semanticExecutor(options) {
  let embedder;
  const wired = toWireJson(options === undefined ? null : options, (value, path) => {
    if (path.length !== 1 || path[0] !== 'embedder') return undefined;
    embedder = value;
    return JSON.stringify({ [HOST_KEY]: 'embedder' });
  });
  const normalized = unwrap(call(native.semanticOptions, wired));
  const marker = Object.freeze({ id: 'semantic', options: Object.freeze(normalized) });
  SEMANTIC.set(marker, { embedder });
  return marker;
}

function wireConfig(config, hosts) {
  return toWireJson(config, (value, path) => {
    if (!atHostSlot(path)) return undefined;
    if (path[0] === 'executor' && LEXICAL.has(value)) {
      return JSON.stringify({ [HOST_KEY]: 'lexical', options: value.options });
    }
    if (path[0] === 'executor' && SEMANTIC.has(value)) {
      const { embedder } = SEMANTIC.get(value);
      const wired = { [HOST_KEY]: 'semantic', options: value.options };
      if (embedder === undefined) {
        // The first-party encoder: the engine loads it from the model package's folder.
        wired.model = modelSpec();
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

/** Why `bounded` stopped waiting for a host component (never a value a component can throw). */
const TIMED_OUT = Symbol('timedOut');
const CANCELLED = Symbol('cancelled');
const CLOSED = Symbol('closed');

/** What a host embedder gave for `texts`: its Float32Array, `null` when it threw, missed
 *  `timeoutMs`, was cancelled or gave anything else (the engine judges its length and values),
 *  or CLOSED after close(). */
async function embedWith(embedder, texts, { timeoutMs, signal, active }) {
  try {
    const out = await bounded((own) => embedder.embed(texts, { signal: own }), { timeoutMs, signal, active });
    return out instanceof Float32Array ? out : null;
  } catch (error) {
    return error === CLOSED ? CLOSED : null;
  }
}

/**
 * Calls a host component with an AbortSignal of its own: `invoke(signal)`. Settles with its
 * answer, or rejects with what the component threw, with TIMED_OUT past `timeoutMs`, with
 * CANCELLED when the caller's `signal` aborts, or with CLOSED when close() ends the `active`
 * calls. Unless the component answered, its signal is aborted; a late answer is discarded.
 * Every wait on host code goes through here, so every such wait settles.
 */
function bounded(invoke, { timeoutMs, signal, active } = {}) {
  return new Promise((resolve, reject) => {
    // After close() no host component is called any more.
    if (active?.closed) return reject(CLOSED);
    const controller = new AbortController();
    let settled = false;
    let timer;
    const settle = (ok, value) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      active?.delete(entry);
      if (!ok) controller.abort();
      (ok ? resolve : reject)(value);
    };
    const onAbort = () => settle(false, CANCELLED);
    const entry = { close: () => settle(false, CLOSED) };
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    if (timeoutMs != null) timer = setTimeout(() => settle(false, TIMED_OUT), timeoutMs);
    active?.add(entry);
    let answer;
    try {
      answer = invoke(controller.signal);
    } catch (error) {
      return settle(false, error);
    }
    Promise.resolve(answer).then(
      (value) => settle(true, value),
      (error) => settle(false, error),
    );
  });
}

const closedError = () => new GraphError({ code: 'CG_GRAPH_CLOSED' });
/** The engine's error for a page read its caller's signal aborted. */
const pageReadAborted = () => failure(native.pageReadAborted());

/**
 * Runs the host component a pending call waits for. The first of its answer, the deadline, the
 * caller's abort and close() (for `active` calls) settles the call; every outcome is judged by
 * the engine. `prepare` runs after the answer, still within the deadline. An error the engine
 * issued during the call (`issued`: error → its JSON) that comes back is replaced by the
 * engine's own copy, whatever the component changed on it.
 */
async function runHost(pending, invoke, { signal, active, timeoutCode, prepare, issued, answered } = {}) {
  const request = JSON.parse(pending.request);
  let output;
  try {
    output = await bounded(
      async (own) => {
        const answer = await invoke(request, own);
        await prepare?.(answer);
        return answer;
      },
      { timeoutMs: pending.timeoutMs, signal, active },
    );
  } catch (error) {
    if (error === CLOSED) throw closedError();
    if (error === CANCELLED) throw failure(pending.fail('CG_MODEL_CANCELLED'));
    if (error === TIMED_OUT) throw failure(pending.fail(timeoutCode));
    const issuedJson = issued?.get(error);
    if (issuedJson !== undefined) throw GraphError.fromJSON(issuedJson);
    throw failure(pending.fail(...thrownFields(error)));
  }
  // The engine's own answer (the lexical executor's) needs no judging.
  if (answered) return unwrap(output);
  // An answer is printed no further than the engine can accept it (the executor's
  // match.maxOutputBytes): past it the walk stops and the engine refuses the answer.
  const bound = pending.outputBound;
  return unwrap(pending.finish(toWireJson(output, undefined, bound == null ? undefined : { maxChars: bound })));
}

/**
 * Asks the host's readers for one URL document: the first reader whose canRead accepts it
 * reads it, within `request.timeoutMs` (`read.readerTimeoutMs`); past it the document is
 * unreadable. What comes back is passed to the engine unjudged; the engine validates it.
 * close() ends the read (CG_GRAPH_CLOSED for the whole call).
 */
async function askReaders(readers, request, bodies, { active, signal, consume } = {}) {
  if (active?.closed) throw closedError();
  const answer = { key: request.key };
  const failed = (error) => ({ ...answer, kind: 'failed', code: thrownFields(error)[0] ?? null });
  for (const reader of readers) {
    let accepts;
    try {
      accepts = reader.canRead(request.ref) === true;
    } catch (error) {
      return failed(error);
    }
    if (!accepts) continue;
    if (request.stream !== undefined && typeof reader.stream === 'function') return streamReader(reader, request, bodies, failed, { active, signal, consume });
    let out;
    try {
      out = await bounded((own) => reader.read(request.ref, readerContext(request), { maxBytes: request.maxBytes, signal: own }), {
        timeoutMs: request.timeoutMs,
        signal,
        active,
      });
    } catch (error) {
      return readerFailed(error, failed);
    }
    let buffer = null;
    try {
      const bytes = out?.bytes;
      if (bytes instanceof Uint8Array) buffer = bodies.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)) - 1;
    } catch {
      // Unreadable bytes are no bytes: the engine reports the broken contract.
    }
    const field = (name) => stringField(out, name) ?? null;
    return { ...answer, kind: 'body', buffer, contentType: field('contentType'), contentId: statedField(out, 'contentId'), source: field('source') };
  }
  return { ...answer, kind: 'none' };
}

/** What a reader is told about the document it reads. */
const readerContext = (request) => ({ providerId: request.providerId, staticRevision: request.staticRevision });

/** `value[name]`, undefined when it cannot be read. */
function ownField(value, name) {
  try {
    return value?.[name];
  } catch {
    return undefined;
  }
}

/** `value[name]` when it is a string (a throwing getter counts as absent). */
function stringField(value, name) {
  try {
    return typeof value?.[name] === 'string' ? value[name] : undefined;
  } catch {
    return undefined;
  }
}

/** An optional field of a component's answer as the engine judges it: absent (undefined), a
 *  JSON scalar as given, or the marker of what else it is (a throwing getter included). */
function statedField(value, name) {
  try {
    const v = value?.[name];
    if (v === undefined || v === null || ['string', 'number', 'boolean'].includes(typeof v)) return v;
    return { [NON_JSON_KEY]: typeof v };
  } catch {
    return { [NON_JSON_KEY]: 'getter' };
  }
}

/** How a reader's call ended when it did not answer: close() and an abort end the whole read;
 *  a missed deadline or a throw is that reader's failure (`failed`). */
function readerFailed(error, failed) {
  if (error === CLOSED) throw closedError();
  if (error === CANCELLED) throw pageReadAborted();
  return failed(error === TIMED_OUT ? undefined : error);
}

/** Chunks taken from a reader's stream between two turns given to the event loop. */
const CHUNKS_PER_TURN = 64;
/** A turn of the event loop: timers, I/O and close() get to run. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Streams one URL document through the engine's check (`request.stream`): for a page read the
 * check keeps the page; for a knowledge retriever's scan (`emit`) the check hands the document
 * on in chunks as it arrives, each awaited by `consume(bytes)` before the next is read. What
 * `consume` throws ends the scan as it is.
 */
async function streamReader(reader, request, bodies, failed, { active, signal, consume } = {}) {
  const { source, chunkBytes, start, keep, ranges, emit } = request.stream;
  const check = native.streamCheck(JSON.stringify({ source, chunkBytes, start, keep, ranges, emit }));
  // A stream whose chunks are always ready never lets a timer run: the deadline is checked on
  // the clock between chunks, and the loop gets a turn every few chunks.
  const deadline = performance.now() + request.timeoutMs;
  let consumer;
  const handOn = async (own, last) => {
    if (emit === undefined || consume === undefined) return;
    for (let bytes; !own.aborted && (bytes = check.take(last)) !== null; ) {
      try {
        await consume(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
      } catch (error) {
        consumer = { error };
        throw error;
      }
    }
  };
  try {
    await bounded(
      async (own) => {
        const chunks = reader.stream(request.ref, readerContext(request), { chunkBytes, signal: own });
        let taken = 0;
        let complete = true;
        for await (const chunk of chunks) {
          if (++taken % CHUNKS_PER_TURN === 0) await turn();
          if (performance.now() > deadline) throw TIMED_OUT;
          if (own.aborted) return;
          let bytes;
          try {
            if (chunk?.bytes instanceof Uint8Array) bytes = Buffer.from(chunk.bytes.buffer, chunk.bytes.byteOffset, chunk.bytes.byteLength);
          } catch {
            bytes = undefined;
          }
          if (!check.push(bytes, stringField(chunk, 'contentType'), stringField(chunk, 'source'))) {
            complete = false;
            break;
          }
          await handOn(own, false);
        }
        if (complete) await handOn(own, true);
      },
      { timeoutMs: request.timeoutMs, signal, active },
    );
  } catch (error) {
    if (consumer !== undefined) throw consumer.error;
    return readerFailed(error, failed);
  }
  const answer = JSON.parse(check.finish());
  return { key: request.key, ...answer, buffer: bodies.push(check.window()) - 1 };
}

/** The engine's answer to a read that must run again on its long-read lane. */
const LANE = '~';

/** Rounds of host reads a call may need: documents can only be added by a reload in between. */
const MAX_READ_ROUNDS = 4;

/**
 * Runs an engine call that may need the host's readers for URL documents: `send(answers,
 * bodies)` answers the result, or `?` + the reads it still needs, which the readers answer for
 * the next round.
 */
async function withReaders(send, readers, phase, { active, signal, consume } = {}) {
  const answers = [];
  const bodies = [];
  for (let round = 0; round < MAX_READ_ROUNDS; round++) {
    const text = await call(() => send(answers.length ? JSON.stringify(answers) : undefined, bodies));
    if (text[0] !== '?') return unwrap(text);
    for (const request of JSON.parse(text.slice(1))) answers.push(await askReaders(readers, request, bodies, { active, signal, consume }));
  }
  throw new GraphError({ code: 'CG_INTERNAL', phase });
}

/** Asks a pending host call `question` (JSON text); the engine may need the host's readers
 *  (`consume` takes the chunks of a scan a reader streams). */
const askEngine = (pending, question, readers, active, consume) =>
  withReaders((answers, bodies) => pending.ask(question, answers, bodies), readers, 'query', { active, consume });

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

/** Verbs whose work grows with the graph: they run on the libuv pool, never on this thread. */
const POOL_VERBS = new Set(require('../engine-tables.cjs').poolVerbs);

/** A database read stopped by a deadline (`reason`, named by the engine). */
class Stopped {
  constructor(reason) {
    this.reason = reason;
  }
}
/** A database read the engine's collector stopped, its failure recorded there. */
const COLLECTOR_STOPPED = Symbol('collectorStopped');

/** A view's page as the collector takes it: its `items`, `nextCursor` and (of `changedSince`)
 *  `unknown`, read once, and its `itemsJson` (the items as one JSON array text, which the
 *  engine parses) when it gave that instead: [page JSON, items text or undefined]. */
function wirePage(page) {
  if (page === null || typeof page !== 'object') return [toWireJson({}), undefined];
  const { items, nextCursor, unknown, itemsJson } = page;
  if (itemsJson === undefined) return [toWireJson({ items, nextCursor, unknown }), undefined];
  // Text that is not well-formed is not JSON the engine could read: the page breaks the contract.
  const text = typeof itemsJson === 'string' && itemsJson.isWellFormed() ? itemsJson : '';
  return [toWireJson({ items, nextCursor, unknown }), text];
}

/** The view fields that describe the source, as plain JSON (compared by the engine). */
function sourceContext(view) {
  return JSON.parse(toWireJson({ provider: view.provider, sourceRevision: view.sourceRevision, knowledgeRootDir: view.knowledgeRootDir }));
}

/** The optional calls a view may have; the collector chooses among those it has. */
const VIEW_CALLS = ['scanRelations', 'neighbors', 'changedSince', 'vectors'];

/**
 * Reads one provider whole through an open view into `reads` (the engine's collector), a page
 * at a time: the collector names each call to make (the capability records, then the edges by
 * what the view offers), judges each page and says when the read is over, stopped, or not
 * needed (the view names the state the current snapshot was read from). Each adapter call runs
 * within `budgets.callTimeoutMs`. The view's source fields are read when it opens and again
 * after the scans. `signal` aborts when the whole read is past its deadline; from then on
 * nothing more reaches the collector, which reads the next provider.
 */
async function readView(adapter, providerId, budgets, active, signal, reads) {
  const step = async (invoke) => {
    if (signal.aborted) throw new Stopped('database_read_timeout');
    let answer;
    try {
      answer = await bounded(invoke, { timeoutMs: budgets.callTimeoutMs, active });
    } catch (error) {
      if (error === TIMED_OUT) throw new Stopped('database_call_timeout');
      throw error;
    }
    if (signal.aborted) throw new Stopped('database_read_timeout');
    return answer;
  };
  // Releasing a view cannot change what was read, and frees what the adapter holds for it (a
  // pooled connection): it is bounded like every adapter call, and made after close() too.
  const release = (v) => (typeof v?.close === 'function' ? bounded(() => v.close(), { timeoutMs: budgets.callTimeoutMs }).catch(() => {}) : undefined);
  let view;
  let opening;
  try {
    view = await step(() => (opening = Promise.resolve(adapter.openView(providerId))));
  } catch (error) {
    // A view that opens after its call was given up (a deadline, close()) is released once open.
    opening?.then(release, () => {});
    throw error;
  }
  try {
    const opened = sourceContext(view);
    const offers = VIEW_CALLS.filter((name) => typeof view?.[name] === 'function');
    let next = unwrap(call(() => reads.begin(providerId, JSON.stringify({ ...opened, cwd: process.cwd() }), JSON.stringify(offers))));
    if (next?.unchanged) return;
    const pages = async () => {
      while (next !== null) {
        if (next.stopped) throw COLLECTOR_STOPPED;
        const { call: method, args } = next;
        const page = await step(() => view[method](...args));
        const [wired, itemsJson] = wirePage(page);
        next = unwrap(call(() => reads.page(wired, itemsJson)));
      }
    };
    await pages();
    // The read is complete; the collector may then ask for the view's precomputed vectors,
    // whose failures it keeps from the read.
    next = unwrap(call(() => reads.end(JSON.stringify(sourceContext(view)))));
    await pages();
  } finally {
    // The next read waits for the release; a read close() ended does not.
    const released = release(view);
    if (!active?.closed) await released;
  }
}

/**
 * Reads one provider from a database authority into `reads` within
 * `budgets.database.readTimeoutMs`. The engine validates all of it; a failure travels as its
 * `code`, or the `reason` a deadline stopped it for (the collector records its own stops).
 * close() ends the read (CG_GRAPH_CLOSED).
 */
async function readDatabase(adapter, providerId, budgets, active, reads) {
  const fail = (failed) => unwrap(call(() => reads.fail(providerId, JSON.stringify(failed))));
  try {
    await bounded((signal) => readView(adapter, providerId, budgets, active, signal, reads), { timeoutMs: budgets.readTimeoutMs, active });
  } catch (error) {
    if (error === CLOSED) throw closedError();
    if (error === COLLECTOR_STOPPED) return;
    if (error === TIMED_OUT) return fail({ reason: 'database_read_timeout' });
    if (error instanceof Stopped) return fail({ reason: error.reason });
    return fail({ code: thrownFields(error)[0] ?? null });
  }
}

/** Reads the database authorities `sources` ([{ providerId, handle }]) into `reads`, a
 *  collector of the engine's (a new one unless given), which `open` and `reload` take. */
async function readDatabases(sources, hosts, budgets, active, reads = call(() => new native.NativeDatabaseReads(JSON.stringify(budgets)))) {
  for (const { providerId, handle } of sources) await readDatabase(hosts.all[handle], providerId, budgets, active, reads);
  return reads;
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

// An omitted argument means {}; null is never "omitted".
const wire = (query) => (query === undefined ? '{}' : toWireJson(query, undefined, ARGUMENTS));

/** Page reads take an AbortSignal: it stays here, the engine sees a marker where it was. */
const PAGE_VERBS = ['readDocumentPage', 'readSpecificationPage'];
function readArgs(verb, query) {
  if (!PAGE_VERBS.includes(verb)) return [wire(query), undefined];
  let signal;
  const args = toWireJson(
    query === undefined ? {} : query,
    (value, path) => {
      if (path.length !== 1 || path[0] !== 'signal' || !(value instanceof AbortSignal)) return undefined;
      signal = value;
      return JSON.stringify({ [HOST_KEY]: 'signal' });
    },
    ARGUMENTS,
  );
  return [args, signal];
}

/** Settles with the engine's "aborted" error as soon as `signal` aborts; a later result is dropped. */
function abortable(signal, start) {
  const aborted = pageReadAborted;
  if (signal === undefined) return start();
  if (signal.aborted) return Promise.reject(aborted());
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(aborted());
    signal.addEventListener('abort', onAbort, { once: true });
    start()
      .then(resolve, reject)
      .finally(() => signal.removeEventListener('abort', onAbort));
  });
}
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
        const vectors = await embedWith(embedder, texts, { timeoutMs, active });
        if (vectors === CLOSED || this.#native.putEmbedBatch(batch, vectors) != null) return;
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
    // A page read's signal bounds the host reads with the reader deadline; aborted, the call
    // settles at once.
    runRead = async (graph, verb, query, providerId) => {
      if (!isGraph(graph)) throw notAGraph(verb);
      const [args, signal] = readArgs(verb, query);
      const active = graph.#active;
      // The engine's own reads of local files stop between chunks once the signal aborts.
      const cancel = signal === undefined ? undefined : new native.NativeCancel();
      const onAbort = () => cancel.cancel();
      signal?.addEventListener('abort', onAbort, { once: true });
      // A read that must scan a large document answers LANE at once and runs again on the
      // engine's long-read lane, so such scans never hold the pool other calls need.
      // Every round, on the pool or the lane, runs on the state pinned now: a read made before
      // close() finishes on it.
      const pin = graph.#native.pinRead();
      const read = (answers, bodies) =>
        graph.#native
          .read(verb, args, providerId, answers, bodies, cancel, pin)
          .then((text) => (text === LANE ? graph.#native.readOnLane(verb, args, providerId, answers, bodies, cancel, pin) : text));
      return abortable(signal, () => withReaders(read, graph.#hosts.readers, 'document', { active, signal })).finally(() => {
        signal?.removeEventListener('abort', onAbort);
        pin.release();
      });
    };
    runHosted = async (graph, verb, query, providerId) => {
      if (!isGraph(graph)) throw notAGraph(verb);
      // A build whose last batch failed starts again before the match waits for it.
      if (verb === 'match') graph.#embed();
      let signal;
      const args = toWireJson(
        query === undefined ? {} : query,
        (value, path) => {
          if (verb !== 'match' || path.length !== 1 || path[0] !== 'signal' || !(value instanceof AbortSignal)) return undefined;
          signal = value;
          return JSON.stringify({ [HOST_KEY]: 'signal' });
        },
        ARGUMENTS,
      );
      const started = POOL_VERBS.has(verb)
        ? await call(() => graph.#native.startOnPool(verb, args, providerId))
        : call(() => graph.#native.start(verb, args, providerId));
      if (typeof started === 'string') return unwrap(started);
      // close() while the engine prepared the call: no host component is called any more.
      if (graph.#native.isClosed()) throw closedError();
      const hosts = graph.#hosts;
      const [kind, runtimeProvider] = started.host.split(':');
      if (kind === 'lexical') {
        // The engine ranks on the pool (after the snapshot's index is built); the call is held
        // to the same deadline, signal and close() as a host's executor. A ranking no longer
        // awaited still finishes, and so does the index build it waited for.
        return runHost(started, () => call(() => started.run()), {
          signal,
          active: graph.#active,
          timeoutCode: 'CG_MODEL_TIMEOUT',
          answered: true,
        });
      }
      if (kind === 'semantic') {
        const request = JSON.parse(started.request);
        const active = graph.#active;
        // The engine scores on the pool once every capability vector is built; with a host
        // embedder the intent is embedded here first, within match.embedTimeoutMs.
        return runHost(
          started,
          async (_, own) => {
            if (request.embed === undefined) return call(() => started.runWaiting());
            const vector = await embedWith(hosts.embedder, request.embed, { timeoutMs: request.timeoutMs, signal: own, active });
            if (vector === CLOSED) throw CLOSED;
            await graph.#embed();
            return call(() => started.runWith(vector));
          },
          { signal, active, timeoutCode: 'CG_MODEL_TIMEOUT', answered: true },
        );
      }
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
        const access = knowledgeAccess(started, hosts.readers, active);
        const invoke = (request, own) => Promise.resolve().then(() => hosts.knowledgeRetriever.retrieve(request, access.api(own))).finally(access.expire);
        return runHost(started, invoke, { active, prepare: access.prepare, issued: access.issued });
      }
      const adapter = hosts.runtime.get(runtimeProvider);
      // A runtime adapter past its deadline is no longer awaited, never cancelled.
      return runHost(started, (request) => adapter.query(request), { active });
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
  lexicalExecutor,
  semanticExecutor,
  internal,
  isGraph: (value) => isGraph(value),
  isBound: (value) => isBound(value),
};
