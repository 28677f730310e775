'use strict';
// The command line's config file, as both the command line and `CapabilityGraph.openConfigFile`
// open it: read bounded (a BOM accepted), file roots (and mcp.http.tokenFile) made relative to the file, the executor
// built from its kind, the `mcp` block set apart.

const fs = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const { GraphError, catalog } = require('../errors.cjs');
const { lexicalExecutor, semanticExecutor } = require('../executors/builtin.cjs');

const CONFIG_MAX_BYTES = 1024 * 1024;
const CONFIG_MAX = `${CONFIG_MAX_BYTES / 1024 / 1024} MiB`;

/** Why a config file could not be read ('missing', 'invalid' or 'unreadable'), for the command
 *  line's human line; never the file's path, which stays with the caller that named it. */
const CONFIG_PROBLEM = Symbol('configProblem');

function unreadableConfig(problem) {
  const entry = catalog.codes.find((c) => c.code === 'CG_CONFIG_INVALID');
  const error = new GraphError({ code: 'CG_CONFIG_INVALID', phase: 'config', message: entry.messages[1] });
  Object.defineProperty(error, CONFIG_PROBLEM, { value: problem });
  return error;
}

/** CG_CONFIG_INVALID (phase config) for `where` in the config file. */
function configInvalid(where, expected) {
  return new GraphError({ code: 'CG_CONFIG_INVALID', phase: 'config', details: { path: where, ...(expected ? { expected } : {}) } });
}

/** The JSON object in `file`; a missing, oversized or non-JSON file, or one not holding an
 *  object, is CG_CONFIG_INVALID. */
function readConfigFile(file) {
  let text;
  try {
    text = readBounded(file, CONFIG_MAX_BYTES);
    if (text === undefined) throw unreadableConfig('unreadable');
  } catch (error) {
    if (error instanceof GraphError) throw error;
    throw unreadableConfig(error?.code === 'ENOENT' ? 'missing' : 'unreadable');
  }
  // A BOM is accepted, as in definition files.
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    throw unreadableConfig('invalid');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw unreadableConfig('invalid');
  return value;
}

/**
 * The text of the regular file `file` if it holds at most `max` bytes, else undefined. The bytes
 * are counted as they are read: a file's reported size can lie (`/proc` files say 0 and never
 * end). Opened without blocking, so a FIFO is refused instead of waited on.
 */
function readBounded(file, max) {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  try {
    if (!fs.fstatSync(fd).isFile()) return undefined;
    const chunks = [];
    const buffer = Buffer.allocUnsafe(64 * 1024);
    for (let total = 0; ; ) {
      const n = fs.readSync(fd, buffer, 0, buffer.length, null);
      if (n === 0) return Buffer.concat(chunks, total).toString('utf8');
      total += n;
      if (total > max) return undefined;
      chunks.push(Buffer.from(buffer.subarray(0, n)));
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** The config `raw` (read from `configFile`) as `CapabilityGraph.open` takes it: roots relative
 *  to the config file, the executor built from its kind (a promise for a semantic one, whose
 *  embedder module loads asynchronously), the `mcp` block set apart. `watch` watches every file
 *  provider whose authority does not say otherwise. */
function configOfFile(raw, configFile, { watch = false } = {}) {
  const base = path.dirname(path.resolve(configFile));
  const rel = (p) => (typeof p === 'string' && p !== '' ? path.resolve(base, p) : p);
  const { mcp, executor, ...config } = raw;
  if (Array.isArray(config.providers)) {
    config.providers = config.providers.map((p) => {
      if (p === null || typeof p !== 'object') return p;
      const copy = { ...p };
      if (copy.authority && typeof copy.authority === 'object' && copy.authority.kind === 'file') {
        copy.authority = { ...copy.authority, rootDir: rel(copy.authority.rootDir) };
        if (watch && !('watch' in copy.authority)) copy.authority.watch = true;
      }
      if ('documentRoot' in copy) copy.documentRoot = rel(copy.documentRoot);
      if (copy.knowledgeRoots && typeof copy.knowledgeRoots === 'object') {
        copy.knowledgeRoots = Object.fromEntries(
          Object.entries(copy.knowledgeRoots).map(([alias, r]) => [
            alias,
            r && typeof r === 'object' ? { ...r, ...(r.rootDir ? { rootDir: rel(r.rootDir) } : {}), ...(r.resolveFrom ? { resolveFrom: rel(r.resolveFrom) } : {}) } : r,
          ]),
        );
      }
      return copy;
    });
  }
  if (executor !== undefined) config.executor = buildExecutor(executor, base);
  const tokenFile = mcp?.http?.tokenFile;
  if (typeof tokenFile === 'string' && tokenFile !== '') return { config, mcp: { ...mcp, http: { ...mcp.http, tokenFile: rel(tokenFile) } } };
  return { config, mcp };
}

/** The built-in executor a config's `executor` names; its option errors point into `executor`. */
function buildExecutor(spec, base) {
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) throw configInvalid('executor', 'object with kind');
  const { kind, ...options } = spec;
  const within = (make) => {
    try {
      return make();
    } catch (error) {
      const where = error instanceof GraphError && error.code === 'CG_CONFIG_INVALID' ? error.details?.path : undefined;
      if (typeof where !== 'string' || where.startsWith('executor')) throw error;
      throw configInvalid(`executor.${where}`, error.details.expected);
    }
  };
  if (kind === 'lexical') return within(() => lexicalExecutor(options));
  if (kind === 'codex') return within(() => require('../executors/codex.cjs').codexExecutor(options));
  if (kind === 'semantic') return semanticFromConfig(options, base, within);
  throw configInvalid('executor', 'one of: lexical, codex, semantic');
}

/** `{ kind: 'semantic', minScore?, embedder? }`: `embedder` names a module (relative to the
 *  config) whose default export is the host embedder; without it, the first-party encoder. */
async function semanticFromConfig({ embedder, ...options }, base, within) {
  if (embedder === undefined) return within(() => semanticExecutor(options));
  if (typeof embedder !== 'string' || embedder === '') throw configInvalid('executor.embedder', 'module path');
  let loaded;
  try {
    loaded = await import(pathToFileURL(path.resolve(base, embedder)).href);
  } catch {
    throw configInvalid('executor.embedder', 'module path');
  }
  return within(() => semanticExecutor({ ...options, embedder: loaded.default }));
}

/** The open config of the config file `file` (its executor built) and its `mcp` block. */
async function loadConfigFile(file, options) {
  const { config, mcp } = configOfFile(readConfigFile(file), file, options);
  if (config.executor !== undefined) config.executor = await config.executor;
  return { config, mcp };
}

module.exports = { CONFIG_MAX, CONFIG_PROBLEM, readConfigFile, readBounded, configOfFile, buildExecutor, loadConfigFile, configInvalid };
