'use strict';
// `mcp`: the graph's tools served over MCP, on stdio or over Streamable HTTP, until the input
// ends or a signal stops it.

const { GraphError } = require('../errors.cjs');
// The MCP modules load when `mcp` runs (below), not for every command the CLI starts.
const { usage } = require('./args.cjs');
const { configInvalid, readBounded } = require('../graph/config-file.cjs');

/** The `mcp.http` block's settings (SPEC D27) and what each must be. */
const HTTP_SETTINGS = {
  allowedOrigins: [(v) => Array.isArray(v) && v.length > 0 && v.every((o) => typeof o === 'string' && o !== ''), 'array of origins'],
  tokenFile: [(v) => typeof v === 'string' && v !== '', 'path'],
  allowUnauthenticated: [(v) => typeof v === 'boolean', 'boolean'],
  maxConnections: [(v) => Number.isSafeInteger(v) && v > 0, 'positive integer'],
  headersTimeoutMs: [(v) => Number.isSafeInteger(v) && v > 0, 'positive integer'],
  bodyTimeoutMs: [(v) => Number.isSafeInteger(v) && v > 0, 'positive integer'],
};
/** The CLI server's bounds unless the config says otherwise (docs/tools-and-mcp.md, Exposure). */
const HTTP_DEFAULTS = { maxConnections: 256, headersTimeoutMs: 10_000, bodyTimeoutMs: 30_000 };
const TOKEN_FILE_MAX_BYTES = 64 * 1024;
const HTTP_FLAGS = ['allowed-host', 'allowed-origin', 'token-file', 'allow-unauthenticated'];

/** The config's `mcp.http` block, checked: what it gets wrong is CG_CONFIG_INVALID at its key. */
function httpSettings(block) {
  if (block === undefined) return {};
  if (block === null || typeof block !== 'object' || Array.isArray(block)) throw configInvalid('mcp.http', 'object');
  for (const [key, value] of Object.entries(block)) {
    const setting = Object.hasOwn(HTTP_SETTINGS, key) ? HTTP_SETTINGS[key] : undefined;
    if (!setting) throw configInvalid(`mcp.http.${key}`, `one of: ${Object.keys(HTTP_SETTINGS).join(', ')}`);
    if (!setting[0](value)) throw configInvalid(`mcp.http.${key}`, setting[1]);
  }
  return block;
}

async function serveMcp(graph, mcp = {}, flags, stderr) {
  const { createMcpServer } = require('../mcp/server.cjs');
  const { StdioServerTransport } = require('../mcp/stdio.cjs');
  if (mcp === null || typeof mcp !== 'object' || Array.isArray(mcp)) throw configInvalid('mcp', 'object');
  const { http: httpBlock, ...serverBlock } = mcp;
  const settings = httpSettings(httpBlock);
  mcp = serverBlock;
  // The config's block first, alone: what it gets wrong is the config's (CG_CONFIG_INVALID);
  // what the flags then get wrong is a usage error.
  const named = (error, name) => (error instanceof GraphError && error.code === 'CG_INPUT_INVALID' ? name(error.details?.field) : error);
  try {
    createMcpServer(graph, mcp);
  } catch (error) {
    throw named(error, (field) => configInvalid(typeof field === 'string' ? `mcp.${field}` : 'mcp'));
  }
  const options = {
    ...mcp,
    ...(flags.prefix !== undefined ? { prefix: flags.prefix } : {}),
    ...(flags['document-bodies'] ? { documentBodies: true } : {}),
  };
  const FLAG_OF = { documentBodies: '--document-bodies', allowedHosts: '--allowed-host', allowedOrigins: '--allowed-origin' };
  const flagged = (error) => named(error, (field) => usage(FLAG_OF[field] ?? '--prefix'));
  if (flags.http !== undefined) return serveMcpHttp(graph, options, settings, flags, stderr, flagged);
  for (const flag of HTTP_FLAGS) if (flags[flag] !== undefined) throw usage(`--${flag}`);
  let server;
  try {
    server = createMcpServer(graph, options);
  } catch (error) {
    throw flagged(error);
  }
  // The transport closes once every request read before the end of input is answered (or its
  // stdout is gone); a signal ends the session at once.
  let stop;
  const stopped = new Promise((resolve) => (stop = resolve));
  server.onclose = stop;
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    await server.connect(new StdioServerTransport());
    if (stderr.isTTY && !flags.json) stderr.write(waitingLine(flags));
    await stopped;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    await server.close().catch(() => {});
  }
}

/**
 * For a person who started the stdio server at a terminal, where it would otherwise wait in
 * silence: what it is waiting for and how a client connects. A client starts the command
 * itself, so the line gives that command, with the config it was given.
 */
function waitingLine(flags) {
  const quoted = (arg) => (/^[\w./:@-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, "'\\''")}'`);
  const config = flags.config === undefined ? '' : ` --config ${quoted(flags.config)}`;
  const command = `npx capability-graph mcp${config}`;
  return `capability-graph: serving MCP on stdio; connect a client that starts this command, e.g. npx @modelcontextprotocol/inspector --cli --method tools/list -- ${command} (see "Connecting a client" in docs/tools-and-mcp.md)\n`;
}

