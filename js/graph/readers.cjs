'use strict';
// The host's readers of URL documents, as the engine asks for them: whole reads, streams
// through the engine's check, and the rounds of a body read that needs them.

const { native, unwrap, failure, call } = require('../engine/native.cjs');
const { GraphError } = require('../errors.cjs');
const { NON_JSON_KEY } = require('../pure-json.cjs');
const { TIMED_OUT, CANCELLED, CLOSED, thrownFields, bounded, closedError, wireQuery } = require('./host-calls.cjs');

/** The engine's error for a page read its caller's signal aborted. */
const pageReadAborted = () => failure(native.pageReadAborted());

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

/** Page reads take an AbortSignal. */
const PAGE_VERBS = ['readDocumentPage', 'readSpecificationPage'];

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

/**
 * A body read of `verb` on the graph's `native` handle, with the host's `readers` for URL
 * documents. A page read's signal bounds the host reads with the reader deadline; aborted, the
 * call settles at once.
 */
async function readBodies({ native: graph, hosts, active }, verb, query, providerId) {
  const [args, signal] = wireQuery(query, PAGE_VERBS.includes(verb));
  // The engine's own reads of local files stop between chunks once the signal aborts.
  const cancel = signal === undefined ? undefined : new native.NativeCancel();
  const onAbort = () => cancel.cancel();
  signal?.addEventListener('abort', onAbort, { once: true });
  // A read that must scan a large document answers LANE at once and runs again on the
  // engine's long-read lane, so such scans never hold the pool other calls need.
  // Every round, on the pool or the lane, runs on the state pinned now: a read made before
  // close() finishes on it.
  const pin = graph.pinRead();
  const read = (answers, bodies) =>
    graph
      .read(verb, args, providerId, answers, bodies, cancel, pin)
      .then((text) => (text === LANE ? graph.readOnLane(verb, args, providerId, answers, bodies, cancel, pin) : text));
  return abortable(signal, () => withReaders(read, hosts.readers, 'document', { active, signal })).finally(() => {
    signal?.removeEventListener('abort', onAbort);
    pin.release();
  });
}

module.exports = { askEngine, ownField, readBodies };
