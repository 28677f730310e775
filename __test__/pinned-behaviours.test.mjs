// Behaviours hosts rely on that no other test pins, each through the public API: host code that
// answers late or oddly (runtime adapters, readers, retrievers, database views) and the exact
// bounds of what the graph answers.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CapabilityGraph } from '@devcodex/capability-graph';
import { cap, rejectsWith, repoRoot, seedRoot, seedSource } from './helpers.mjs';

const observation = (extra = {}) => ({
  source: 'registry',
  observedAt: '2024-01-01T00:00:00Z',
  runtimeRevision: 'r1',
  observedAgainstStaticRevision: 'any',
  compatibility: 'unknown',
  availability: 'available',
  freshness: 'current',
  ...extra,
});
const runtimeQuery = { project: 'shop', environment: 'staging', instanceOf: 'seed.http::route.http' };

test('a runtime adapter that rejects after its deadline leaves the query failed and the process alive under --unhandled-rejections=strict', { timeout: 30_000 }, async () => {
  // The rejection comes only once the query has failed, so it lands after the deadline on every run.
  const script = `
    import { CapabilityGraph } from '@devcodex/capability-graph';
    let rejectLate;
    const graph = await CapabilityGraph.open({
      providers: [{ providerId: 'seed.http', authority: { kind: 'file', rootDir: ${JSON.stringify(seedRoot)}, definitionLayout: 'directory' } }],
      runtimeAdapters: [{ id: 'late', providerId: 'seed.http', query: () => new Promise((resolve, reject) => (rejectLate = reject)) }],
      budgets: { runtime: { timeoutMs: 20 } },
    });
    const error = await graph.queryRuntime(${JSON.stringify(runtimeQuery)}).then(() => null, (e) => e.toJSON());
    rejectLate(new Error('late and unhandled by the adapter'));
    // Two turns of the event loop: an unhandled rejection would have been raised by then.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setTimeout(resolve, 0));
    const after = await graph.listCatalog({ limit: 1 });
    await graph.close();
    console.log(JSON.stringify({ error, served: after.items.length }));
  `;
  const { stdout } = await promisify(execFile)(process.execPath, ['--unhandled-rejections=strict', '--input-type=module', '-e', script], { cwd: repoRoot, timeout: 20_000 }).catch((error) =>
    assert.fail(`the process died (exit ${error.code}): ${error.stderr}`),
  );
  const { error, served } = JSON.parse(stdout);
  assert.equal(error.code, 'CG_RUNTIME_UNAVAILABLE');
  assert.equal(error.phase, 'query');
  assert.equal(error.nextAction, 'retry');
  assert.equal(served, 1);
});

test('a runtime page whose every instance is rejected fails whole, counting what was received and rejected', async () => {
  const graph = await CapabilityGraph.open({
    providers: [seedSource()],
    runtimeAdapters: [
      {
        id: 'rt',
        providerId: 'seed.http',
        query: ({ project, environment }) => ({
          instances: [
            { instanceId: 'a', providerId: 'other.provider', project, environment, instanceOf: 'seed.http::route.http', facts: {} },
            { instanceId: 'b', providerId: 'seed.http', project: 'another', environment, instanceOf: 'seed.http::route.http', facts: {} },
            { instanceId: 'c', providerId: 'seed.http', project, environment, instanceOf: 'seed.http::route.http', facts: 'not an object' },
          ],
          observation: observation(),
        }),
      },
    ],
  });
  try {
    await rejectsWith(graph.queryRuntime(runtimeQuery), 'CG_ADAPTER_CONTRACT_INVALID', 'query', 'contact_admin', {
      reason: 'all_runtime_items_rejected',
      receivedCount: 3,
      rejectedCount: 3,
    });
  } finally {
    await graph.close();
  }
});

/** The seed provider's records, in ID order. */
const seedRecords = () =>
  readdirSync(path.join(seedRoot, 'capabilities'))
    .map((f) => JSON.parse(readFileSync(path.join(seedRoot, 'capabilities', f), 'utf8')))
    .sort((a, b) => (a.capabilityId < b.capabilityId ? -1 : 1));
const seedProvider = JSON.parse(readFileSync(path.join(seedRoot, 'provider.json'), 'utf8'));

