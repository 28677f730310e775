// SPEC §14 D18: what `npm install @devcodex/capability-graph` gets — the platform packages, the
// packed contents, the publish guard, the fixed engine tables and the package without a binary.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { repoRoot } from './helpers.mjs';

const require = createRequire(import.meta.url);
const main = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8'));
// npm is a .cmd script on Windows, run through a shell there.
const shell = process.platform === 'win32';
const npm = (args, cwd) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], shell });
const tempDir = (name) => fs.mkdtempSync(path.join(os.tmpdir(), `cg-${name}-`));

const PLATFORMS = {
  'x86_64-unknown-linux-gnu': ['linux-x64-gnu', 'linux', 'x64', 'glibc'],
  'aarch64-unknown-linux-gnu': ['linux-arm64-gnu', 'linux', 'arm64', 'glibc'],
  'x86_64-unknown-linux-musl': ['linux-x64-musl', 'linux', 'x64', 'musl'],
  'aarch64-unknown-linux-musl': ['linux-arm64-musl', 'linux', 'arm64', 'musl'],
  'x86_64-apple-darwin': ['darwin-x64', 'darwin', 'x64'],
  'aarch64-apple-darwin': ['darwin-arm64', 'darwin', 'arm64'],
  'x86_64-pc-windows-msvc': ['win32-x64-msvc', 'win32', 'x64'],
};

test('the seed provider ships with the package and opens from seedProviderRoot', async () => {
  const { CapabilityGraph, seedProviderRoot } = await import('@devcodex/capability-graph');
  assert.equal(seedProviderRoot, path.join(repoRoot, 'examples', 'seed-provider'));
  const graph = await CapabilityGraph.open({ providers: [{ providerId: 'seed.http', authority: { kind: 'file', rootDir: seedProviderRoot, definitionLayout: 'directory' } }] });
  try {
    assert.deepEqual((await graph.resolve({ ids: ['seed.http::route.validation'] })).added, ['seed.http::schema.request']);
  } finally {
    await graph.close();
  }
});

test('the engine tables the package loads without a binary equal the engine', () => {
  const native = require('../binding.js');
  const tables = require('../js/engine-tables.cjs');
  const hint = 'js/engine-tables.cjs is stale: run `npm run engine-tables`';
  assert.deepEqual(tables.errorCatalog, JSON.parse(native.errorCatalog()), hint);
  assert.deepEqual(tables.neighborKinds, JSON.parse(native.neighborKinds()), hint);
  assert.deepEqual(tables.idPatterns, JSON.parse(native.idPatterns()), hint);
  assert.deepEqual(tables.poolVerbs, JSON.parse(native.poolVerbs()), hint);
  assert.deepEqual(tables.walkBounds, JSON.parse(native.walkBounds()), hint);
});

test('one platform package per napi target, each with os/cpu/libc, main, files and public access', () => {
  assert.deepEqual(main.napi.targets, Object.keys(PLATFORMS));
  assert.deepEqual(fs.readdirSync(path.join(repoRoot, 'npm')).sort(), Object.values(PLATFORMS).map(([p]) => p).sort());
  for (const [platform, nodeOs, cpu, libc] of Object.values(PLATFORMS)) {
    const manifest = JSON.parse(fs.readFileSync(path.join(repoRoot, 'npm', platform, 'package.json'), 'utf8'));
    const binary = `capability-graph.${platform}.node`;
    assert.equal(manifest.name, `@devcodex/capability-graph-${platform}`);
    assert.equal(manifest.version, main.version);
    assert.deepEqual(manifest.os, [nodeOs]);
    assert.deepEqual(manifest.cpu, [cpu]);
    assert.deepEqual(manifest.libc, libc && [libc]);
    assert.equal(manifest.main, binary);
    assert.deepEqual(manifest.files, [binary]);
    assert.deepEqual(manifest.publishConfig, { access: 'public' });
    assert.equal(manifest.license, 'MIT');
  }
  const check = spawnSync(process.execPath, ['scripts/platforms.mjs', '--check'], { cwd: repoRoot, encoding: 'utf8' });
  assert.equal(check.status, 0, check.stderr);
});

