'use strict';
// The command line's config file: read bounded, roots made relative to it, the executor built
// from its kind, and the graph opened from it.

const fs = require('node:fs');
const path = require('node:path');
const { GraphError, catalog } = require('../errors.cjs');
const { CapabilityGraph } = require('../graph/graph.cjs');
const { lexicalExecutor, semanticExecutor } = require('../executors/builtin.cjs');

const CONFIG_MAX_BYTES = 1024 * 1024;
const CONFIG_MAX = `${CONFIG_MAX_BYTES / 1024 / 1024} MiB`;
const DEFAULT_CONFIG = 'capability-graph.json';

/** What went wrong with the config file, for the human line on a terminal (never in the envelope). */
const CONFIG_PROBLEM = Symbol('configProblem');

function unreadableConfig(file, problem) {
  const entry = catalog.codes.find((c) => c.code === 'CG_CONFIG_INVALID');
  const error = new GraphError({ code: 'CG_CONFIG_INVALID', phase: 'config', message: entry.messages[1] });
  Object.defineProperty(error, CONFIG_PROBLEM, { value: { file, problem } });
  return error;
}

/** Reads the JSON config file; a missing, oversized or non-JSON file fails the command. */
function readConfig(file) {
  let text;
  try {
    text = readBounded(file, CONFIG_MAX_BYTES);
    if (text === undefined) throw unreadableConfig(file, 'unreadable');
  } catch (error) {
    if (error instanceof GraphError) throw error;
    throw unreadableConfig(file, error?.code === 'ENOENT' ? 'missing' : 'unreadable');
  }
  // A BOM is accepted, as in definition files.
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    throw unreadableConfig(file, 'invalid');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw unreadableConfig(file, 'invalid');
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

/** The line a person reads after the envelope: which file (as given) and what is wrong with it. */
function configHint({ file, problem }) {
  const name = JSON.stringify(file);
  if (problem === 'missing') {
    return `capability-graph: config file ${name} does not exist; create one with \`capability-graph init DIR\` or pass --config FILE\n`;
  }
  if (problem === 'invalid') return `capability-graph: config file ${name} is not valid JSON holding an object\n`;
  return `capability-graph: config file ${name} cannot be read (not a readable regular file of at most ${CONFIG_MAX})\n`;
}

/** The config as `CapabilityGraph.open` takes it: roots relative to the config file, the
 *  executor built from its kind, the `mcp` block set apart. */
function openConfig(raw, configFile, { watch = false } = {}) {
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
  // A semantic executor's embedder module loads asynchronously: openers await the executor.
  if (executor !== undefined) config.executor = buildExecutor(executor, base);
  return { config, mcp };
}

function buildExecutor(spec, base) {
  const invalid = (expected) => new GraphError({ code: 'CG_CONFIG_INVALID', phase: 'config', details: { path: 'executor', expected } });
  if (spec === null || typeof spec !== 'object') throw invalid('object with kind');
  const { kind, ...options } = spec;
  if (kind === 'lexical') return lexicalExecutor(options);
  if (kind === 'codex') return require('../executors/codex.cjs').codexExecutor(options);
  if (kind === 'semantic') return semanticFromConfig(options, base);
  throw invalid('one of: lexical, codex, semantic');
}

/** `{ kind: 'semantic', minScore?, embedder? }`: `embedder` names a module (relative to the
 *  config) whose default export is the host embedder; without it, the first-party encoder. */
async function semanticFromConfig({ embedder, ...options }, base) {
  if (embedder === undefined) return semanticExecutor(options);
  if (typeof embedder !== 'string' || embedder === '') {
    throw new GraphError({ code: 'CG_CONFIG_INVALID', phase: 'config', details: { path: 'executor.embedder', expected: 'module path' } });
  }
  let loaded;
  try {
    loaded = await import(require('node:url').pathToFileURL(path.resolve(base, embedder)).href);
  } catch {
    throw new GraphError({ code: 'CG_CONFIG_INVALID', phase: 'config', details: { path: 'executor.embedder', expected: 'module path' } });
  }
  return semanticExecutor({ ...options, embedder: loaded.default });
}

async function openGraph(flags, stderr) {
  const file = flags.config ?? DEFAULT_CONFIG;
  const { config, mcp } = openConfig(readConfig(file), file, { watch: flags.watch === true });
  config.executor = await config.executor;
  // Progress only for a person watching: never with --json, never into a pipe.
  const progress = stderr.isTTY && !flags.json;
  if (progress) stderr.write('loading providers…');
  try {
    return { graph: await CapabilityGraph.open(config), mcp };
  } finally {
    if (progress) stderr.write('\r\x1b[K');
  }
}

/** CG_CONFIG_INVALID (phase config) for `path` of the config file. */
function configInvalid(path, expected) {
  return new GraphError({ code: 'CG_CONFIG_INVALID', phase: 'config', details: { path, ...(expected ? { expected } : {}) } });
}

module.exports = { CONFIG_MAX, DEFAULT_CONFIG, CONFIG_PROBLEM, readConfig, configHint, openConfig, buildExecutor, openGraph, configInvalid };
