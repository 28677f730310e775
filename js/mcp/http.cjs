'use strict';
// createMcpHttpHandler: the MCP server over Streamable HTTP, stateless, one server and
// transport per request over the one graph. The MCP SDK loads on first use, as for stdio.

const crypto = require('node:crypto');
const net = require('node:net');
const { inputInvalid } = require('../errors.cjs');
const { native } = require('../engine/native.cjs');
const { requireMcpSdk } = require('../engine/peer.cjs');
const { plainOptions, serverParts, serverOf } = require('./server.cjs');

const HTTP_KEYS = ['allowedHosts', 'allowedOrigins', 'maxRequestBodySize', 'auth'];
const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

/** Whether `host` names this machine only: `localhost`, ::1 or an IPv4 loopback address (127/8,
 *  also IPv4-mapped). */
function isLoopback(host) {
  if (host === 'localhost' || host === '::1' || host === '[::1]') return true;
  const v4 = /^(?:::ffff:)?(\d+\.\d+\.\d+\.\d+)$/i.exec(host);
  return v4 !== null && net.isIPv4(v4[1]) && v4[1].startsWith('127.');
}

/** The names a request on `socket` may reach a loopback server by: the loopback names, and the
 *  loopback address it came in on (a server bound to 127.0.0.2 is reached as 127.0.0.2). */
function loopbackNames(socket) {
  const local = String(socket.localAddress ?? '').replace(/^::ffff:/i, '');
  return local.includes('.') && isLoopback(local) && !LOOPBACK_NAMES.includes(local) ? [...LOOPBACK_NAMES, local] : LOOPBACK_NAMES;
}

/** The MCP SDK's default bound of a request body (4 MiB). */
const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;

/** Reads `req`'s body, at most `maxBytes` (a declared length over it reads nothing): its bytes,
 *  or undefined past the bound. */
async function readBody(req, maxBytes) {
  if (Number(req.headers['content-length']) > maxBytes) return undefined;
  const chunks = [];
  let length = 0;
  for await (const chunk of req) {
    length += chunk.length;
    if (length > maxBytes) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, length);
}

/** A JSON-RPC error answer with no id, as the MCP SDK gives it. */
function refuse(res, status, code, message) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/**
 * The request's body as the transport takes it, measured before it is parsed: over
 * `maxBytes` it is answered 413, nested deeper or holding more JSON values than the engine's
 * arguments bounds -32700 (never parsed), text that is not JSON -32700. Undefined once answered.
 */
async function measuredBody(req, res, maxBytes) {
  const body = await readBody(req, maxBytes);
  if (body === undefined) return refuse(res, 413, -32000, `Payload Too Large: Request body must not exceed ${maxBytes} bytes`);
  if (native.measureJsonText(body, 'body') !== null) return refuse(res, 400, -32700, 'Parse error');
  try {
    return { parsed: JSON.parse(body.toString('utf8')) };
  } catch {
    return refuse(res, 400, -32700, 'Parse error: Invalid JSON');
  }
}

/**
 * A batch without the `notifications/cancelled` that name one of its own requests. The SDK
 * answers nothing for a cancelled request, and the stateless transport answers a batch only once
 * every request in it is answered: a batch holding a call and its cancel would get no response.
 * Cancelling is not supported over stateless HTTP (docs: Exposure), so the call is answered.
 */
function withoutOwnCancels(message) {
  if (!Array.isArray(message)) return message;
  const ids = new Set(message.filter((m) => m && typeof m === 'object' && 'id' in m && typeof m.method === 'string').map((m) => m.id));
  return message.filter((m) => !(m && typeof m === 'object' && m.method === 'notifications/cancelled' && ids.has(m.params?.requestId)));
}

/** A list of non-empty strings, or undefined. */
function hostList(value, field) {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length === 0 || !value.every((v) => typeof v === 'string' && v !== '')) throw inputInvalid(field);
  return value;
}

/** The bearer tokens of `auth` (`{ bearer: token | [tokens] }`) as SHA-256 digests, or undefined. */
function bearerDigests(auth) {
  if (auth === undefined) return undefined;
  if (auth === null || typeof auth !== 'object' || Array.isArray(auth) || Object.keys(auth).some((k) => k !== 'bearer')) throw inputInvalid('auth');
  const tokens = typeof auth.bearer === 'string' ? [auth.bearer] : auth.bearer;
  if (!Array.isArray(tokens) || tokens.length === 0 || !tokens.every((t) => typeof t === 'string' && t !== '')) throw inputInvalid('auth.bearer');
  return tokens.map(digest);
}

function digest(text) {
  return crypto.createHash('sha256').update(text, 'utf8').digest();
}

