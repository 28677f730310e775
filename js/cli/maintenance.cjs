'use strict';
// The maintenance commands: doctor checks a config, init creates a provider, migrate moves a
// legacy provider to the directory layout. Each answers a report whose status is its exit code.

const fs = require('node:fs');
const path = require('node:path');
const { GraphError } = require('../errors.cjs');
const { CapabilityGraph, internal } = require('../graph/graph.cjs');
const { native, unwrap, call } = require('../engine/native.cjs');
const { usage } = require('./args.cjs');
const { DEFAULT_CONFIG, readConfig } = require('./config.cjs');
const { configOfFile } = require('../graph/config-file.cjs');
const { describe } = require('./output.cjs');
const { PACKAGE, schemaRef, installedRef } = require('./schema-ref.cjs');
const { text, shown, obstacle, treeError, Changes, failedWrite } = require('./tree.cjs');

async function doctor(flags) {
  const file = flags.config ?? DEFAULT_CONFIG;
  const raw = readConfig(file);
  const { config } = configOfFile(raw, file);
  // An embedder module that does not load is the executor check's failure, reported below.
  let executorFailure;
  config.executor = await Promise.resolve(config.executor).catch((error) => {
    executorFailure = error;
    return undefined;
  });
  const checks = [];
  const warnings = [];
  const check = (id, status, message) => checks.push({ id, status, message });
  const providers = Array.isArray(config.providers) ? config.providers : [];
  let budgets = config.budgets;
  try {
    const shell = await CapabilityGraph.open({ ...config, providers: [], hostAllowedProviders: undefined, integrationEnabledProviders: undefined });
    await shell.close();
    check('config', 'pass', 'configuration is valid');
    check('budgets', 'pass', 'budgets are valid');
  } catch (error) {
    const inBudgets = String(error?.details?.path ?? '').startsWith('budgets');
    check('config', inBudgets ? 'pass' : 'fail', inBudgets ? 'configuration is valid' : describe(error));
    check('budgets', inBudgets ? 'fail' : 'pass', inBudgets ? describe(error) : 'budgets are valid');
    budgets = undefined; // providers are still checked, with the default budgets
  }
  for (const [i, source] of providers.entries()) {
    const id = source?.providerId ?? source?.definition?.providerId ?? `#${i}`;
    let graph;
    try {
      graph = await CapabilityGraph.open({ providers: [source], budgets });
      check(`provider:${id}`, 'pass', `loaded at ${(await graph.listProviders()).items[0].staticRevision}`);
      const documents = (await internal.query(graph, 'checkDocuments', {})).providers[0];
      check(
        `documents:${id}`,
        documents.failures.length ? 'fail' : 'pass',
        documents.failures.length
          ? documents.failures.map((f) => `${f.capabilityId ? `${f.capabilityId} ` : ''}${f.knowledgeId}: ${f.code}`).join('; ')
          : `${documents.documents} local documents readable`,
      );
    } catch (error) {
      check(`provider:${id}`, 'fail', describe(error, i));
      // The whole list, as a compiler gives it; an inline definition's problems are in the config.
      const listed = await internal.diagnose({ providers: [source], budgets }).catch(() => undefined);
      const found = listed?.providers[0];
      if (found?.problems.length) {
        const where = path.basename(file);
        Object.assign(checks.at(-1), {
          problems: found.problems.map((p) => ({ file: p.file ?? where, ...p })),
          omitted: found.omitted,
        });
      }
    } finally {
      await graph?.close();
    }
  }
  if (raw.executor === undefined) {
    check('executor', 'warn', 'no executor: match answers CG_MODEL_NOT_CONFIGURED');
  } else if (executorFailure !== undefined) {
    check('executor', 'fail', describe(executorFailure));
  } else {
    check('executor', 'pass', `${raw.executor.kind} executor configured`);
  }
  const status = checks.some((c) => c.status === 'fail') ? 'failed' : 'ok';
  return { status, checks, warnings };
}

const PROVIDER_TEMPLATE = (providerId) => ({
  'provider.json': {
    providerId,
    name: providerId,
    version: '0.1.0',
    specification: {
      specificationId: `${providerId}.conventions`,
      version: '1',
      documents: [{ kind: 'document', knowledgeId: 'SPEC-01', role: 'specification', title: 'Conventions', locator: { type: 'relative-file', path: 'PROVIDER.md' } }],
    },
  },
  'capabilities/example.json': {
    capabilityId: 'example',
    name: 'Example capability',
    description: 'Replace this with something your software can do.',
    whenToUse: 'Describe when an agent should choose this capability.',
    examples: ['A task a user might ask for.'],
    knowledge: [{ kind: 'document', knowledgeId: 'EXAMPLE-GUIDE', role: 'guide', title: 'Example guide', locator: { type: 'relative-file', path: 'knowledge/example.md' } }],
  },
  'knowledge/example.md': '# Example guide\n\nExplain how to use the capability here.\n',
  'PROVIDER.md': `# ${providerId} conventions\n\nRules every capability of this provider follows.\n`,
});

