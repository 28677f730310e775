// CapabilityGraph.openConfigFile (SPEC D31): the command line's config file opened from
// JavaScript exactly as its graph commands open it — the same graph for a good file, the same
// GraphError for a bad one, and never a path in the error.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { CapabilityGraph, GraphError, createToolAdapter } from '@devcodex/capability-graph';
import { repoRoot, seedRoot } from './helpers.mjs';

const require = createRequire(import.meta.url);
const seed = { providerId: 'seed.http', authority: { kind: 'file', rootDir: 'seed', definitionLayout: 'directory' } };

/** A folder holding the seed provider and the configs of the command line's tests. */
function project() {
  const dir = mkdtempSync(path.join(tmpdir(), 'cg-config-file-'));
  cpSync(seedRoot, path.join(dir, 'seed'), { recursive: true });
  const config = JSON.stringify({ providers: [seed], executor: { kind: 'lexical' }, mcp: { prefix: 'seed_', entryPoints: ['seed.http::route'] } });
  const files = {
    'capability-graph.json': config,
    'bom.json': '\uFEFF' + config,
    'example.json': JSON.stringify({ ...JSON.parse(readFileSync(path.join(repoRoot, 'examples', 'capability-graph.json'), 'utf8')), providers: [seed] }),
    'named-schema.json': JSON.stringify({ $schema: './node_modules/@devcodex/capability-graph/schema/config.json', providers: [seed] }),
    'bad-mcp.json': JSON.stringify({ providers: [seed], mcp: { prefix: 'bad prefix!' } }),
    'scoped.json': JSON.stringify({ providers: [seed, { definition: { providerId: 'other', name: 'Other', version: '1', capabilities: [] } }], hostAllowedProviders: ['seed.http', 'other'], integrationEnabledProviders: ['other', 'seed.http'] }),
    'nested/config.json': JSON.stringify({ providers: [{ ...seed, authority: { ...seed.authority, rootDir: '../seed' } }], budgets: { catalog: { maxItems: 3 } } }),
  };
  mkdirSync(path.join(dir, 'nested'));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return { dir, file: (name) => path.join(dir, name), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** What the command line's `providers --json --config FILE` answers: the items, or the error. */
function byCommandLine(file) {
  const r = spawnSync(process.execPath, [path.join(repoRoot, 'bin', 'capability-graph.cjs'), 'providers', '--json', '--config', file], { encoding: 'utf8' });
  return r.status === 0 ? { items: JSON.parse(r.stdout).items } : { error: JSON.parse(r.stderr).error };
}

/** `use(graph)` on the graph of the config file `file`, closed after. */
async function withGraph(file, use) {
  const graph = await CapabilityGraph.openConfigFile(file);
  try {
    return await use(graph);
  } finally {
    await graph.close();
  }
}

/** The same from JavaScript. */
async function byOpenConfigFile(file) {
  try {
    return await withGraph(file, async (graph) => ({ items: (await graph.listProviders()).items }));
  } catch (error) {
    assert.ok(error instanceof GraphError, String(error));
    return { error: error.toJSON() };
  }
}

test('openConfigFile opens each config the command line opens, as it opens it', async () => {
  const p = project();
  try {
    for (const name of ['capability-graph.json', 'bom.json', 'example.json', 'named-schema.json', 'bad-mcp.json', 'scoped.json', 'nested/config.json']) {
      const opened = await byOpenConfigFile(p.file(name));
      assert.ok(opened.items, `${name}: ${JSON.stringify(opened.error)}`);
      assert.deepEqual(opened, byCommandLine(p.file(name)), name);
    }
    // Roots are relative to the file, not to the current directory; budgets and scopes apply.
    await withGraph(path.relative(process.cwd(), p.file('nested/config.json')), async (graph) => assert.equal((await graph.listCatalog()).items.length, 3));
    await withGraph(p.file('scoped.json'), async (graph) =>
      assert.deepEqual((await graph.listProviders({ requestProviderScope: ['other'] })).items.map((i) => i.providerId), ['other']),
    );
  } finally {
    p.cleanup();
  }
});

test('executor kinds become the built-in executors; a semantic embedder module is found beside the file', async () => {
  const p = project();
  try {
    const withExecutor = (name, executor) => writeFileSync(p.file(name), JSON.stringify({ providers: [seed], executor }));
    withExecutor('lexical.json', { kind: 'lexical' });
    await withGraph(p.file('lexical.json'), async (graph) => {
      const r = await graph.match({ intent: 'add an HTTP endpoint' });
      assert.deepEqual([r.status, r.meta.executor.id, r.matches[0].qualifiedId], ['matched', 'lexical', 'seed.http::route.http']);
    });
    mkdirSync(p.file('models'));
    writeFileSync(
      p.file('models/embedder.mjs'),
      'globalThis.configFileEmbeds = 0;\n' +
        'export default { id: "length-test", dimensions: 4, embed(texts) { globalThis.configFileEmbeds += texts.length; const out = new Float32Array(texts.length * 4); texts.forEach((t, i) => { out[i * 4] = 1; out[i * 4 + (t.length % 3) + 1] = 1; }); return out; } };\n',
    );
    withExecutor('semantic.json', { kind: 'semantic', embedder: './models/embedder.mjs' });
    await withGraph(p.file('semantic.json'), async (graph) => {
      assert.equal((await graph.match({ intent: 'add an HTTP endpoint' })).meta.executor.id, 'semantic');
      assert.ok(globalThis.configFileEmbeds > 0, 'the embedder module beside the config embedded');
    });
    withExecutor('codex.json', { kind: 'codex' });
    await withGraph(p.file('codex.json'), (graph) => {
      const match = createToolAdapter(graph).tools.find((t) => t.name.endsWith('match'));
      assert.match(match.description, /host's executor/, 'codex runs as a host executor');
    });
  } finally {
    p.cleanup();
  }
});

test('a bad config file is the GraphError the command line gives, and names no path', async () => {
  const p = project();
  try {
    const bad = {
      'too-large-config.json': `{"x":"${'a'.repeat(1024 * 1024)}"}`,
      'not-json-config.json': '{ nope',
      'array-config.json': '[]',
      'unknown-kind-config.json': JSON.stringify({ providers: [seed], executor: { kind: 'nope' } }),
      'executor-text-config.json': JSON.stringify({ providers: [seed], executor: 'lexical' }),
      'executor-option-config.json': JSON.stringify({ providers: [seed], executor: { kind: 'lexical', minScore: 'high' } }),
      'embedder-missing-config.json': JSON.stringify({ providers: [seed], executor: { kind: 'semantic', embedder: './no-such-embedder.mjs' } }),
      'providers-text-config.json': JSON.stringify({ providers: 'seed' }),
      'root-number-config.json': JSON.stringify({ providers: [{ ...seed, authority: { ...seed.authority, rootDir: 42 } }] }),
      'root-missing-config.json': JSON.stringify({ providers: [{ ...seed, authority: { ...seed.authority, rootDir: 'no-such-folder' } }] }),
      'budgets-config.json': JSON.stringify({ providers: [seed], budgets: { catalog: { maxItems: 'many' } } }),
      'scope-config.json': JSON.stringify({ providers: [seed], hostAllowedProviders: ['other'] }),
    };
    for (const [name, text] of Object.entries(bad)) writeFileSync(p.file(name), text);
    mkdirSync(p.file('folder-config.json'));
    const expected = {
      'missing-config.json': [undefined],
      'folder-config.json': [undefined],
      'too-large-config.json': [undefined],
      'not-json-config.json': [undefined],
      'array-config.json': [undefined],
      'unknown-kind-config.json': ['executor', 'config'],
      'executor-text-config.json': ['executor', 'config'],
      'executor-option-config.json': ['executor.minScore', 'config'],
      'embedder-missing-config.json': ['executor.embedder', 'config'],
      'providers-text-config.json': ['providers', 'config'],
      'root-number-config.json': ['providers[0].authority.rootDir', 'config'],
      'root-missing-config.json': ['providers[0].authority.rootDir', 'load'],
      'budgets-config.json': ['budgets.catalog.maxItems', 'config'],
      'scope-config.json': ['providers[0]', 'config'],
    };
    for (const [name, [where, phase = 'config']] of Object.entries(expected)) {
      const error = await CapabilityGraph.openConfigFile(p.file(name)).then(
        () => assert.fail(`${name} opened`),
        (e) => e,
      );
      assert.ok(error instanceof GraphError, name);
      assert.deepEqual([error.code, error.phase, error.nextAction], ['CG_CONFIG_INVALID', phase, 'check_config'], name);
      if (where === undefined) assert.equal(error.message, 'Cannot read a valid bounded JSON configuration file', name);
      else assert.equal(error.details?.path, where, name);
      for (const seen of [JSON.stringify(error), error.message, inspect(error, { showHidden: true, depth: null })]) {
        assert.ok(!seen.includes(p.dir) && !seen.includes(name), `${name}: a path in ${seen}`);
      }
      assert.deepEqual(error.toJSON(), byCommandLine(p.file(name)).error, `${name}: as the command line says`);
    }
  } finally {
    p.cleanup();
  }
});

test('openConfigFile takes a path; the CommonJS entry has the same method', async () => {
  for (const file of [undefined, '', 42, { path: 'capability-graph.json' }]) {
    await assert.rejects(CapabilityGraph.openConfigFile(file), (e) => e instanceof GraphError && e.code === 'CG_INPUT_INVALID' && e.phase === 'config' && e.nextAction === 'fix_input' && e.details.field === 'path');
  }
  const cjs = require('@devcodex/capability-graph');
  assert.equal(cjs.CapabilityGraph.openConfigFile, CapabilityGraph.openConfigFile);
  const p = project();
  try {
    const graph = await cjs.CapabilityGraph.openConfigFile(p.file('capability-graph.json'));
    try {
      assert.ok(graph instanceof CapabilityGraph);
      assert.equal((await graph.listProviders()).items[0].providerId, 'seed.http');
    } finally {
      await graph.close();
    }
  } finally {
    p.cleanup();
  }
});
