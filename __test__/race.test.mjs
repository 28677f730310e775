// Path races (SPEC §14 D17): a directory inside a trusted root is exchanged, as fast as the
// kernel allows, with a symlink leading outside it while documents, pages, specifications,
// retriever access reads and reloads run. Every answer must be the inside bytes or a document
// error; no answer may ever carry the outside bytes. Linux only (renameat2 RENAME_EXCHANGE).
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CapabilityGraph } from '@devcodex/capability-graph';
import { cap, currentEvidence } from './helpers.mjs';

const swapper = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'swap-race.py');
const python = spawnSync('python3', ['-c', 'import ctypes; ctypes.CDLL(None).renameat2'], { encoding: 'utf8' });
const missing =
  process.platform !== 'linux'
    ? 'needs Linux renameat2 (RENAME_EXCHANGE)'
    : python.status !== 0
      ? 'needs python3 with ctypes and a libc exposing renameat2'
      : false;
// CI sets CG_REQUIRE_RACE=1: there a missing swapper is a failure, never a silent skip.
if (missing && process.env.CG_REQUIRE_RACE === '1') throw new Error(`race test required: ${missing}`);
const skip = missing;

const SECONDS = 3;
const INSIDE = 'INSIDE\n'.repeat(64);
const OUTSIDE = 'OUTSIDE\n'.repeat(64);
const DOCUMENT_ERRORS = new Set(['CG_DOCUMENT_ACCESS_DENIED', 'CG_DOCUMENT_NOT_FOUND']);

/** Starts exchanging `a` and `b`; resolves to a stop function that answers the swap count. */
async function startSwapping(a, b) {
  const child = spawn('python3', [swapper, a, b, String(SECONDS * 4)], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8');
  await new Promise((resolve, reject) => {
    child.once('error', reject);
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (out.startsWith('ready\n')) resolve();
    });
  });
  return async () => {
    const done = new Promise((resolve) => child.once('close', resolve));
    child.stdin.end();
    assert.equal(await done, 0, 'the swapper failed');
    return Number(out.split('\n')[1]);
  };
}

/** A root whose `docs` directory is exchanged with `swap`, a symlink to an outside `docs`. */
function raceTree() {
  const base = mkdtempSync(path.join(tmpdir(), 'cg-race-'));
  const root = path.join(base, 'root');
  for (const [dir, text] of [[path.join(root, 'docs'), INSIDE], [path.join(base, 'outside', 'docs'), OUTSIDE]]) {
    mkdirSync(dir, { recursive: true });
    for (const name of ['guide.md', 'spec.md']) writeFileSync(path.join(dir, name), text);
  }
  symlinkSync(path.join(base, 'outside', 'docs'), path.join(root, 'swap'));
  return { base, root, cleanup: () => rmSync(base, { recursive: true, force: true }) };
}

/** Tallies answers: inside bytes, a document error, or anything else (a failure). */
function tally() {
  const seen = { inside: 0, error: 0, outside: 0, other: {} };
  const other = (what) => (seen.other[what] = (seen.other[what] ?? 0) + 1);
  return {
    seen,
    text(text) {
      if (text.includes('OUTSIDE')) seen.outside++;
      else if (INSIDE.startsWith(text) || text === INSIDE) seen.inside++;
      else other(`text ${JSON.stringify(text.slice(0, 40))}`);
    },
    error(error) {
      if (DOCUMENT_ERRORS.has(error?.code)) seen.error++;
      else other(`${error?.code ?? String(error)}:${error?.details?.reason}`);
    },
  };
}