/**
 * Puts `$schema` first in each JSON file of `files` ([file, content] pairs, changed in place)
 * whose schema `kinds` names, as the package resolves from the file's folder; the `schema` check
 * says where they point, or which files have none and how to add it.
 */
function nameSchemas(files, kinds) {
  const without = [];
  const found = new Set();
  for (const entry of files) {
    const [file, content] = entry;
    const kind = kinds[file];
    if (kind === undefined) continue;
    const ref = schemaRef(path.dirname(file), kind);
    if (ref === undefined) without.push([file, kind]);
    else {
      entry[1] = { $schema: ref, ...content };
      found.add(shown(path.dirname(path.resolve(path.dirname(file), ref))));
    }
  }
  if (without.length === 0) return { id: 'schema', status: 'pass', message: `"$schema" names the JSON Schemas in ${[...found].join(', ')}` };
  const [file, kind] = without[0];
  const example = installedRef(path.dirname(file), kind, process.cwd());
  return {
    id: 'schema',
    status: 'warn',
    message:
      `no "$schema" in ${without.map(([f]) => shown(f)).join(', ')}: ${PACKAGE} does not resolve from there (a global or one-off run); ` +
      `install it in the project (npm install --save-dev ${PACKAGE}) and add "$schema" as each file's first key, e.g. "${example}" in ${shown(file)}`,
  };
}

async function init(dir, flags) {
  let providerId = flags['provider-id'];
  providerId ??= path.basename(path.resolve(dir)).toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^[^a-z]+/, '');
  const template = PROVIDER_TEMPLATE(providerId);
  // The engine judges the ID and the whole template before anything is written; a folder name
  // that gives no ID (digits only) needs --provider-id.
  try {
    const trial = await CapabilityGraph.open({ providers: [{ definition: { ...template['provider.json'], capabilities: [template['capabilities/example.json']] } }] });
    await trial.close();
  } catch (error) {
    if (error instanceof GraphError && error.details?.field === 'providerId') throw usage('--provider-id');
    throw error;
  }
  const files = Object.entries(template).map(([rel, content]) => [path.resolve(dir, rel), content]);
  const configFile = path.resolve(DEFAULT_CONFIG);
  files.push([configFile, { providers: [{ providerId, authority: { kind: 'file', rootDir: path.relative(path.dirname(configFile), path.resolve(dir)) || '.', definitionLayout: 'directory' } }], executor: { kind: 'lexical' } }]);
  const schemas = nameSchemas(files, { [path.resolve(dir, 'provider.json')]: 'provider', [path.resolve(dir, 'capabilities/example.json')]: 'capability', [configFile]: 'config' });
  const planned = files.map(([f]) => shown(f));
  const existing = [];
  const blocked = [];
  const base = path.resolve(dir);
  for (const [file] of files) {
    const found = obstacle(file, file === configFile ? path.dirname(configFile) : base, true);
    if (found) blocked.push(`${shown(found.at)} ${found.what}`);
    else if (fs.existsSync(file)) existing.push(shown(file));
  }
  if (blocked.length || (existing.length && !flags.force)) {
    const checks = [];
    if (blocked.length) checks.push({ id: 'targets', status: 'fail', message: `in the way: ${[...new Set(blocked)].join(', ')}` });
    if (existing.length && !flags.force) checks.push({ id: 'targets', status: 'fail', message: `already exist: ${existing.join(', ')}` });
    return { status: 'conflict', checks, warnings: [], planned };
  }
  if (flags['dry-run']) return { status: 'planned', checks: [{ id: 'targets', status: 'pass', message: 'nothing in the way' }, schemas], warnings: [], planned };
  const changes = new Changes();
  const kept = [];
  let current;
  try {
    const staged = files.map(([file, content]) => {
      current = file;
      return [changes.stage(file, text(content)), file];
    });
    for (const [temp, file] of staged) {
      current = file;
      changes.place(temp, file, kept);
    }
  } catch (error) {
    const stuck = changes.undo();
    return failedWrite(treeError(error, shown(current)), stuck);
  }
  for (const aside of kept) fs.rmSync(aside, { force: true });
  const verified = await doctor({ config: configFile });
  return { status: verified.status, checks: [...verified.checks, schemas], warnings: [], written: planned };
}