/** The seed provider from a database view whose scan serves `pages` (lists of records, given to
 *  `page` to shape each answer; `cursor(n)` is the cursor of page n, from its first character
 *  to the first ':'), with `view`'s fields on top. */
function fromPages(pages, { page = (items) => ({ items }), cursor: cursorOf = (at) => `${at}:`, view = {} } = {}) {
  return {
    providerId: 'seed.http',
    authority: {
      kind: 'database',
      watch: false,
      adapter: {
        id: 'pages',
        openView: () => ({
          provider: seedProvider,
          sourceRevision: 'rev-1',
          knowledgeRootDir: seedRoot,
          scanCapabilities: ({ cursor }) => {
            const at = cursor === undefined ? 0 : Number(cursor.split(':')[0]);
            const answer = page(pages[at]);
            return at + 1 < pages.length ? { ...answer, nextCursor: cursorOf(at + 1) } : answer;
          },
          ...view,
        }),
      },
    },
  };
}
const revisionOf = async (graph) => (await graph.listProviders()).items[0].staticRevision;

test('a view that reuses one record object for every scan page is read page by page: the files\' revision', async () => {
  const records = seedRecords();
  // One object, emptied and refilled for each page.
  const shared = {};
  const reused = (items) => {
    for (const key of Object.keys(shared)) delete shared[key];
    Object.assign(shared, structuredClone(items[0]));
    return { items: [shared] };
  };
  const [files, graph] = await Promise.all([
    CapabilityGraph.open({ providers: [seedSource()] }),
    CapabilityGraph.open({ providers: [fromPages(records.map((r) => [r]), { page: reused })] }),
  ]);
  try {
    assert.equal(await revisionOf(graph), await revisionOf(files));
    const names = (await graph.getCapabilities(records.map((r) => `seed.http::${r.capabilityId}`))).results.map((r) => r.value.name);
    assert.deepEqual(names, records.map((r) => r.name));
  } finally {
    await Promise.all([files.close(), graph.close()]);
  }
});

test('a scan out of order or naming an ID twice across pages breaks the contract: scan_order_or_duplicate', async () => {
  const [a, b, c, ...rest] = seedRecords();
  for (const [what, pages] of [
    ['out of order across pages', [[a], [c], [b], rest]],
    ['an ID on two pages', [[a, b], [b, c], rest]],
    ['out of order within a page', [[b, a], [c, ...rest]]],
  ]) {
    const error = await rejectsWith(CapabilityGraph.open({ providers: [fromPages(pages)] }), 'CG_ADAPTER_CONTRACT_INVALID', 'load', 'contact_admin');
    assert.deepEqual(error.details, { reason: 'scan_order_or_duplicate' }, what);
  }
});

test('store cursors of 30,000 characters never reach a catalog or neighbour cursor', async () => {
  const records = seedRecords();
  const long = (at) => `${at}:${'s'.repeat(30_000)}`;
  // Neighbour streams of one item a page, each with a long store cursor: every declared edge
  // and its inverse.
  const inverse = { parents: 'children', specializes: 'specializedBy', related: 'relatedBy', requires: 'requiredBy' };
  const streams = new Map();
  const add = (id, kind, to) => streams.set(`${id}/${kind}`, [...(streams.get(`${id}/${kind}`) ?? []), to]);
  for (const r of records) {
    for (const [kind, back] of Object.entries(inverse)) {
      for (const to of r[kind] ?? []) (add(r.capabilityId, kind, to), add(to, back, r.capabilityId));
    }
  }
  const neighbors = (id, kind, { cursor }) => {
    const list = [...(streams.get(`${id}/${kind}`) ?? [])].sort();
    const at = cursor === undefined ? 0 : Number(cursor.split(':')[0]);
    return at + 1 < list.length ? { items: list.slice(at, at + 1), nextCursor: long(at + 1) } : { items: list.slice(at, at + 1) };
  };
  const graph = await CapabilityGraph.open({
    providers: [fromPages(records.map((r) => [r]), { cursor: long, view: { neighbors } })],
  });
  try {
    const cursors = [];
    let page = await graph.listCatalog({ limit: 1 });
    while (page.nextCursor) {
      cursors.push(page.nextCursor);
      page = await graph.listCatalog({ limit: 1, cursor: page.nextCursor });
    }
    const children = await graph.getNeighbors('seed.http::route', { kinds: ['children'], limitPerKind: 1 });
    assert.equal(children.groups.children.items.length, 1);
    cursors.push(children.groups.children.nextCursor);
    assert.ok(cursors.length >= 5 && cursors.every((c) => typeof c === 'string'), JSON.stringify(cursors.length));
    for (const c of cursors) {
      assert.ok(!c.includes('ssssssss'), 'a store cursor in a public cursor');
      assert.ok(c.length < 1_000, `a public cursor of ${c.length} characters`);
    }
  } finally {
    await graph.close();
  }
});

