// codexExecutor end to end: the real @openai/codex-sdk drives a fake Codex CLI
// (fixtures/fake-codex.mjs) through every outcome. No network, no model.
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { CapabilityGraph, codexExecutor } from '@devcodex/capability-graph';
import { rejectsWith, repoRoot, seedSource, throwsWith } from './helpers.mjs';

const FAKE = path.join(repoRoot, '__test__', 'fixtures', 'fake-codex.mjs');

function setup(mode, extra = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'cg-codex-test-'));
  const log = path.join(dir, 'calls.jsonl');
  const env = { PATH: process.env.PATH, CODEX_API_KEY: 'test-key', FAKE_CODEX_MODE: mode, FAKE_CODEX_LOG: log, ...extra.env };
  const executor = codexExecutor({ codexPath: FAKE, env, ...(extra.options ?? {}) });
  // Only complete lines: the fake CLI may have created the log and not yet written its line.
  const calls = () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').slice(0, -1).map((l) => JSON.parse(l)) : []);
  return { executor, calls, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

async function eventually(check) {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((r) => setTimeout(r, 50));
  return check();
}

const openWith = (executor) => CapabilityGraph.open({ providers: [seedSource()], executor });

test('a matched answer, run isolated in a private directory that is removed', async () => {
  const s = setup('success');
  const graph = await openWith(s.executor);
  try {
    const r = await graph.match({ intent: 'validate the request body', context: { tenant: 'acme' } });
    assert.equal(r.status, 'matched');
    assert.equal(r.matches[0].qualifiedId, 'seed.http::route.validation');
    assert.equal(r.meta.executor.id, 'codex');
    assert.deepEqual(r.resolution.added, ['seed.http::schema.request']);
    const [callLog] = s.calls();
    const args = callLog.args.join(' ');
    for (const flag of ['--sandbox read-only', '--skip-git-repo-check', 'sandbox_workspace_write.network_access=false', 'web_search="disabled"', 'approval_policy="never"', '--output-schema']) {
      assert.ok(args.includes(flag), flag);
    }
    assert.equal(callLog.cwdExists, true);
    assert.ok(path.basename(callLog.cwd).startsWith('cg-codex-'));
    assert.equal(existsSync(callLog.cwd), false, 'the working directory is gone');
    assert.deepEqual(callLog.schema.required, ['status', 'selections']);
    assert.match(callLog.prompt, /"intent":"validate the request body"/);
    assert.match(callLog.prompt, /"tenant":"acme"/);
    assert.ok(!callLog.prompt.includes(repoRoot), 'no paths in the prompt');
    // The prompt says which mode was asked.
    assert.match(callLog.prompt, /Mode "accept": choose at most 5 candidates/);
    assert.equal((await graph.match({ intent: 'validate the request body', mode: 'rank', limit: 3 })).status, 'matched');
    assert.match(s.calls()[1].prompt, /Mode "rank": choose the 3 candidates closest to the intent/);
  } finally {
    await graph.close();
    s.cleanup();
  }
});

const OUTCOMES = [
  ['refusal', 'CG_MODEL_REFUSED', 'fix_input'],
  ['no-match', null, null],
  ['malformed', 'CG_MODEL_OUTPUT_INVALID', 'retry'],
  ['invented', 'CG_MODEL_INVALID_SELECTION', 'refresh'],
  ['context', 'CG_MODEL_CONTEXT_EXCEEDED', 'narrow_scope'],
  ['auth', 'CG_MODEL_UNAVAILABLE', 'check_config'],
  ['crash', 'CG_MODEL_UNAVAILABLE', 'retry'],
];

for (const [mode, code, action] of OUTCOMES) {
  test(`codex ${mode} → ${code ?? 'no_match'}`, async () => {
    const s = setup(mode);
    const graph = await openWith(s.executor);
    try {
      if (code === null) {
        assert.equal((await graph.match({ intent: 'bake bread' })).status, 'no_match');
      } else {
        const e = await rejectsWith(graph.match({ intent: 'x' }), code, 'match', action);
        assert.ok(!JSON.stringify(e).includes('SECRET') && !e.message.includes('SECRET'));
        assert.equal(e.details, undefined);
      }
      assert.equal(await eventually(() => !existsSync(s.calls()[0].cwd)), true, 'the working directory is gone');
    } finally {
      await graph.close();
      s.cleanup();
    }
  });
}

test('a slow answer is ended by the deadline, the caller and close(); its directory goes', async () => {
  for (const [end, code, phase] of [
    ['timeout', 'CG_MODEL_TIMEOUT', 'match'],
    ['cancel', 'CG_MODEL_CANCELLED', 'match'],
    ['close', 'CG_GRAPH_CLOSED', 'lifecycle'],
  ]) {
    const s = setup('slow');
    const graph = await openWith(s.executor);
    const controller = new AbortController();
    try {
      // The deadline leaves room for the fake CLI to start on a busy machine: the test is about
      // what ends a turn that did start.
      const pending = graph.match({ intent: 'x', timeoutMs: end === 'timeout' ? 3_000 : 60_000, signal: controller.signal });
      await eventually(() => s.calls().length > 0);
      if (end === 'cancel') controller.abort();
      if (end === 'close') await graph.close();
      await rejectsWith(pending, code, phase, code === 'CG_GRAPH_CLOSED' ? undefined : 'retry');
      assert.equal(await eventually(() => !existsSync(s.calls()[0].cwd)), true, `${end}: the working directory is gone`);
    } finally {
      await graph.close();
      s.cleanup();
    }
  }
});

test('preconditions: an old CLI, no credentials, no SDK, bad options', async () => {
  let s = setup('success', { env: { FAKE_CODEX_VERSION: '0.50.0' } });
  let graph = await openWith(s.executor);
  await rejectsWith(graph.match({ intent: 'x' }), 'CG_MODEL_EXECUTOR_UNSAFE', 'match', 'check_config');
  assert.equal(s.calls().length, 0, 'no turn runs');
  await graph.close();
  s.cleanup();

  s = setup('success', { env: { FAKE_CODEX_VERSION: '0.163.0' }, options: { minCliVersion: '9.0.0' } });
  graph = await openWith(s.executor);
  await rejectsWith(graph.match({ intent: 'x' }), 'CG_MODEL_EXECUTOR_UNSAFE', 'match', 'check_config');
  await graph.close();
  s.cleanup();

  s = setup('success', { env: { CODEX_API_KEY: '', HOME: tmpdir(), CODEX_HOME: path.join(tmpdir(), 'nowhere') } });
  graph = await openWith(s.executor);
  await rejectsWith(graph.match({ intent: 'x' }), 'CG_MODEL_UNAVAILABLE', 'match', 'check_config');
  await graph.close();
  s.cleanup();

  s = setup('success');
  graph = await openWith(s.executor);
  process.env.CAPABILITY_GRAPH_CODEX_SDK = '@openai/codex-sdk-that-is-not-installed';
  try {
    const missing = await rejectsWith(graph.match({ intent: 'x' }), 'CG_MODEL_UNAVAILABLE', 'match', 'check_config');
    assert.deepEqual(missing.details, { package: '@openai/codex-sdk' });
  } finally {
    delete process.env.CAPABILITY_GRAPH_CODEX_SDK;
  }
  assert.equal((await graph.match({ intent: 'x' })).status, 'matched', 'a fixed setup is picked up');
  await graph.close();
  s.cleanup();

  const noCli = codexExecutor({ env: { CODEX_API_KEY: 'x' } });
  graph = await openWith(noCli);
  await rejectsWith(graph.match({ intent: 'x' }), 'CG_MODEL_UNAVAILABLE', 'match', 'check_config');
  await graph.close();

  for (const options of [{ model: '' }, { env: { A: 1 } }, { minCliVersion: 'latest' }, { other: true }, 'codex']) {
    throwsWith(() => codexExecutor(options), 'CG_CONFIG_INVALID', 'config', 'check_config');
  }
});

test('the CLI config takes { "kind": "codex" }', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cg-codex-cli-'));
  try {
    writeFileSync(
      path.join(dir, 'capability-graph.json'),
      JSON.stringify({
        providers: [{ providerId: 'seed.http', authority: { kind: 'file', rootDir: path.join(repoRoot, 'examples', 'seed-provider'), definitionLayout: 'directory' } }],
        executor: { kind: 'codex', codexPath: FAKE, env: { PATH: process.env.PATH, CODEX_API_KEY: 'k', FAKE_CODEX_MODE: 'success' } },
      }),
    );
    const r = spawnSync(process.execPath, [path.join(repoRoot, 'bin', 'capability-graph.cjs'), 'match', 'validate input'], { cwd: dir, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).matches[0].qualifiedId, 'seed.http::route.validation');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
