// Precomputed vectors: `capability-graph embed DIR` writes vectors/<model-id>.bin beside
// provider.json; a graph opening the provider embeds only what the file does not hold for the
// same model and text; stale, foreign and corrupt files are ignored, never trusted.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CapabilityGraph, semanticExecutor } from '@devcodex/capability-graph';
import { projectWithoutModel, repoRoot } from './helpers.mjs';

const STATS = Symbol.for('capability-graph.stats');

// The same embedder in the CLI's process (as a module the config names) and in this one.
const EMBEDDER = path.join(repoRoot, '__test__', 'fixtures', 'words-embedder.mjs');

function capability(i, extra = {}) {
  return {
    capabilityId: `area${Math.floor(i / 100)}.task${i}`,
    name: `Task ${i}`,
    description: `Handles job number ${i} of the catalog for tenant ${i % 7}.`,
    whenToUse: `Work item ${i} needs doing.`,
    ...extra,
  };
}

/** A project with a provider folder of `n` capabilities and a config naming the embedder module. */
function project(n) {
  const dir = mkdtempSync(path.join(tmpdir(), 'cg-vectors-'));
  mkdirSync(path.join(dir, 'node_modules', '@devcodex'), { recursive: true });
  symlinkSync(repoRoot, path.join(dir, 'node_modules', '@devcodex', 'capability-graph'), 'dir');
  const root = path.join(dir, 'acme');
  mkdirSync(path.join(root, 'capabilities'), { recursive: true });
  writeFileSync(path.join(root, 'provider.json'), JSON.stringify({ providerId: 'acme', name: 'Acme', version: '1' }));
  for (let i = 0; i < n; i++) writeFileSync(path.join(root, 'capabilities', `c${i}.json`), JSON.stringify(capability(i)));
  copyFileSync(EMBEDDER, path.join(dir, 'embedder.mjs'));
  writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ providers: [], executor: { kind: 'semantic', embedder: './embedder.mjs' } }));
  const cli = (...args) => {
    const r = spawnSync(process.execPath, [path.join(repoRoot, 'bin', 'capability-graph.cjs'), ...args], { cwd: dir, encoding: 'utf8' });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  return { dir, root, cli, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

async function counting() {
  const { default: base, vectors } = await import('./fixtures/words-embedder.mjs');
  const calls = [];
  return { id: base.id, dimensions: base.dimensions, calls, embed: (texts) => (calls.push(...texts), vectors(texts, base.dimensions)) };
}

async function openWith(root, embedder) {
  const g = await CapabilityGraph.open({
    providers: [{ providerId: 'acme', authority: { kind: 'file', rootDir: root, definitionLayout: 'directory' } }],
    executor: semanticExecutor({ embedder }),
  });
  // The first match waits for the vectors.
  await g.match({ intent: 'handles job number 3' });
  return g;
}

test('embed writes the documented file; a graph opening the provider with it embeds nothing but intents', async () => {
  const p = project(30);
  try {
    const r = p.cli('embed', 'acme', '--config', 'config.json', '--json');
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.equal(report.status, 'ok');
    assert.deepEqual(report.written, ['vectors/words-test.bin']);
    const bytes = readFileSync(path.join(p.root, 'vectors', 'words-test.bin'));
    assert.equal(bytes.subarray(0, 8).toString('latin1'), 'CGVECTS\0');
    assert.equal(bytes.readUInt32LE(8), 1);
    assert.equal(bytes.readUInt32LE(12), 'words-test'.length);
    assert.equal(bytes.subarray(16, 26).toString(), 'words-test');
    assert.equal(bytes.readUInt32LE(26), 16);
    assert.equal(bytes.readUInt32LE(30), 30);

    const embedder = await counting();
    const g = await openWith(p.root, embedder);
    assert.deepEqual(embedder.calls, ['handles job number 3']);
    const stats = g[STATS]();
    assert.equal(stats.providers[0].vectorsFile, 'read');
    assert.ok(stats.providers[0].vectorBytes <= 30 * 512);
    assert.deepEqual(await g.status(), {
      providers: [{ providerId: 'acme', vectors: { source: 'file', state: 'used', reason: null, entries: 30, used: 30, stale: 0, embedded: 0 } }],
    });
    await g.close();

    // One capability changed: only its text is embedded.
    writeFileSync(path.join(p.root, 'capabilities', 'c5.json'), JSON.stringify(capability(5, { description: 'Something else entirely.' })));
    const again = await counting();
    const g2 = await openWith(p.root, again);
    assert.equal(again.calls.filter((t) => t !== 'handles job number 3').length, 1);
    assert.match(again.calls[0], /Something else entirely/);
    assert.deepEqual((await g2.status()).providers[0].vectors, { source: 'file', state: 'partial', reason: null, entries: 30, used: 29, stale: 1, embedded: 1 });
    await g2.close();
  } finally {
    p.cleanup();
  }
});

test('corrupt, truncated and foreign vectors files are ignored: every capability is embedded', async () => {
  const p = project(12);
  try {
    assert.equal(p.cli('embed', 'acme', '--config', 'config.json', '--json').code, 0);
    const file = path.join(p.root, 'vectors', 'words-test.bin');
    const good = readFileSync(file);
    const foreign = Buffer.from(good);
    foreign.write('words-tesx', 16);
    const huge = Buffer.from(good);
    huge.writeUInt32LE(0xffffffff, 30);
    const badScale = Buffer.from(good);
    badScale.writeFloatLE(Number.NaN, 34 + 2 + 'area0.task0'.length + 16);
    for (const [name, bytes, status] of [
      ['garbage', Buffer.from('not a vectors file'), 'corrupt'],
      ['truncated', good.subarray(0, good.length - 3), 'truncated'],
      ['trailing bytes', Buffer.concat([good, Buffer.from([1])]), 'corrupt'],
      ['count beyond the file', huge, 'corrupt'],
      ['bad scale', badScale, 'corrupt'],
      ['another model', foreign, 'foreign'],
    ]) {
      writeFileSync(file, bytes);
      const embedder = await counting();
      const g = await openWith(p.root, embedder);
      assert.equal(embedder.calls.length, 12 + 1, name);
      assert.equal(g[STATS]().providers[0].vectorsFile, status, name);
      assert.deepEqual((await g.status()).providers[0].vectors, { source: 'file', state: 'ignored', reason: status, entries: 0, used: 0, stale: 0, embedded: 12 }, name);
      assert.equal((await g.match({ intent: 'handles job number 3' })).status, 'matched', name);
      await g.close();
    }
  } finally {
    p.cleanup();
  }
});

test('embed without the model package or an embedder fails CG_MODEL_UNAVAILABLE / check_config naming the package', () => {
  const p = project(2);
  const bare = projectWithoutModel();
  try {
    const r = spawnSync(process.execPath, [bare.bin, 'embed', p.root, '--json'], { cwd: bare.dir, encoding: 'utf8' });
    assert.equal(r.status, 1);
    const { error } = JSON.parse(r.stderr);
    assert.deepEqual([error.code, error.nextAction, error.details.package], ['CG_MODEL_UNAVAILABLE', 'check_config', '@devcodex/capability-graph-minilm']);
    assert.equal(r.stderr.includes(p.dir) || r.stderr.includes(bare.dir), false);
  } finally {
    p.cleanup();
    bare.cleanup();
  }
});

test('10k capabilities opened with a current vectors file embed none of them', async () => {
  const p = project(10_000);
  try {
    assert.equal(p.cli('embed', 'acme', '--config', 'config.json', '--json').code, 0);
    const embedder = await counting();
    const g = await openWith(p.root, embedder);
    assert.deepEqual(embedder.calls, ['handles job number 3']);
    const [stats] = g[STATS]().providers;
    assert.equal(stats.capabilities, 10_000);
    assert.ok(stats.vectorBytes / 10_000 <= 512, String(stats.vectorBytes));
    await g.close();
  } finally {
    p.cleanup();
  }
});

test('doctor checks a semantic executor and its embedder module', () => {
  const p = project(1);
  try {
    writeFileSync(path.join(p.dir, 'good.json'), JSON.stringify({ providers: [], executor: { kind: 'semantic', embedder: './embedder.mjs' } }));
    writeFileSync(path.join(p.dir, 'bad.json'), JSON.stringify({ providers: [], executor: { kind: 'semantic', embedder: './missing.mjs' } }));
    const good = JSON.parse(p.cli('doctor', '--config', 'good.json', '--json').stdout);
    assert.equal(good.checks.find((c) => c.id === 'executor').status, 'pass');
    const r = p.cli('doctor', '--config', 'bad.json', '--json');
    assert.equal(r.code, 1);
    const bad = JSON.parse(r.stdout);
    assert.equal(bad.checks.find((c) => c.id === 'executor').status, 'fail');
    assert.match(bad.checks.find((c) => c.id === 'executor').message, /CG_CONFIG_INVALID/);
  } finally {
    p.cleanup();
  }
});
