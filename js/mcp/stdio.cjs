'use strict';
// The stdio transport of the MCP server: one JSON-RPC message per line on stdin, answers on
// stdout. A bad line costs its sender an error answer, never the session: a line longer than
// `maxMessageBytes` is skipped up to its newline (never buffered) and answered with -32600, a
// line nested deeper or holding more JSON values than the engine's arguments bounds (measured
// before it is parsed, never parsed) or that is not JSON with -32700, one that is not a
// JSON-RPC message with -32600 (id null).
//
// Memory stays bounded whatever the client does: stdin is not read while more than
// `highWaterMark` bytes of answers are unwritten (a client that does not read its end) or
// `maxInFlight` requests are unanswered (a client that sends faster than calls finish).
//
// At the end of its input the transport answers every request already read, waits for those
// answers to be written, then closes (`onclose`): a host that exits on `onclose` loses no answer.
// A stream error on stdin or stdout goes to `onerror`; a broken stdout then closes the
// transport, since nothing more can be delivered. It never ends the process and never prints.

const { inputInvalid } = require('../errors.cjs');
const { native } = require('../engine/native.cjs');
const { requireMcpSdk } = require('../engine/peer.cjs');

const DEFAULT_MAX_MESSAGE_BYTES = 10 * 1024 * 1024;
const DEFAULT_HIGH_WATER_MARK = 1024 * 1024;
const DEFAULT_MAX_IN_FLIGHT = 64;
const NEWLINE = 0x0a;

const isStream = (value, method) => value !== null && typeof value === 'object' && typeof value[method] === 'function';
const isId = (id) => typeof id === 'string' || typeof id === 'number';

class StdioServerTransport {
  #stdin;
  #stdout;
  #maxMessageBytes;
  #highWaterMark;
  #maxInFlight;
  #parse;
  #isRequest;
  #started = false;
  #closed = false;
  /** Input received and not yet split into lines: [{ bytes, offset }]; at most a chunk or two. */
  #input = [];
  #pumping = false;
  /** stdin has ended (or failed): no more input will come. */
  #ended = false;
  /** The pieces of the line read so far, and their length in bytes. */
  #pieces = [];
  #length = 0;
  /** Inside a line already answered as too large, until its newline. */
  #skipping = false;
  /** Requests handed on and not yet answered: id → how many (a client may reuse an id). */
  #inFlight = new Map();
  #inFlightCount = 0;
  /** Bytes handed to stdout whose write has not completed, and how many writes that is. */
  #unwritten = 0;
  #writes = 0;

  /** @param options { stdin?, stdout?, maxMessageBytes?, highWaterMark?, maxInFlight? } (process
   *  streams; 10 MiB, 1 MiB and 64 by default) */
  constructor(options = {}) {
    const config = { phase: 'config' };
    if (options === null || typeof options !== 'object' || Array.isArray(options)) throw inputInvalid('options', config);
    const {
      stdin = process.stdin,
      stdout = process.stdout,
      maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES,
      highWaterMark = DEFAULT_HIGH_WATER_MARK,
      maxInFlight = DEFAULT_MAX_IN_FLIGHT,
    } = options;
    for (const [field, value] of Object.entries({ maxMessageBytes, highWaterMark, maxInFlight })) {
      if (!Number.isSafeInteger(value) || value < 1) throw inputInvalid(field, { ...config, expected: 'integer >= 1' });
    }
    if (!isStream(stdin, 'on')) throw inputInvalid('stdin', { ...config, expected: 'readable stream' });
    if (!isStream(stdout, 'write')) throw inputInvalid('stdout', { ...config, expected: 'writable stream' });
    this.#stdin = stdin;
    this.#stdout = stdout;
    this.#maxMessageBytes = maxMessageBytes;
    this.#highWaterMark = highWaterMark;
    this.#maxInFlight = maxInFlight;
  }

