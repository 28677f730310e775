// The agent SDK subpaths as a whole: they load no SDK until a helper runs, a missing SDK is
// CG_CONFIG_INVALID naming the package to install, and the plain-JSON helpers need none.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from './helpers.mjs';

const SUBPATHS = ['ai-sdk', 'openai-agents', 'openai', 'anthropic', 'langchain'];
const preload = path.join(repoRoot, '__test__', 'fixtures', 'without-agent-sdks.cjs');

/** Runs `body` (CommonJS, `adapter` in scope) in a child without the agent SDKs; prints its JSON. */
function withoutSdks(body, { esm = false } = {}) {
  const load = esm ? (p) => `await import('@devcodex/capability-graph/${p}')` : (p) => `require('@devcodex/capability-graph/${p}')`;
  const code = `
    (async () => {
      const { CapabilityGraph, createToolAdapter, GraphError, seedProviderRoot } = require('@devcodex/capability-graph');
      const graph = await CapabilityGraph.open({ providers: [{ providerId: 'seed.http', authority: { kind: 'file', rootDir: seedProviderRoot, definitionLayout: 'directory' } }] });
      const adapter = createToolAdapter(graph, { dialect: 'strict' });
      const sdk = { ${SUBPATHS.map((p) => `'${p}': ${load(p)}`).join(', ')} };
      const attempt = (fn) => { try { return { value: fn() }; } catch (e) { return { isGraphError: e instanceof GraphError, error: e.toJSON ? e.toJSON() : String(e) }; } };
      const out = await (async () => { ${body} })();
      await graph.close();
      console.log(JSON.stringify(out));
    })();`;
  return JSON.parse(execFileSync(process.execPath, ['-r', preload, '-e', code], { cwd: repoRoot, encoding: 'utf8' }));
}

test('without its SDK installed, a helper names the package to install (CG_CONFIG_INVALID / check_config), through require and import', () => {
  for (const esm of [false, true]) {
    const out = withoutSdks(
      `return {
        ai: attempt(() => sdk['ai-sdk'].aiSdkTools(adapter)),
        agents: attempt(() => sdk['openai-agents'].openaiAgentsTools(adapter)),
        langchain: attempt(() => sdk.langchain.langchainTools(adapter)),
        chat: attempt(() => sdk.openai.openaiChatTools(adapter).length),
        responses: attempt(() => sdk.openai.openaiResponsesTools(adapter).length),
        anthropic: attempt(() => sdk.anthropic.anthropicTools(adapter).length),
        tools: adapter.tools.length,
      };`,
      { esm },
    );
    for (const [key, pkg] of [['ai', 'ai'], ['agents', '@openai/agents'], ['langchain', '@langchain/core']]) {
      assert.deepEqual(out[key], {
        isGraphError: true,
        error: { code: 'CG_CONFIG_INVALID', phase: 'config', message: 'Configuration is invalid', nextAction: 'check_config', details: { package: pkg } },
      }, `${key} (${esm ? 'import' : 'require'})`);
    }
    // The OpenAI and Anthropic helpers are plain JSON: they need no SDK at all.
    for (const key of ['chat', 'responses', 'anthropic']) assert.deepEqual(out[key], { value: out.tools }, key);
  }
});

test('loading the SDK subpaths loads no SDK', () => {
  const code = `
    ${SUBPATHS.map((p) => `require('@devcodex/capability-graph/${p}');`).join('\n')}
    const loaded = Object.keys(require.cache).filter((f) => /node_modules[\\\\/](ai|openai|@openai[\\\\/]agents[^\\\\/]*|@anthropic-ai|@langchain|@ai-sdk)[\\\\/]/.test(f));
    console.log(JSON.stringify(loaded));`;
  assert.deepEqual(JSON.parse(execFileSync(process.execPath, ['-e', code], { cwd: repoRoot, encoding: 'utf8' })), []);
});

