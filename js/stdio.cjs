'use strict';
// The stdio transport of the MCP server: one JSON-RPC message per line on stdin, answers on
// stdout. A bad line costs its sender an error answer, never the session: a line longer than
// `maxMessageBytes` is skipped up to its newline (never buffered) and answered with -32600, a
// line that is not JSON with -32700, one that is not a JSON-RPC message with -32600 (id null).
// It never ends the process; the host decides what the end of its input means.

const { inputInvalid } = require('./errors.cjs');
const { requireMcpSdk } = require('./peer.cjs');

const DEFAULT_MAX_MESSAGE_BYTES = 10 * 1024 * 1024;
const NEWLINE = 0x0a;

const isStream = (value, method) => value !== null && typeof value === 'object' && typeof value[method] === 'function';

class StdioServerTransport {
  #stdin;
  #stdout;
  #maxMessageBytes;
  #parse;
  #started = false;
  /** The pieces of the line read so far, and their length in bytes. */
  #pieces = [];
  #length = 0;
  /** Inside a line already answered as too large, until its newline. */
  #skipping = false;

  /** @param options { stdin?, stdout?, maxMessageBytes? } (process streams, 10 MiB by default) */
  constructor(options = {}) {
    const config = { phase: 'config' };
    if (options === null || typeof options !== 'object' || Array.isArray(options)) throw inputInvalid('options', config);
    const { stdin = process.stdin, stdout = process.stdout, maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES } = options;
    if (!Number.isSafeInteger(maxMessageBytes) || maxMessageBytes < 1) {
      throw inputInvalid('maxMessageBytes', { ...config, expected: 'integer >= 1' });
    }
    if (!isStream(stdin, 'on')) throw inputInvalid('stdin', { ...config, expected: 'readable stream' });
    if (!isStream(stdout, 'write')) throw inputInvalid('stdout', { ...config, expected: 'writable stream' });
    this.#stdin = stdin;
    this.#stdout = stdout;
    this.#maxMessageBytes = maxMessageBytes;
  }

  /** Whether `value` is a transport made by this class (methods called on anything else fail). */
  static #is(value) {
    return value !== null && typeof value === 'object' && #stdin in value;
  }

  async start() {
    if (!StdioServerTransport.#is(this)) throw inputInvalid('this', { phase: 'lifecycle' });
    if (this.#started) throw inputInvalid('start', { phase: 'lifecycle', expected: 'a transport started once' });
    this.#started = true;
    // The SDK's own parser, loaded with the server that uses this transport.
    const { deserializeMessage } = requireMcpSdk('shared/stdio.js');
    this.#parse = deserializeMessage;
    this.#stdin.on('data', this.#onData);
    this.#stdin.on('error', this.#onError);
  }

  #onData = (chunk) => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    for (let start = 0; start < bytes.length; ) {
      const newline = bytes.indexOf(NEWLINE, start);
      const end = newline === -1 ? bytes.length : newline;
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
      else this.#line(Buffer.concat(this.#pieces, this.#length));
      this.#drop();
      start = newline + 1;
    }
  };

  #onError = (error) => this.onerror?.(error);

  #drop() {
    this.#pieces = [];
    this.#length = 0;
  }

  #line(bytes) {
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
    try {
      this.onmessage?.(message);
    } catch (error) {
      // A handler that throws costs its message, never the session.
      this.onerror?.(error);
    }
  }

  /** A JSON-RPC error answer to a line that carried no usable request. */
  #reject(code, message) {
    this.send({ jsonrpc: '2.0', id: null, error: { code, message } }).catch((error) => this.onerror?.(error));
  }

  send(message) {
    if (!StdioServerTransport.#is(this)) return Promise.reject(inputInvalid('this', { phase: 'lifecycle' }));
    return new Promise((resolve, reject) => {
      try {
        if (this.#stdout.write(JSON.stringify(message) + '\n')) resolve();
        else this.#stdout.once('drain', resolve);
      } catch (error) {
        reject(error);
      }
    });
  }

  /** Idempotent; on anything that is not a transport there is nothing to release. */
  async close() {
    if (!StdioServerTransport.#is(this)) return;
    this.#stdin.off?.('data', this.#onData);
    this.#stdin.off?.('error', this.#onError);
    // Pause stdin only when nothing else reads it.
    if (typeof this.#stdin.listenerCount === 'function' && this.#stdin.listenerCount('data') === 0) this.#stdin.pause?.();
    this.#drop();
    this.onclose?.();
  }
}

module.exports = { StdioServerTransport };