/** What a person runs after `init` (its config is the default one, so no --config). */
const INIT_NEXT = `next:
  npx capability-graph catalog                               list the capabilities
  npx capability-graph match "a task a user might ask for"   find one for a task
  npx capability-graph doctor                                check again after editing the provider
  npx capability-graph mcp                                   serve them to an agent over MCP (stdio)
  An MCP client starts the server from this mcpServers entry (see "Connecting a client" in the
  package's docs/tools-and-mcp.md):
  { "mcpServers": { "capabilities": { "command": "npx", "args": ["capability-graph", "mcp", "--config", "capability-graph.json"] } } }
`;

async function migrate(dir, flags) {
  const root = path.resolve(dir);
  // The engine reads the manifest and lists the definitions in one pass over the tree.
  const { providerId, files: legacy } = unwrap(call(native.definitionFiles, root, 'legacy'));
  const moves = legacy.map((rel) => [rel, path.posix.join('capabilities', rel.replace(/\.capability\.json$/, '.json'))]);
  const planned = moves.map(([from, to]) => `${from} -> ${to}`);
  if (moves.length === 0) return { status: 'ok', checks: [{ id: 'layout', status: 'pass', message: 'no legacy definitions' }], warnings: [] };
  // Every destination is checked before anything moves: a file where a folder is needed, a
  // symbolic link on the way, a target that exists.
  const at = (rel) => path.join(root, ...rel.split('/'));
  const relative = (file) => path.relative(root, file).split(path.sep).join('/');
  const blocked = new Set();
  for (const [, to] of moves) {
    const found = obstacle(at(to), root);
    if (found) blocked.add(`${relative(found.at)} ${found.what}`);
  }
  if (blocked.size) {
    return { status: 'conflict', checks: [{ id: 'targets', status: 'fail', message: `in the way: ${[...blocked].join(', ')}` }], warnings: [], planned };
  }
  if (flags['dry-run']) return { status: 'planned', checks: [], warnings: [], planned };
  const revision = async (layout) => {
    const graph = await CapabilityGraph.open({ providers: [{ providerId, authority: { kind: 'file', rootDir: root, definitionLayout: layout } }] });
    try {
      return (await graph.listProviders()).items[0].staticRevision;
    } finally {
      await graph.close();
    }
  };
  const before = await revision('legacy');
  // The config's new text is ready before anything moves.
  let config;
  if (flags.config) {
    const raw = readConfig(flags.config);
    const base = path.dirname(path.resolve(flags.config));
    for (const p of raw.providers ?? []) {
      if (p?.authority?.kind === 'file' && path.resolve(base, p.authority.rootDir ?? '') === root) p.authority.definitionLayout = 'directory';
    }
    config = [path.resolve(flags.config), JSON.stringify(raw, null, 2) + '\n'];
  }
  const changes = new Changes();
  let current;
  try {
    for (const [from, to] of moves) {
      current = from;
      changes.mkdirs(path.dirname(at(to)));
      changes.rename(at(from), at(to));
    }
  } catch (error) {
    return failedWrite(treeError(error, current), changes.undo());
  }
  let after;
  try {
    after = await revision('directory');
  } catch {
    after = undefined;
  }
  if (after !== before) {
    const stuck = changes.undo();
    const checks = [{ id: 'revision', status: 'fail', message: `static revision would change (${before} -> ${after ?? 'invalid'}); rolled back` }];
    if (stuck) checks.push({ id: 'rollback', status: 'fail', message: `${stuck} step(s) could not be undone: compare the tree with the planned moves` });
    return { status: 'failed', checks, warnings: [] };
  }
  const checks = [{ id: 'revision', status: 'pass', message: `static revision ${before} unchanged` }];
  const written = moves.map(([, to]) => to);
  if (config) {
    const [file, content] = config;
    const kept = [];
    try {
      current = shown(file);
      changes.place(changes.stage(file, content), file, kept);
    } catch (error) {
      return failedWrite(treeError(error, current), changes.undo());
    }
    for (const aside of kept) fs.rmSync(aside, { force: true });
    written.push(shown(file));
  }
  return { status: 'ok', checks, warnings: [], written };
}

module.exports = { doctor, init, INIT_NEXT, migrate };