test('the package declares each SDK an optional peer and exports each subpath with its types', async () => {
  const { default: manifest } = await import('../package.json', { with: { type: 'json' } });
  for (const pkg of ['ai', '@openai/agents', 'openai', '@anthropic-ai/sdk', '@langchain/core']) {
    assert.ok(manifest.peerDependencies[pkg], `${pkg} is a peer`);
    assert.deepEqual(manifest.peerDependenciesMeta[pkg], { optional: true }, `${pkg} is optional`);
    assert.ok(manifest.devDependencies[pkg], `${pkg} is tested`);
  }
  assert.equal(manifest.dependencies, undefined, 'no runtime dependency');
  for (const subpath of SUBPATHS) {
    assert.deepEqual(manifest.exports[`./${subpath}`], {
      import: { types: `./js/sdk/${subpath}/index.d.mts`, default: `./js/sdk/${subpath}/index.mjs` },
      require: { types: `./js/sdk/${subpath}/index.d.cts`, default: `./js/sdk/${subpath}/index.cjs` },
    });
  }
});

test('an SDK is found beside this package, or else in the host project, as the weights package is (a linked checkout)', async (t) => {
  const fs = await import('node:fs');
  const os = await import('node:os');
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'cg-peer-')));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  /** This package's JS layer in `root`'s node_modules, or as a checkout of its own at `root`. */
  const installMain = (root, { checkout = false } = {}) => {
    const target = checkout ? root : path.join(root, 'node_modules', '@devcodex', 'capability-graph');
    fs.mkdirSync(target, { recursive: true });
    fs.cpSync(path.join(repoRoot, 'js'), path.join(target, 'js'), { recursive: true });
    fs.copyFileSync(path.join(repoRoot, 'package.json'), path.join(target, 'package.json'));
    return target;
  };
  /** An SDK stand-in `cg-test-sdk` in `root`'s node_modules with a `tools` subpath naming `where`. */
  const installSdk = (root, where) => {
    const target = path.join(root, 'node_modules', 'cg-test-sdk');
    fs.mkdirSync(target, { recursive: true });
    fs.writeFileSync(path.join(target, 'package.json'), JSON.stringify({ name: 'cg-test-sdk', version: '1.0.0', main: 'index.js' }));
    fs.writeFileSync(path.join(target, 'index.js'), `exports.where = ${JSON.stringify(where)};`);
    fs.writeFileSync(path.join(target, 'tools.js'), `exports.where = ${JSON.stringify(`${where}/tools`)};`);
  };
  const load = (main, cwd) => {
    const peer = JSON.stringify(path.join(main, 'js', 'engine', 'peer.cjs'));
    const script = `const { requirePeer } = require(${peer}); const out = {};
      for (const sub of [undefined, 'tools']) { try { out[sub ?? '.'] = requirePeer('cg-test-sdk', sub).where; } catch (e) { out[sub ?? '.'] = e.toJSON(); } }
      console.log(JSON.stringify(out));`;
    return JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd, encoding: 'utf8', timeout: 30_000 }));
  };
  const missing = { code: 'CG_CONFIG_INVALID', phase: 'config', message: 'Configuration is invalid', nextAction: 'check_config', details: { package: 'cg-test-sdk' } };

  // Installed in the host's project: found beside this package, whatever the working directory.
  const app = path.join(dir, 'app');
  const installed = installMain(app);
  installSdk(app, 'app');
  assert.deepEqual(load(installed, dir), { '.': 'app', tools: 'app/tools' });

  // A checkout linked into the host (npm link, file:): the host's own SDK, from its project.
  const checkout = installMain(path.join(dir, 'checkout'), { checkout: true });
  const host = path.join(dir, 'host');
  installSdk(host, 'host');
  assert.deepEqual(load(checkout, host), { '.': 'host', tools: 'host/tools' });
  assert.deepEqual(load(checkout, dir), { '.': missing, tools: missing });
  // A checkout with its own copy uses that one first, as for the weights package.
  installSdk(checkout, 'checkout');
  assert.deepEqual(load(checkout, host), { '.': 'checkout', tools: 'checkout/tools' });
});
