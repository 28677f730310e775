// `npm run demo` shows what the README says it shows: its paraphrase step finds with the semantic
// executor what the lexical one does not, and without the weights it says what works today.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { needsModel, projectWithoutModel, repoRoot } from './helpers.mjs';

/** The lines of the demo's step `n`, from its heading to the next one. */
function step(stdout, n) {
  const from = stdout.indexOf(`\n${n}. `);
  assert.ok(from >= 0, `step ${n} in:\n${stdout}`);
  const to = stdout.indexOf(`\n${n + 1}. `, from);
  return stdout.slice(from, to < 0 ? undefined : to);
}

function runDemo(dir) {
  const run = spawnSync(process.execPath, [path.join(dir, 'examples', 'demo.mjs')], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
  assert.equal(run.status, 0, run.stderr);
  return run.stdout;
}

test('the demo\'s paraphrase is found by the semantic executor and missed by the lexical one', { skip: needsModel }, () => {
  const paraphrase = step(runDemo(repoRoot), 8);
  assert.match(paraphrase, /→ matched: seed\.http::route\.validation \(/);
  assert.match(paraphrase, /\(the lexical executor: no_match\)/);
});

test('without the weights, the demo goes on and names the command that builds them', () => {
  const p = projectWithoutModel();
  try {
    for (const part of ['demo.mjs', 'seed-provider', 'tool-search']) {
      fs.cpSync(path.join(repoRoot, 'examples', part), path.join(p.dir, 'examples', part), { recursive: true });
    }
    const stdout = runDemo(p.dir);
    const paraphrase = step(stdout, 8);
    assert.match(paraphrase, /not shown: .*@devcodex\/capability-graph-minilm.*`npm run build:model`/);
    assert.doesNotMatch(paraphrase, /npm install/);
    assert.match(step(stdout, 9), /CG_CAPABILITY_NOT_FOUND/);
    // Tool search in rank mode: plain words still get tools, the pinned one last.
    const toolSearch = step(stdout, 10);
    assert.match(toolSearch, /"refund the duplicate charge for order 1182" → activeTools: payments_refund_charge, (\w+, ){4}slack_post_message\n/);
    assert.match(toolSearch, /"what time is it in Tokyo" → activeTools: maps_get_timezone, (\w+, ){4}slack_post_message\n/);
  } finally {
    p.cleanup();
  }
});