/** `[HOST:]PORT` of `--http`; the host is loopback unless told otherwise. */
function httpAddress(value) {
  const m = /^(?:(\[[0-9A-Fa-f:.]+\]|[^:[\]]+):)?(\d{1,5})$/.exec(value);
  if (!m || Number(m[2]) > 65535) throw usage('--http');
  return { host: (m[1] ?? '127.0.0.1').replace(/^\[(.*)\]$/, '$1'), port: Number(m[2]) };
}

/** One line on stderr per reload a watch asked for, and per lost watch: what it serves now, or
 *  the error's envelope. */
function reportReloads(graph, stderr) {
  graph.on('reload', (event) => {
    if (event.trigger !== 'watch') return;
    const line = event.ok
      ? `${event.providerId} serves ${event.entry.staticRevision}`
      : `${event.providerId} ${event.entry ? 'reload' : 'watch'} failed: ${JSON.stringify(event.error.toJSON())}`;
    stderr.write(`capability-graph: ${line}\n`);
  });
}

/** The bearer tokens clients must send: --token-file, else CAPABILITY_GRAPH_MCP_TOKEN, else the
 *  config's mcp.http.tokenFile (relative to the config); a token never comes from the command
 *  line itself. A token file holds one token a line. */
function bearerTokens(flags, settings) {
  const [file, where] = flags['token-file'] !== undefined ? [flags['token-file'], '--token-file'] : [settings.tokenFile, 'mcp.http.tokenFile'];
  const env = process.env.CAPABILITY_GRAPH_MCP_TOKEN;
  if (flags['token-file'] === undefined && env !== undefined && env.trim() !== '') return [env.trim()];
  if (file === undefined) return undefined;
  let text;
  try {
    text = readBounded(file, TOKEN_FILE_MAX_BYTES);
  } catch {
    text = undefined;
  }
  const tokens = (text ?? '').split(/\r?\n/).map((line) => line.trim()).filter((line) => line !== '');
  if (tokens.length === 0 || tokens.some((t) => /\s/.test(t))) throw configInvalid(where, 'a readable file holding a token a line');
  return tokens;
}

/** `capability-graph mcp --http`: stateless Streamable HTTP at /mcp, until a signal. */
async function serveMcpHttp(graph, options, settings, flags, stderr, flagged) {
  const { createMcpHttpHandler, isLoopback } = require('../mcp/http.cjs');
  const address = httpAddress(flags.http);
  const tokens = bearerTokens(flags, settings);
  if (!tokens && !isLoopback(address.host) && !(flags['allow-unauthenticated'] || settings.allowUnauthenticated)) {
    // Refused before listening: no moment when the network reaches an open server.
    throw new GraphError({ code: 'CG_CONFIG_INVALID', phase: 'config', details: { path: '--http', reason: 'unauthenticated_bind' } });
  }
  const allowedOrigins = flags['allowed-origin'] ?? settings.allowedOrigins;
  let handler;
  try {
    handler = createMcpHttpHandler(graph, {
      ...options,
      ...(flags['allowed-host'] ? { allowedHosts: flags['allowed-host'] } : {}),
      ...(allowedOrigins ? { allowedOrigins } : {}),
      ...(tokens ? { auth: { bearer: tokens } } : {}),
    });
  } catch (error) {
    throw flagged(error);
  }
  const server = boundedServer({ ...HTTP_DEFAULTS, ...settings }, (req, res) => {
    if (!/^\/mcp(\?|$)/.test(req.url)) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Not found: MCP is served at /mcp' }, id: null }));
      return;
    }
    handler(req, res);
  });
  try {
    await new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(address.port, address.host, resolve);
    });
  } catch {
    // A port in use or refused: the address is the config's to change.
    throw configInvalid('--http', 'an address this process may listen on');
  }
  const { port } = server.address();
  const host = address.host.includes(':') ? `[${address.host}]` : address.host;
  stderr.write(`capability-graph: MCP over Streamable HTTP at http://${host}:${port}/mcp\n`);
  let stop;
  const stopped = new Promise((resolve) => (stop = resolve));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    await stopped;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

/**
 * A node:http server that holds at most `maxConnections` connections (one more is answered 503
 * and closed) and gives a client `headersTimeoutMs` for a request's headers and `bodyTimeoutMs`
 * more for its body (past either, 408 and closed): unfinished requests cannot hold its memory.
 */
function boundedServer({ maxConnections, headersTimeoutMs, bodyTimeoutMs }, listener) {
  const http = require('node:http');
  const server = http.createServer(
    {
      headersTimeout: headersTimeoutMs,
      requestTimeout: headersTimeoutMs + bodyTimeoutMs,
      // Node checks the two timeouts on this period (30 s by default, longer than short bounds).
      connectionsCheckingInterval: Math.min(1000, headersTimeoutMs, bodyTimeoutMs),
    },
    (req, res) => {
      if (req.socket[OVER_CAP]) return;
      listener(req, res);
    },
  );
  let open = 0;
  server.prependListener('connection', (socket) => {
    if (open >= maxConnections) {
      socket[OVER_CAP] = true;
      socket.end(`HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(OVER_CAP_BODY)}\r\n\r\n${OVER_CAP_BODY}`);
      return;
    }
    open += 1;
    socket.once('close', () => (open -= 1));
  });
  return server;
}
const OVER_CAP = Symbol('overCap');
const OVER_CAP_BODY = JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Too many connections' }, id: null });

module.exports = { serveMcp, reportReloads };