test('document, page, specification and retriever reads never serve bytes from outside the root', { skip }, async () => {
  const t = raceTree();
  const definition = {
    providerId: 'acme',
    name: 'Acme',
    version: '1',
    specification: {
      specificationId: 'acme.spec',
      version: '1',
      documents: [{ kind: 'document', knowledgeId: 'SPEC', role: 'specification', locator: { type: 'relative-file', path: 'docs/spec.md' } }],
    },
    capabilities: [
      cap('x', { knowledge: [{ kind: 'document', knowledgeId: 'G', role: 'guide', locator: { type: 'relative-file', path: 'docs/guide.md' } }] }),
    ],
  };
  const t2 = tally();
  const graph = await CapabilityGraph.open({
    providers: [{ definition, documentRoot: t.root }],
    knowledgeRetriever: {
      id: 'race',
      async retrieve(input, access) {
        const { targets } = input;
        for (const target of targets) {
          try {
            t2.text(Buffer.from((await access.read({ id: target.id, knowledgeId: target.knowledgeId }, { maxBytes: 4096 })).bytes).toString("utf8"));
          } catch (error) {
            t2.error(error);
          }
        }
        return {
          hits: [],
          evidence: currentEvidence(input, []),
        };
      },
    },
  });
  const stop = await startSwapping(path.join(t.root, 'docs'), path.join(t.root, 'swap'));
  const { seen, text, error } = tally();
  const settle = async (promise, read) => {
    try {
      read(await promise);
    } catch (e) {
      error(e);
    }
  };
  const until = Date.now() + SECONDS * 1000;
  let calls = 0;
  try {
    while (Date.now() < until) {
      const batch = [];
      for (let i = 0; i < 16; i++) {
        batch.push(
          settle(graph.readDocuments({ selected: ['acme::x'] }), (r) => (r.results[0].ok ? text(r.results[0].value.text) : error(r.results[0].error))),
          settle(graph.readDocumentPage({ capability: 'acme::x', knowledgeId: 'G', maxBytes: 64 }), (p) => text(p.text)),
          settle(graph.readSpecification({ providerId: 'acme' }), (r) => (r.results[0].ok ? text(r.results[0].value.text) : error(r.results[0].error))),
          settle(graph.readSpecificationPage({ providerId: 'acme', knowledgeId: 'SPEC', maxBytes: 64 }), (p) => text(p.text)),
        );
        // The retriever's own reads are tallied inside it; the query may fail with them.
        batch.push(graph.queryKnowledge({ text: 'guide', selected: ['acme::x'] }).catch(() => {}));
        calls += 5;
      }
      await Promise.all(batch);
    }
  } finally {
    const swaps = await stop();
    await graph.close();
    t.cleanup();
    const summary = { swaps, calls, reads: seen, retrieverReads: t2.seen };
    console.log(`# race: ${JSON.stringify(summary)}`);
    assert.ok(swaps > 100, `the swapper made only ${swaps} exchanges`);
    for (const s of [seen, t2.seen]) {
      assert.deepEqual(s.other, {}, 'answers other than inside bytes or a document error');
      assert.equal(s.outside, 0, `${s.outside} answers carried bytes from outside the root`);
      assert.ok(s.inside > 0 && s.error > 0, `both outcomes occur: ${JSON.stringify(s)}`);
    }
  }
});

test('reloading a file provider whose definition folder is being swapped never publishes outside definitions', { skip }, async () => {
  const base = mkdtempSync(path.join(tmpdir(), 'cg-race-defs-'));
  const root = path.join(base, 'provider');
  const write = (dir, description) => {
    mkdirSync(dir, { recursive: true });
    for (const id of ['a', 'b', 'c']) writeFileSync(path.join(dir, `${id}.json`), JSON.stringify(cap(id, { description })));
  };
  mkdirSync(root, { recursive: true });
  writeFileSync(path.join(root, 'provider.json'), JSON.stringify({ providerId: 'acme', name: 'Acme', version: '1' }));
  write(path.join(root, 'capabilities', 'group'), 'Inside.');
  write(path.join(base, 'outside', 'group'), 'OUTSIDE.');
  // Outside `capabilities/`, a symlink is no definition: the layout ignores it.
  symlinkSync(path.join(base, 'outside', 'group'), path.join(root, 'swap'));
  const graph = await CapabilityGraph.open({
    providers: [{ providerId: 'acme', authority: { kind: 'file', rootDir: root, definitionLayout: 'directory' } }],
  });
  const revision = (await graph.resolve({ ids: ['acme::a'] })).meta.staticRevision;
  const stop = await startSwapping(path.join(root, 'capabilities', 'group'), path.join(root, 'swap'));
  const outcomes = { same: 0, failed: 0, changed: 0 };
  const until = Date.now() + SECONDS * 1000;
  try {
    while (Date.now() < until) {
      const report = await graph.reload();
      const entry = report.providers[0];
      if (!entry.ok) outcomes.failed++;
      else if (entry.staticRevision === revision) outcomes.same++;
      else outcomes.changed++;
    }
  } finally {
    const swaps = await stop();
    const served = await graph.getCapabilities(['acme::a']);
    await graph.close();
    rmSync(base, { recursive: true, force: true });
    console.log(`# reload race: ${JSON.stringify({ swaps, ...outcomes })}`);
    assert.ok(swaps > 100, `the swapper made only ${swaps} exchanges`);
    assert.equal(outcomes.changed, 0, 'a reload published definitions read from outside the root');
    assert.ok(!JSON.stringify(served).includes('OUTSIDE'));
    assert.ok(outcomes.same > 0 && outcomes.failed > 0, `both outcomes occur: ${JSON.stringify(outcomes)}`);
  }
});