/** Whether `header` is `Bearer <one of the tokens>`. Equal-length digests compared in constant
 *  time, against every token, so neither the token nor which one matched leaks through timing. */
function bearerAccepted(header, digests) {
  const m = typeof header === 'string' ? /^Bearer +(\S+) *$/i.exec(header) : null;
  const sent = digest(m ? m[1] : '');
  let accepted = false;
  for (const d of digests) accepted = crypto.timingSafeEqual(sent, d) || accepted;
  return m !== null && accepted;
}

/** Whether the request's Origin may be served: none sent (not a browser), the server's own
 *  loopback origin, or one of `allowedOrigins`. */
function originAccepted(origin, socket, allowedOrigins) {
  if (origin === undefined) return true;
  const port = socket.localPort;
  if (loopbackNames(socket).some((h) => origin === `http://${h}:${port}` || (port === 80 && origin === `http://${h}`))) return true;
  return allowedOrigins !== undefined && allowedOrigins.includes(origin);
}

/**
 * A Node.js request listener `(req, res, parsedBody?)` serving MCP over Streamable HTTP in
 * stateless mode: each request gets its own server and transport over the one graph, so hosts
 * scale out behind a load balancer. The SDK's DNS-rebinding protection is on: the Host header
 * must be one of `allowedHosts` (default: the loopback names — `127.0.0.1`, `localhost`, `[::1]`
 * and the loopback address the request came in on — with the port it came in on). An Origin, when sent, must be the server's own loopback origin or one of
 * `allowedOrigins` (else 403); with `auth.bearer`, a request without one of its tokens is 401
 * before its body is read. A body is read up to
 * `maxRequestBodySize` (4 MiB; past it 413) and measured against the engine's arguments bounds
 * (nesting, JSON values) before it is parsed (past them the parse error -32700).
 * @param options createMcpServer's, plus { allowedHosts?, allowedOrigins?, maxRequestBodySize?, auth?: { bearer } }
 */
function createMcpHttpHandler(graph, options = {}) {
  options = plainOptions(options);
  const http = Object.fromEntries(HTTP_KEYS.filter((k) => k in options).map((k) => [k, options[k]]));
  const serverOptions = Object.fromEntries(Object.entries(options).filter(([k]) => !HTTP_KEYS.includes(k)));
  const allowedHosts = hostList(http.allowedHosts, 'allowedHosts');
  const allowedOrigins = hostList(http.allowedOrigins, 'allowedOrigins');
  const bearer = bearerDigests(http.auth);
  const { maxRequestBodySize } = http;
  if (maxRequestBodySize !== undefined && !(Number.isSafeInteger(maxRequestBodySize) && maxRequestBodySize > 0)) throw inputInvalid('maxRequestBodySize');
  const parts = serverParts(graph, serverOptions);
  const { StreamableHTTPServerTransport } = requireMcpSdk('server/streamableHttp.js');
  const loopback = (socket) => loopbackNames(socket).flatMap((h) => (socket.localPort === 80 ? [h, `${h}:80`] : [`${h}:${socket.localPort}`]));

  return async function handleMcpRequest(req, res, parsedBody) {
    // Stateless: no session to resume (GET) or end (DELETE).
    if (req.method !== 'POST') {
      res.writeHead(405, { 'content-type': 'application/json', allow: 'POST' });
      res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed' }, id: null }));
      return;
    }
    if (!originAccepted(req.headers.origin, req.socket, allowedOrigins)) return refuse(res, 403, -32000, 'Forbidden: Origin not allowed');
    if (bearer && !bearerAccepted(req.headers.authorization, bearer)) {
      res.setHeader('www-authenticate', 'Bearer');
      return refuse(res, 401, -32000, 'Unauthorized: a bearer token is required');
    }
    const server = serverOf(parts);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      enableDnsRebindingProtection: true,
      allowedHosts: allowedHosts ?? loopback(req.socket),
      ...(maxRequestBodySize ? { maxRequestBodySize } : {}),
    });
    res.on('close', () => {
      transport.close().catch(() => {});
      server.close().catch(() => {});
    });
    try {
      // A host's body parser has read the body already; otherwise it is measured here first.
      const body = parsedBody === undefined ? await measuredBody(req, res, maxRequestBodySize ?? DEFAULT_MAX_BODY_BYTES) : { parsed: parsedBody };
      if (body === undefined) return;
      await server.connect(transport);
      await transport.handleRequest(req, res, withoutOwnCancels(body.parsed));
    } catch {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null }));
      }
    }
  };
}
module.exports = { createMcpHttpHandler, isLoopback };
