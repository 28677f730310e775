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
import { ACCESS_CASES, CASES, READER_REPLIES, hostComponents } from './fixtures/bad-inputs/sdk.mjs';

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

test('the access corpus: a knowledge retriever calling its access badly gets a GraphError', async () => {
  const outcomes = [];
  const graph = await CapabilityGraph.open({
    providers: [seedSource()],
    knowledgeRetriever: {
      id: 'k',
      retrieve: async (input, access) => {
        for (const c of ACCESS_CASES) outcomes.push(await c.run(access, input.targets[0]).then(() => undefined, (e) => e));
        return { hits: [] };
      },
    },
  });
  try {
    await graph.queryKnowledge({ text: 'routes', selected: ['seed.http::route'] }).catch(() => {});
    assert.equal(outcomes.length, ACCESS_CASES.length);
    for (const [i, c] of ACCESS_CASES.entries()) {
      assert.ok(outcomes[i] instanceof GraphError, `${c.name}: expected a GraphError, got ${outcomes[i]}`);
      assert.equal(outcomes[i].code, c.code, c.name);
      for (const [k, v] of Object.entries(c.details ?? {})) assert.deepEqual(outcomes[i].details?.[k], v, c.name);
    }
  } finally {
    await graph.close();
  }
});

test('the reader corpus: a host reader answering with hostile values costs that document a GraphError', async () => {
  const knowledge = [{ kind: 'document', knowledgeId: 'WEB', role: 'guide', title: 'Web', locator: { type: 'http', url: 'https://docs.example/guide.md' } }];
  const definition = { providerId: 'acme', name: 'A', version: '1', capabilities: [{ capabilityId: 'x', name: 'X', description: 'X.', whenToUse: 'X.', knowledge }] };
  let reply;
  const graph = await CapabilityGraph.open({ providers: [{ definition }], readers: [{ id: 'r', canRead: () => true, read: async () => reply() }] });
  try {
    for (const c of READER_REPLIES) {
      reply = c.reply;
      const result = await graph.readDocuments({ selected: ['acme::x'] });
      assert.equal(result.results[0].ok, false, c.name);
      assert.equal(result.results[0].error.code, c.code, c.name);
    }
  } finally {
    await graph.close();
  }
});

const cliCases = JSON.parse(readFileSync(path.join(repoRoot, '__test__', 'fixtures', 'bad-inputs', 'cli.json'), 'utf8'));
const config = path.join(repoRoot, '__test__', 'fixtures', 'bad-inputs', 'cli-config.json');

test('the CLI corpus: every bad command line is its small envelope on stderr and exit 1', () => {
  for (const c of cliCases) {
    const argv = c.argv.map((a) => a.replace('$CONFIG', config).replace('$HUGE', 'h'.repeat(100 * 1024)));
    const r = spawnSync(process.execPath, [path.join(repoRoot, 'bin', 'capability-graph.cjs'), ...argv], { encoding: 'utf8' });
    const where = `${c.name}: ${r.stderr}`;
    assert.equal(r.status, 1, where);
    assert.equal(r.stdout, '', where);
    // Whatever the command line held, the envelope stays small.
    assert.ok(Buffer.byteLength(r.stderr) <= 4096, `${c.name}: ${r.stderr.length} bytes on stderr`);
    const envelope = JSON.parse(r.stderr);
    assert.equal(envelope.ok, false, where);
    assertError(envelope.error, c.code, c.phase, new GraphError({ code: c.code }).nextAction, c.details);
  }
});