/** A copy of what `npm pack` needs, to change without touching the work tree. */
function packableCopy() {
  const dir = tempDir('packable');
  for (const entry of ['package.json', 'scripts', 'npm', 'bin', 'js', 'index.d.ts', 'binding.js', 'README.md', 'LICENSE', 'CHANGELOG.md', 'examples/seed-provider']) {
    if (fs.existsSync(path.join(repoRoot, entry))) fs.cpSync(path.join(repoRoot, entry), path.join(dir, entry), { recursive: true });
  }
  return dir;
}

test('`npm version` moves every platform manifest and the packed optionalDependencies with it', () => {
  const dir = packableCopy();
  try {
    npm(['version', '7.8.9', '--no-git-tag-version'], dir);
    for (const [platform] of Object.values(PLATFORMS)) {
      assert.equal(JSON.parse(fs.readFileSync(path.join(dir, 'npm', platform, 'package.json'), 'utf8')).version, '7.8.9', platform);
    }
    execFileSync(process.execPath, ['scripts/platforms.mjs', '--pack'], { cwd: dir });
    const packed = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    assert.deepEqual(
      packed.optionalDependencies,
      Object.fromEntries(Object.values(PLATFORMS).map(([p]) => [`@devcodex/capability-graph-${p}`, '7.8.9'])),
    );
    execFileSync(process.execPath, ['scripts/platforms.mjs', '--unpack'], { cwd: dir });
    assert.equal(JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).optionalDependencies, undefined);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

const ALLOWED = [
  /^package\.json$/,
  /^README\.md$/,
  /^LICENSE$/,
  /^CHANGELOG\.md$/,
  /^bin\/capability-graph\.cjs$/,
  /^binding\.js$/,
  /^index\.d\.(ts|mts|cts)$/,
  /^js\/([a-z-]+\/)*[a-z-]+\.(cjs|mjs|d\.cts|d\.mts)$/,
  /^examples\/seed-provider\/(provider\.json|PROVIDER\.md|capabilities\/[a-z-]+\.json|knowledge\/[a-z-]+\.md)$/,
  /^examples\/capability-graph\.json$/,
  /^schema\/(provider|capability|definition|config)\.json$/,
  /^docs\/([a-z-]+|README)\.md$/,
];

test('the packed main package: a whitelist of files, no binary, tests or sources, at most 400 KB, optionalDependencies at its version', () => {
  const out = tempDir('pack');
  try {
    const [info] = JSON.parse(npm(['pack', '--json', '--pack-destination', out], repoRoot));
    const files = info.files.map((f) => f.path);
    for (const file of files) assert.ok(ALLOWED.some((re) => re.test(file)), `not expected in the package: ${file}`);
    // docs/: the pages the README links, so its links work where the package is read from.
    for (const needed of ['binding.js', 'js/engine-tables.cjs', 'bin/capability-graph.cjs', 'index.d.ts', 'examples/seed-provider/provider.json', 'schema/provider.json', 'schema/config.json', 'docs/README.md', 'docs/budgets.md']) {
      assert.ok(files.includes(needed), `missing from the package: ${needed}`);
    }
    assert.ok(info.size <= 400 * 1024, `packed ${info.size} bytes`);
    const tarball = path.join(out, info.filename);
    const manifest = JSON.parse(execFileSync('tar', ['-xzOf', tarball, 'package/package.json'], { encoding: 'utf8' }));
    assert.deepEqual(Object.keys(manifest.optionalDependencies).sort(), Object.values(PLATFORMS).map(([p]) => `@devcodex/capability-graph-${p}`).sort());
    assert.ok(Object.values(manifest.optionalDependencies).every((v) => v === main.version));
    assert.equal(manifest.dependencies, undefined, 'a consumer installs nothing but the package and its binary');
    assert.deepEqual(manifest.peerDependenciesMeta['@modelcontextprotocol/sdk'], { optional: true });
    assert.equal(JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')).optionalDependencies, undefined, 'postpack restores package.json');
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
});

test('the publish guard refuses a main package with a binary and a platform package with a debug build', () => {
  const dir = packableCopy();
  try {
    const guard = (cwd, mode) => spawnSync(process.execPath, [path.join(repoRoot, 'scripts', 'publish-guard.mjs'), mode], { cwd, encoding: 'utf8' });
    assert.equal(guard(dir, 'main').status, 0, guard(dir, 'main').stderr);

    fs.writeFileSync(path.join(dir, 'capability-graph.linux-x64-gnu.node'), 'not really a binary');
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ ...pkg, files: [...pkg.files, '*.node'] }));
    const withBinary = guard(dir, 'main');
    assert.equal(withBinary.status, 1);
    assert.match(withBinary.stderr, /capability-graph\.linux-x64-gnu\.node: the main package must not contain a native binary/);
    const pack = spawnSync('npm', ['pack', '--dry-run'], { cwd: dir, encoding: 'utf8', shell });
    assert.notEqual(pack.status, 0, 'npm pack runs the guard');

    fs.rmSync(path.join(dir, 'binding.js'));
    assert.match(guard(dir, 'main').stderr, /binding\.js is missing: run `npm run build` first/);

    const platform = path.join(dir, 'npm', 'linux-x64-gnu');
    const binary = path.join(platform, 'capability-graph.linux-x64-gnu.node');
    fs.rmSync(binary, { force: true });
    assert.match(guard(platform, 'platform').stderr, /capability-graph\.linux-x64-gnu\.node is missing/);
    // The debug build of this work tree carries the marker `=debug`.
    const built = path.join(repoRoot, 'capability-graph.linux-x64-gnu.node');
    const profile = require('../binding.js').buildProfile();
    fs.copyFileSync(built, binary);
    const real = guard(platform, 'platform');
    if (profile.endsWith('=release')) assert.equal(real.status, 0, real.stderr);
    else assert.match(real.stderr, /is a debug build; publish only a release build/);
    fs.rmSync(binary);
    fs.writeFileSync(binary, Buffer.concat([Buffer.alloc(64), Buffer.from('capability-graph-build-profile=release\0')]));
    assert.equal(guard(platform, 'platform').status, 0);
    fs.writeFileSync(binary, Buffer.alloc(4096));
    assert.match(guard(platform, 'platform').stderr, /is a unmarked build/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('installed without its optional dependencies: import, --help and --version work; engine calls name the missing binary', () => {
  const out = tempDir('nobinary');
  try {
    const [info] = JSON.parse(npm(['pack', '--json', '--pack-destination', out], repoRoot));
    const project = path.join(out, 'project');
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    npm(['install', '--omit=optional', '--no-audit', '--no-fund', path.join(out, info.filename)], project);
    const installed = fs.readdirSync(path.join(project, 'node_modules', '@devcodex'));
    assert.deepEqual(installed, ['capability-graph']);

    const probe = `
      import { CapabilityGraph, GraphError, ErrorCode, parseQualifiedId } from '@devcodex/capability-graph';
      const out = { codes: Object.keys(ErrorCode).length };
      try { await CapabilityGraph.open({ providers: [] }); } catch (e) { out.open = { graphError: e instanceof GraphError, ...e.toJSON() }; }
      try { parseQualifiedId('a::b'); } catch (e) { out.parse = e.details?.reason; }
      console.log(JSON.stringify(out));`;
    const result = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', probe], { cwd: project, encoding: 'utf8' }));
    assert.ok(result.codes > 10);
    const platform = require('../js/engine/platform.cjs').platformName();
    assert.equal(result.parse, 'native_binding_missing');
    assert.deepEqual(result.open, {
      graphError: true,
      code: 'CG_CONFIG_INVALID',
      phase: 'config',
      message: 'Configuration is invalid',
      nextAction: 'check_config',
      details: {
        reason: 'native_binding_missing',
        platform,
        package: `@devcodex/capability-graph-${platform}`,
        supportedTargets: main.napi.targets,
      },
    });

    const bin = path.join(project, 'node_modules', '@devcodex', 'capability-graph', 'bin', 'capability-graph.cjs');
    const cli = (...args) => spawnSync(process.execPath, [bin, ...args], { cwd: project, encoding: 'utf8' });
    assert.equal(cli('--version').stdout.trim(), main.version);
    assert.match(cli('--help').stdout, /^Usage: capability-graph <command>/m);
    fs.writeFileSync(path.join(project, 'capability-graph.json'), '{"providers":[]}');
    const providers = cli('providers');
    assert.equal(providers.status, 1);
    assert.equal(providers.stdout, '');
    const envelope = JSON.parse(providers.stderr);
    assert.equal(envelope.error.code, 'CG_CONFIG_INVALID');
    assert.equal(envelope.error.details.reason, 'native_binding_missing');
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
});
