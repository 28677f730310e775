'use strict';
// createMcpHttpHandler: the MCP server over Streamable HTTP, stateless, one server and
// transport per request over the one graph. The MCP SDK loads on first use, as for stdio.

const { inputInvalid } = require('../errors.cjs');
const { requireMcpSdk } = require('../engine/peer.cjs');
const { plainOptions, serverParts, serverOf } = require('./server.cjs');

const HTTP_KEYS = ['allowedHosts', 'allowedOrigins', 'maxRequestBodySize'];

/** A list of non-empty strings, or undefined. */
function hostList(value, field) {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length === 0 || !value.every((v) => typeof v === 'string' && v !== '')) throw inputInvalid(field);
  return value;
}

/**
 * A Node.js request listener `(req, res, parsedBody?)` serving MCP over Streamable HTTP in
 * stateless mode: each request gets its own server and transport over the one graph, so hosts
 * scale out behind a load balancer. The SDK's DNS-rebinding protection is on: the Host header
 * must be one of `allowedHosts` (default: the loopback names with the port the request came
 * in on), and an Origin, when sent, one of `allowedOrigins` (when given).
 * @param options createMcpServer's, plus { allowedHosts?, allowedOrigins?, maxRequestBodySize? }
 */
function createMcpHttpHandler(graph, options = {}) {
  options = plainOptions(options);
  const http = Object.fromEntries(HTTP_KEYS.filter((k) => k in options).map((k) => [k, options[k]]));
  const serverOptions = Object.fromEntries(Object.entries(options).filter(([k]) => !HTTP_KEYS.includes(k)));
  const allowedHosts = hostList(http.allowedHosts, 'allowedHosts');
  const allowedOrigins = hostList(http.allowedOrigins, 'allowedOrigins');
  const { maxRequestBodySize } = http;
  if (maxRequestBodySize !== undefined && !(Number.isSafeInteger(maxRequestBodySize) && maxRequestBodySize > 0)) throw inputInvalid('maxRequestBodySize');
  const parts = serverParts(graph, serverOptions);
  const { StreamableHTTPServerTransport } = requireMcpSdk('server/streamableHttp.js');
  const loopback = (port) => ['127.0.0.1', 'localhost', '[::1]'].flatMap((h) => (port === 80 ? [h, `${h}:80`] : [`${h}:${port}`]));

  return async function handleMcpRequest(req, res, parsedBody) {
    // Stateless: no session to resume (GET) or end (DELETE).
    if (req.method !== 'POST') {
      res.writeHead(405, { 'content-type': 'application/json', allow: 'POST' });
      res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed' }, id: null }));
      return;
    }
    const server = serverOf(parts);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      enableDnsRebindingProtection: true,
      allowedHosts: allowedHosts ?? loopback(req.socket.localPort),
      ...(allowedOrigins ? { allowedOrigins } : {}),
      ...(maxRequestBodySize ? { maxRequestBodySize } : {}),
    });
    res.on('close', () => {
      transport.close().catch(() => {});
      server.close().catch(() => {});
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, parsedBody);
    } catch {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null }));
      }
    }
  };
}
module.exports = { createMcpHttpHandler };