  /** Whether `value` is a transport made by this class (methods called on anything else fail). */
  static #is(value) {
    return value !== null && typeof value === 'object' && #stdin in value;
  }

  async start() {
    if (!StdioServerTransport.#is(this)) throw inputInvalid('this', { phase: 'lifecycle' });
    if (this.#started) throw inputInvalid('start', { phase: 'lifecycle', expected: 'a transport started once' });
    this.#started = true;
    // The SDK's own parser and message kinds, loaded with the server that uses this transport.
    const { deserializeMessage } = requireMcpSdk('shared/stdio.js');
    const { isJSONRPCRequest } = requireMcpSdk('types.js');
    this.#parse = deserializeMessage;
    this.#isRequest = isJSONRPCRequest;
    // Kept for the transport's whole life: a write that fails after close is still handled.
    this.#stdout.on?.('error', this.#onStdoutError);
    this.#stdin.on('data', this.#onData);
    this.#stdin.on('end', this.#onEnd);
    this.#stdin.on('close', this.#onEnd);
    this.#stdin.on('error', this.#onStdinError);
    if (this.#stdin.readableEnded === true) this.#onEnd();
  }

  #onData = (chunk) => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    if (bytes.length > 0) this.#input.push({ bytes, offset: 0 });
    this.#pump();
  };

  #onEnd = () => {
    if (this.#ended) return;
    this.#ended = true;
    this.#pump();
  };

  #onStdinError = (error) => {
    if (this.#closed) return;
    this.onerror?.(error);
    // A stream that failed gives no more input: what was read is still answered.
    this.#onEnd();
  };

  #onStdoutError = (error) => {
    if (this.#closed) return;
    this.onerror?.(error);
    // No answer can be delivered any more.
    this.close();
  };

  /** Whether reading must wait: too much unwritten output, or too many calls unanswered. */
  #blocked() {
    return this.#unwritten > this.#highWaterMark || this.#inFlightCount >= this.#maxInFlight;
  }

  /** Splits the input received into lines and hands them on while nothing blocks; then pauses or
   *  resumes stdin, and closes once the input has ended and everything read is answered. */
  #pump() {
    if (this.#pumping || this.#closed) return;
    this.#pumping = true;
    try {
      while (this.#input.length > 0 && !this.#blocked() && !this.#closed) this.#step();
      if (this.#closed) return;
      if (this.#ended && this.#input.length === 0) this.#endOfInput();
    } finally {
      this.#pumping = false;
    }
    if (this.#closed) return;
    if (this.#blocked() || this.#input.length > 0) this.#stdin.pause?.();
    else if (!this.#ended) this.#stdin.resume?.();
    if (this.#ended && this.#input.length === 0 && this.#inFlightCount === 0 && this.#writes === 0) this.close();
  }

  /** Consumes input up to and including the next newline (or the end of the first chunk). */
  #step() {
    const head = this.#input[0];
    const { bytes } = head;
    const start = head.offset;
    const newline = bytes.indexOf(NEWLINE, start);
    const end = newline === -1 ? bytes.length : newline;
    if (newline === -1 || newline + 1 === bytes.length) this.#input.shift();
    else head.offset = newline + 1;
    if (!this.#skipping) {
      if (this.#length + (end - start) > this.#maxMessageBytes) {
        this.#drop();
        this.#skipping = true;
        this.#reject(-32600, `Message larger than ${this.#maxMessageBytes} bytes`);
      } else {
        this.#pieces.push(bytes.subarray(start, end));
        this.#length += end - start;
      }
    }
    if (newline === -1) return;
    if (this.#skipping) this.#skipping = false;
    else this.#take();
  }

  /** The line gathered so far, handed on. */
  #take() {
    const bytes = Buffer.concat(this.#pieces, this.#length);
    this.#drop();
    this.#line(bytes);
  }

  /** A last line without its newline is a line too. */
  #endOfInput() {
    if (this.#skipping) this.#skipping = false;
    else if (this.#length > 0) this.#take();
  }

  #drop() {
    this.#pieces = [];
    this.#length = 0;
  }

  #line(bytes) {
    // Measured before it is parsed: a line too deep or too wide is refused unparsed.
    if (native.measureJsonText(bytes, 'line') !== null) return this.#reject(-32700, 'Parse error');
    const text = bytes.toString('utf8').replace(/\r$/, '');
    if (text.trim() === '') return;
    let message;
    try {
      JSON.parse(text);
    } catch {
      return this.#reject(-32700, 'Parse error');
    }
    try {
      message = this.#parse(text);
    } catch {
      return this.#reject(-32600, 'Invalid Request');
    }
    const request = this.#isRequest(message);
    if (request) this.#track(message.id, 1);
    else if (message.method === 'notifications/cancelled') {
      // A cancelled request is never answered: its slot is free.
      const id = message.params?.requestId;
      if (this.#inFlight.has(id)) this.#track(id, -1);
    }
    try {
      this.onmessage?.(message);
    } catch (error) {
      // A handler that throws costs its message, never the session.
      if (request) this.#track(message.id, -1);
      this.onerror?.(error);
    }
  }

  #track(id, delta) {
    const count = (this.#inFlight.get(id) ?? 0) + delta;
    if (count > 0) this.#inFlight.set(id, count);
    else this.#inFlight.delete(id);
    this.#inFlightCount += delta;
  }

  /** A JSON-RPC error answer to a line that carried no usable request. */
  #reject(code, message) {
    this.send({ jsonrpc: '2.0', id: null, error: { code, message } }).catch((error) => this.onerror?.(error));
  }

  /** Resolves once the message is written (rejects when stdout fails or the transport is closed). */
  send(message) {
    if (!StdioServerTransport.#is(this)) return Promise.reject(inputInvalid('this', { phase: 'lifecycle' }));
    if (this.#closed) return Promise.reject(inputInvalid('send', { phase: 'lifecycle', expected: 'an open transport' }));
    let bytes;
    try {
      bytes = Buffer.from(JSON.stringify(message) + '\n', 'utf8');
    } catch (error) {
      return Promise.reject(error);
    }
    // An answer frees its request's slot.
    const answer = message !== null && typeof message === 'object' && message.method === undefined && isId(message.id);
    if (answer && this.#inFlight.has(message.id)) this.#track(message.id, -1);
    this.#unwritten += bytes.length;
    this.#writes++;
    return new Promise((resolve, reject) => {
      let done = false;
      const written = (error) => {
        if (done) return;
        done = true;
        this.#unwritten -= bytes.length;
        this.#writes--;
        if (error) reject(error);
        else resolve();
        // Room again for input, or the last answer of the input written.
        this.#pump();
      };
      try {
        this.#stdout.write(bytes, written);
      } catch (error) {
        written(error);
      }
    });
  }

  /** Idempotent; on anything that is not a transport there is nothing to release. */
  async close() {
    if (!StdioServerTransport.#is(this) || this.#closed) return;
    this.#closed = true;
    this.#stdin.off?.('data', this.#onData);
    this.#stdin.off?.('end', this.#onEnd);
    this.#stdin.off?.('close', this.#onEnd);
    // The error listeners stay: a stream that fails after close is still no unhandled error.
    // Pause stdin only when nothing else reads it.
    if (typeof this.#stdin.listenerCount === 'function' && this.#stdin.listenerCount('data') === 0) this.#stdin.pause?.();
    this.#drop();
    this.#input = [];
    this.#inFlight.clear();
    this.#inFlightCount = 0;
    this.onclose?.();
  }
}

module.exports = { StdioServerTransport };
