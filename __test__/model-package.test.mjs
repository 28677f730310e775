// The weights package of the first-party encoder: resolved lazily beside this package or from
// the host's project, or CG_MODEL_UNAVAILABLE / check_config naming the package (never a path).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { needsModel, repoRoot } from './helpers.mjs';

const require = createRequire(import.meta.url);
const MINILM = '@devcodex/capability-graph-minilm';

/** A copy of this package's JS layer installed in `dir` (no native binary: none is needed). */
function installMain(dir) {
  const target = path.join(dir, 'node_modules', '@devcodex', 'capability-graph');
  fs.mkdirSync(target, { recursive: true });
  fs.cpSync(path.join(repoRoot, 'js'), path.join(target, 'js'), { recursive: true });
  fs.copyFileSync(path.join(repoRoot, 'package.json'), path.join(target, 'package.json'));
  return target;
}

/** A weights package in `dir`'s node_modules: its entry files, and model.json unless `unbuilt`. */
function installModel(dir, { unbuilt = false } = {}) {
  const target = path.join(dir, 'node_modules', '@devcodex', 'capability-graph-minilm');
  fs.mkdirSync(target, { recursive: true });
  for (const f of ['package.json', 'index.js']) fs.copyFileSync(path.join(repoRoot, 'packages', 'minilm', f), path.join(target, f));
  if (!unbuilt) fs.writeFileSync(path.join(target, 'model.json'), JSON.stringify({ modelId: 'test-model/int8-1-00000000', sha256: '0'.repeat(64) }));
  return target;
}

/** What resolveModel() of the main package installed in `main` answers, run with `cwd`. */
function resolveIn(main, cwd) {
  const script = `try { console.log(JSON.stringify({ ok: require(${JSON.stringify(path.join(main, 'js', 'executors', 'model.cjs'))}).resolveModel() })); }
    catch (e) { console.log(JSON.stringify({ error: e.toJSON ? e.toJSON() : String(e), message: e.message, stack: String(e.stack) })); }`;
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd, encoding: 'utf8', timeout: 30_000 }));
}

function scratch(t) {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'cg-model-')));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function assertUnavailable(answer, dir) {
  assert.equal(answer.error?.code, 'CG_MODEL_UNAVAILABLE', JSON.stringify(answer));
  assert.equal(answer.error.phase, 'match');
  assert.equal(answer.error.nextAction, 'check_config');
  assert.deepEqual(answer.error.details, { package: MINILM });
  assert.ok(!JSON.stringify(answer.error).includes(dir), 'no path in the error');
  assert.ok(!answer.message.includes(dir), 'no path in the message');
}

test('without the weights package, CG_MODEL_UNAVAILABLE / check_config names the package', (t) => {
  const dir = scratch(t);
  const main = installMain(path.join(dir, 'app'));
  assertUnavailable(resolveIn(main, path.join(dir, 'app')), dir);
});

test('a weights package installed without its weights is unavailable too', (t) => {
  const dir = scratch(t);
  const app = path.join(dir, 'app');
  const main = installMain(app);
  installModel(app, { unbuilt: true });
  assertUnavailable(resolveIn(main, app), dir);
});

test('the weights package resolves beside the main package, or else from the host project', (t) => {
  const dir = scratch(t);
  const app = path.join(dir, 'app');
  const main = installMain(app);
  const beside = installModel(app);
  assert.deepEqual(resolveIn(main, dir).ok, { dir: beside, id: 'test-model/int8-1-00000000' });

  // The main package installed (or linked) outside the host's project: the host's own
  // dependency is found from its working directory.
  const lib = installMain(path.join(dir, 'global'));
  const host = path.join(dir, 'host');
  const own = installModel(host);
  assert.deepEqual(resolveIn(lib, host).ok, { dir: own, id: 'test-model/int8-1-00000000' });
  assertUnavailable(resolveIn(lib, dir), dir);
});

test('the built weights package exports its folder, id and hash', { skip: needsModel }, () => {
  const model = require(MINILM);
  const dir = fs.realpathSync(path.join(repoRoot, 'packages', 'minilm'));
  assert.equal(fs.realpathSync(model.modelDir), dir);
  assert.match(model.modelId, /^all-MiniLM-L6-v2\/int8-1-[0-9a-f]{8}$/);
  assert.equal(createHash('sha256').update(fs.readFileSync(path.join(dir, 'model.bin'))).digest('hex'), model.sha256);
  const { resolveModel } = require(path.join(repoRoot, 'js', 'executors', 'model.cjs'));
  const resolved = resolveModel();
  assert.equal(fs.realpathSync(resolved.dir), dir);
  assert.equal(resolved.id, model.modelId);
  const files = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).files;
  for (const f of ['model.bin', 'vocab.txt', 'model.json', 'LICENSE', 'NOTICE']) assert.ok(files.includes(f), f);
});