function tempRoot(prefix) {
  const root = mkdtempSync(path.join(tmpdir(), prefix));
  return { root, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

test('read.maxResponseBytes is exact: an answer of exactly the budget is served, one byte less of budget is CG_RESULT_TOO_LARGE (escapes and meta counted)', async () => {
  const t = tempRoot('cg-pinned-');
  // Quotes, backslashes, newlines and control characters: the answer's JSON is longer than the body.
  const body = `"quoted" \\ back\n\ttab \u0001\u001f end\n`.repeat(250);
  writeFileSync(path.join(t.root, 'doc.md'), body);
  const definition = { providerId: 'acme', name: 'A', version: '1', capabilities: [cap('x', { knowledge: [{ kind: 'document', knowledgeId: 'D', role: 'guide', locator: { type: 'relative-file', path: 'doc.md' } }] })] };
  const open = (maxResponseBytes) => CapabilityGraph.open({ providers: [{ definition, documentRoot: t.root }], budgets: { read: { maxResponseBytes } } });
  const read = (graph) => graph.readDocuments({ selected: ['acme::x'] });
  try {
    // The answer names its budget in its meta: measured under a budget of as many digits.
    const wide = await open(99_999);
    const answer = await read(wide);
    await wide.close();
    assert.equal(answer.results[0].value.text, body);
    const bytes = Buffer.byteLength(JSON.stringify(answer));
    assert.ok(bytes >= 10_000 && bytes > Buffer.byteLength(body) + 1, `an answer of ${bytes} bytes`);
    const exact = await open(bytes);
    try {
      const served = await read(exact);
      assert.equal(served.results[0].value.text, body);
      assert.equal(Buffer.byteLength(JSON.stringify(served)), bytes);
    } finally {
      await exact.close();
    }
    const short = await open(bytes - 1);
    try {
      await rejectsWith(read(short), 'CG_RESULT_TOO_LARGE', 'document', 'narrow_scope');
    } finally {
      await short.close();
    }
  } finally {
    t.cleanup();
  }
});

test('a file provider opened with a relative rootDir keeps that root across process.chdir and reload', async () => {
  const t = tempRoot('cg-pinned-cwd-');
  // The same relative path from the new working directory holds another provider.
  const decoy = path.join(t.root, 'provider');
  cpSync(seedRoot, decoy, { recursive: true });
  const routeFile = path.join(decoy, 'capabilities', 'route.json');
  writeFileSync(routeFile, JSON.stringify({ ...JSON.parse(readFileSync(routeFile, 'utf8')), name: 'Decoy' }));
  const cwd = process.cwd();
  const home = mkdtempSync(path.join(tmpdir(), 'cg-pinned-home-'));
  cpSync(seedRoot, path.join(home, 'provider'), { recursive: true });
  process.chdir(home);
  let graph;
  try {
    graph = await CapabilityGraph.open({ providers: [{ providerId: 'seed.http', authority: { kind: 'file', rootDir: 'provider', definitionLayout: 'directory' } }] });
    const before = await revisionOf(graph);
    process.chdir(t.root);
    for (const report of [await graph.reload(), await graph.reload({ force: true })]) assert.equal(report.ok, true, JSON.stringify(report));
    assert.equal(await revisionOf(graph), before);
    assert.equal((await graph.getCapabilities(['seed.http::route'])).results[0].value.name, 'Routing');
    const read = await graph.readDocuments({ selected: ['seed.http::route.validation'] });
    assert.equal(read.results[0].value.text, readFileSync(path.join(seedRoot, 'knowledge', 'route-validation.md'), 'utf8'));
  } finally {
    process.chdir(cwd);
    await graph?.close();
    t.cleanup();
    rmSync(home, { recursive: true, force: true });
  }
});

test('fields a reader adds to its answer or its chunks are never echoed', async () => {
  const url = 'https://docs.example/guide.md';
  const definition = { providerId: 'acme', name: 'A', version: '1', capabilities: [cap('x', { knowledge: [{ kind: 'document', knowledgeId: 'WEB', role: 'guide', locator: { type: 'http', url } }] })] };
  const bytes = new TextEncoder().encode('# Guide\n');
  const extra = { secret: 'EXTRA-FIELD-VALUE', headers: { authorization: 'EXTRA-FIELD-VALUE' } };
  const reader = {
    id: 'extra',
    canRead: () => true,
    read: async () => ({ bytes, contentType: 'text/markdown', source: url, ...extra }),
    async *stream() {
      yield { bytes, contentType: 'text/markdown', source: url, ...extra };
    },
  };
  const graph = await CapabilityGraph.open({ providers: [{ definition }], readers: [reader] });
  try {
    const answers = [await graph.readDocuments({ selected: ['acme::x'] }), await graph.readDocumentPage({ capability: 'acme::x', knowledgeId: 'WEB' })];
    for (const answer of answers) assert.ok(!JSON.stringify(answer).includes('EXTRA-FIELD-VALUE'), JSON.stringify(answer));
    assert.equal(answers[0].results[0].value.text, '# Guide\n');
  } finally {
    await graph.close();
  }
});

test('inside a retrieveCapabilities pinned to a revision, a candidate of another revision is a warning of its own, never the call\'s failure', async () => {
  const t = tempRoot('cg-pinned-retrieve-');
  cpSync(seedRoot, t.root, { recursive: true });
  let candidates = [];
  const graph = await CapabilityGraph.open({
    providers: [{ providerId: 'seed.http', authority: { kind: 'file', rootDir: t.root, definitionLayout: 'directory' } }],
    capabilityRetriever: { id: 'index', retrieve: () => ({ candidates }) },
  });
  try {
    const first = await revisionOf(graph);
    const routeFile = path.join(t.root, 'capabilities', 'route.json');
    writeFileSync(routeFile, JSON.stringify({ ...JSON.parse(readFileSync(routeFile, 'utf8')), name: 'Routing (edited)' }));
    assert.equal((await graph.reload()).ok, true);
    const second = await revisionOf(graph);
    assert.notEqual(second, first);
    const hit = (capabilityId, sourceStaticRevision, score) => ({ id: `seed.http::${capabilityId}`, score, sourceStaticRevision });
    // Pinned to the revision now served, and to the one before it.
    for (const [pinned, servedFrom, other] of [
      [second, 'current', first],
      [first, 'previous', second],
    ]) {
      candidates = [hit('route', other, 0.9), hit('route.http', pinned, 0.8), hit('schema.request', other, 0.7)];
      const answer = await graph.retrieveCapabilities({ text: 'routes', requiredStaticRevision: pinned });
      assert.deepEqual(
        answer.items.map((i) => [i.qualifiedId, i.rank]),
        [['seed.http::route.http', 2]],
      );
      assert.equal(answer.meta.completeness, 'partial');
      assert.equal(answer.meta.servedFrom, servedFrom);
      assert.deepEqual(
        answer.meta.warnings.map((w) => [w.code, w.details]),
        [
          ['CG_REVISION_MISMATCH', { adapterIndex: 0 }],
          ['CG_REVISION_MISMATCH', { adapterIndex: 2 }],
        ],
      );
      // Every candidate stale: still an answer of warnings, not a failure.
      candidates = [hit('route', other, 0.9)];
      const none = await graph.retrieveCapabilities({ text: 'routes', requiredStaticRevision: pinned });
      assert.deepEqual(none.items, []);
      assert.deepEqual(none.meta.warnings.map((w) => [w.code, w.details]), [['CG_REVISION_MISMATCH', { adapterIndex: 0 }]]);
    }
  } finally {
    await graph.close();
    t.cleanup();
  }
});
