'use strict';
// `mcp`: the graph's tools served over MCP, on stdio or over Streamable HTTP, until the input
// ends or a signal stops it.

const { GraphError } = require('../errors.cjs');
const { createMcpServer } = require('../mcp/server.cjs');
const { createMcpHttpHandler } = require('../mcp/http.cjs');
const { StdioServerTransport } = require('../mcp/stdio.cjs');
const { usage } = require('./args.cjs');
const { configInvalid } = require('../graph/config-file.cjs');

async function serveMcp(graph, mcp = {}, flags, stderr) {
  const { createMcpServer } = require('../mcp/server.cjs');
  const { StdioServerTransport } = require('../mcp/stdio.cjs');
  if (mcp === null || typeof mcp !== 'object' || Array.isArray(mcp)) throw configInvalid('mcp', 'object');
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
  const flagged = (error) => named(error, (field) => usage(field === 'documentBodies' ? '--document-bodies' : field === 'allowedHosts' ? '--allowed-host' : '--prefix'));
  if (flags.http !== undefined) return serveMcpHttp(graph, options, flags, stderr, flagged);
  if (flags['allowed-host'] !== undefined) throw usage('--allowed-host');
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

/** `capability-graph mcp --http`: stateless Streamable HTTP at /mcp, until a signal. */
async function serveMcpHttp(graph, options, flags, stderr, flagged) {
  const { createMcpHttpHandler } = require('../mcp/http.cjs');
  const address = httpAddress(flags.http);
  let handler;
  try {
    handler = createMcpHttpHandler(graph, { ...options, ...(flags['allowed-host'] ? { allowedHosts: flags['allowed-host'] } : {}) });
  } catch (error) {
    throw flagged(error);
  }
  const http = require('node:http');
  const server = http.createServer((req, res) => {
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

module.exports = { serveMcp, reportReloads };
