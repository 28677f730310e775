'use strict';
// `embed DIR`: a provider folder's capability vectors, written beside its definitions.

const fs = require('node:fs');
const path = require('node:path');
const { CapabilityGraph, internal } = require('../graph/graph.cjs');
const { native, unwrap, call } = require('../engine/native.cjs');
const { semanticExecutor } = require('../executors/builtin.cjs');
const { loadConfig } = require('./config.cjs');
const { treeError } = require('./tree.cjs');

/** How long `embed` waits for the vectors of a provider (the model embeds every capability). */
const EMBED_WAIT_MS = 3_600_000;

/**
 * `embed DIR`: opens the provider folder DIR alone with the config's semantic executor (and
 * budgets), waits for its capability vectors and writes them beside provider.json, replacing
 * the file whole (written aside, then renamed).
 */
async function embed(dir, flags) {
  const root = path.resolve(dir);
  let options = {};
  if (flags.config !== undefined) {
    const { config } = await loadConfig(flags.config);
    options = { budgets: config.budgets, executor: config.executor };
  }
  if (options.executor?.id !== 'semantic') options.executor = semanticExecutor();
  const layout = fs.existsSync(path.join(root, 'capabilities')) ? 'directory' : 'legacy';
  // The engine reads the provider ID from the manifest.
  const { providerId } = unwrap(call(native.definitionFiles, root, layout));
  const graph = await CapabilityGraph.open({ ...options, providers: [{ providerId, authority: { kind: 'file', rootDir: root, definitionLayout: layout } }] });
  try {
    const { file, count, bytes } = await internal.vectorsFile(graph, providerId, EMBED_WAIT_MS);
    const target = path.join(root, ...file.split('/'));
    const aside = `${target}.${process.pid}.tmp`;
    try {
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.writeFileSync(aside, bytes);
      fs.renameSync(aside, target);
    } catch (error) {
      fs.rmSync(aside, { force: true });
      throw treeError(error, file);
    }
    return { status: 'ok', checks: [{ id: 'vectors', status: 'pass', message: `${count} ${count === 1 ? 'capability' : 'capabilities'} embedded` }], written: [file], warnings: [] };
  } finally {
    await graph.close();
  }
}

module.exports = { embed };
