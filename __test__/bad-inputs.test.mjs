// Replays the corpus of bad inputs (`fixtures/bad-inputs/`) through the public API: each one is a
// GraphError with its expected code, phase and details — never a raw Error, never a crash.
import test from 'node:test';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import assert from 'node:assert/strict';
import * as api from '@devcodex/capability-graph';
import { CapabilityGraph, GraphError } from '@devcodex/capability-graph';
import { assertError, repoRoot, seedSource } from './helpers.mjs';
import { CASES, hostComponents } from './fixtures/bad-inputs/sdk.mjs';

test('the SDK corpus: every bad input is its GraphError', async () => {
  const graph = await CapabilityGraph.open({ providers: [seedSource()], ...hostComponents() });
  try {
    for (const c of CASES) {
      let error;
      try {
        await c.run({ api, graph });
      } catch (e) {
        error = e;
      }
      assert.ok(error instanceof GraphError, `${c.name}: expected a GraphError, got ${error}`);
      assertError(error, c.code, c.phase, new GraphError({ code: c.code }).nextAction, c.details);
    }
  } finally {
    await graph.close();
  }
});

const cliCases = JSON.parse(readFileSync(path.join(repoRoot, '__test__', 'fixtures', 'bad-inputs', 'cli.json'), 'utf8'));
const config = path.join(repoRoot, '__test__', 'fixtures', 'bad-inputs', 'cli-config.json');

test('the CLI corpus: every bad command line is its envelope on stderr and exit 1', () => {
  for (const c of cliCases) {
    const argv = c.argv.map((a) => (a === '$CONFIG' ? config : a));
    const r = spawnSync(process.execPath, [path.join(repoRoot, 'bin', 'capability-graph.cjs'), ...argv], { encoding: 'utf8' });
    const where = `${c.name}: ${r.stderr}`;
    assert.equal(r.status, 1, where);
    assert.equal(r.stdout, '', where);
    const envelope = JSON.parse(r.stderr);
    assert.equal(envelope.ok, false, where);
    assertError(envelope.error, c.code, c.phase, new GraphError({ code: c.code }).nextAction, c.details);
  }
});
