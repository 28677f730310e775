// Document reads (SPEC §7, §14 D8–D9): slots, filters, pages, roots, path safety, host readers.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CapabilityGraph, createToolAdapter } from '@devcodex/capability-graph';
import { assertError, cap, rejectsWith, repoRoot, seedRoot, seedSource } from './helpers.mjs';

const doc = (knowledgeId, locator, extra = {}) => ({ kind: 'document', knowledgeId, role: 'guide', locator, ...extra });
const file = (p, root) => (root ? { type: 'relative-file', path: p, root } : { type: 'relative-file', path: p });

function tempTree() {
  const root = mkdtempSync(path.join(tmpdir(), 'cg-reads-'));
  const put = (rel, content) => {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), content);
  };
  return { root, put, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/** Every test output is checked for this: no absolute root may leak. */
function assertNoPath(value, ...roots) {
  const text = JSON.stringify(value);
  for (const r of roots) assert.ok(!text.includes(r), `output leaks ${r}`);
}

test('the seed documents and PROVIDER.md read through the graph and forProvider', async () => {
  const graph = await CapabilityGraph.open({ providers: [seedSource()] });
  for (const g of [graph, graph.forProvider('seed.http')]) {
    const ref = g === graph ? 'seed.http::route.validation' : 'route.validation';
    const r = await g.readDocuments({ selected: [ref] });
    assert.equal(r.knowledgeState, 'matched');
    const value = r.results[0].value;
    assert.equal(value.knowledgeId, 'D-02');
    assert.equal(value.text, readFileSync(path.join(seedRoot, 'knowledge', 'route-validation.md'), 'utf8'));
    assert.equal(value.contentType, 'text/markdown; charset=utf-8');
    assert.equal(value.source, 'knowledge/route-validation.md');
    assert.match(value.contentId, /^k:[0-9a-f]{16}$/);
    assert.deepEqual(r.meta.view.knowledge, [{ id: { providerId: 'seed.http', capabilityId: 'route.validation' }, knowledgeId: 'D-02', contentId: value.contentId }]);
    const spec = g === graph ? await g.readSpecification({ providerId: 'seed.http' }) : await g.readSpecification();
    assert.equal(spec.results[0].value.text, readFileSync(path.join(seedRoot, 'PROVIDER.md'), 'utf8'));
    assert.equal(spec.results[0].value.providerId, 'seed.http');
    assertNoPath(r, seedRoot);
    assertNoPath(spec, seedRoot);
  }
  await graph.close();
});

test('slots, filters and knowledge states', async () => {
  const t = tempTree();
  for (const n of ['a', 'b', 'c', 'm1', 'm2']) t.put(`k/${n}.md`, `# ${n}\n`);
  const knowledge = [
    doc('A', file('k/a.md'), { locale: 'en-us' }),
    doc('B', file('k/b.md'), { role: 'reference', locale: 'zh-CN' }),
    { kind: 'collection', knowledgeId: 'COL', members: [doc('M1', file('k/m1.md')), doc('M2', file('k/m2.md'))] },
  ];
  const graph = await CapabilityGraph.open({
    providers: [{ definition: { providerId: 'acme', name: 'A', version: '1', capabilities: [cap('x', { knowledge }), cap('bare')] }, documentRoot: t.root }],
  });
  try {
    let r = await graph.readDocuments({ selected: ['acme::x'] });
    assert.deepEqual(r.results.map((s) => s.value.knowledgeId), ['A', 'B'], 'members only when named');
    assert.equal(r.results[0].value.locale, 'en-US');
    r = await graph.readDocuments({ selected: ['acme::x'], knowledgeIds: ['M2', 'COL', 'NOPE', 'M2'] });
    assert.deepEqual(r.results.map((s) => s.ok ? s.value.knowledgeId : `${s.error.code}:${s.error.details.knowledgeId}`), [
      'M2',
      'CG_INPUT_INVALID:COL',
      'CG_DOCUMENT_NOT_FOUND:NOPE',
    ]);
    assert.equal(r.results[1].error.phase, 'document');
    assert.equal(r.meta.completeness, 'partial');
    r = await graph.readDocuments({ selected: ['acme::x'], roles: ['reference'] });
    assert.deepEqual(r.results.map((s) => s.value.knowledgeId), ['B']);
    r = await graph.readDocuments({ selected: ['acme::x'], locales: ['zh-cn'], roles: ['guide'] });
    assert.deepEqual(r.results, []);
    assert.equal(r.knowledgeState, 'filtered_empty');
    r = await graph.readDocuments({ selected: ['acme::bare'] });
    assert.equal(r.knowledgeState, 'not_associated');
    assert.equal(r.results[0].error.code, 'CG_KNOWLEDGE_NOT_ASSOCIATED');
    r = await graph.readDocuments({ selected: ['acme::x', 'acme::nope', 'bad'] });
    assert.deepEqual(r.results.map((s) => s.ok || s.error.code), [true, true, 'CG_CAPABILITY_NOT_FOUND', 'CG_INPUT_INVALID']);
    const bad = (q, code, action) => rejectsWith(graph.readDocuments(q), code, 'document', action);
    await bad({ selected: [] }, 'CG_INPUT_INVALID', 'fix_input');
    await bad({ selected: ['acme::x'], locales: ['not a tag'] }, 'CG_INPUT_INVALID', 'fix_input');
    await bad({ selected: ['acme::x'], knowledgeIds: ['1bad'] }, 'CG_INPUT_INVALID', 'fix_input');
    await bad({ selected: Array(33).fill('acme::x') }, 'CG_INPUT_TOO_LARGE', 'narrow_scope');
    await bad({ selected: ['acme::x'], roles: Array(129).fill('guide') }, 'CG_INPUT_TOO_LARGE', 'narrow_scope');
    assertNoPath(r, t.root);
  } finally {
    await graph.close();
    t.cleanup();
  }
});

test('read budgets: documents per call, whole documents, whole responses', async () => {
  const t = tempTree();
  const knowledge = Array.from({ length: 9 }, (_, i) => doc(`D${i}`, file(`d${i}.md`)));
  knowledge.forEach((_, i) => t.put(`d${i}.md`, 'x'.repeat(i === 8 ? 5000 : 10)));
  const open = (budgets) =>
    CapabilityGraph.open({ providers: [{ definition: { providerId: 'acme', name: 'A', version: '1', capabilities: [cap('x', { knowledge })] }, documentRoot: t.root }], budgets });
  const graph = await open({ read: { maxResponseBytes: 4000 } });
  try {
    await rejectsWith(graph.readDocuments({ selected: ['acme::x'] }), 'CG_INPUT_TOO_LARGE', 'document', 'narrow_scope');
    const r = await graph.readDocuments({ selected: ['acme::x'], knowledgeIds: ['D0', 'D8'] });
    assert.equal(r.results[0].ok, true);
    assertError(r.results[1].error, 'CG_DOCUMENT_TOO_LARGE', 'document', 'narrow_scope');
    const tight = await open({ read: { maxResponseBytes: 1500 } });
    await rejectsWith(tight.readDocuments({ selected: ['acme::x'], knowledgeIds: ['D0', 'D1', 'D2', 'D3', 'D4', 'D5', 'D6', 'D7'] }), 'CG_RESULT_TOO_LARGE', 'document', 'narrow_scope');
    await tight.close();
  } finally {
    await graph.close();
    t.cleanup();
  }
});

test('traversal in every spelling fails at load as CG_DEFINITION_INVALID', async () => {
  for (const p of ['../x.md', 'a/../../x.md', '/etc/passwd', 'a\\x.md', 'C:/x.md', '~/x.md', 'a//b.md', './a.md', 'a/.', 'a:b', 'x.md.', 'x.md ', 'a/\u0001b']) {
    await rejectsWith(
      CapabilityGraph.open({ providers: [{ definition: { providerId: 'acme', name: 'A', version: '1', capabilities: [cap('x', { knowledge: [doc('D', file(p))] })] } }] }),
      'CG_DEFINITION_INVALID',
      'load',
      'fix_input',
      { reason: 'path_invalid' },
    );
  }
});

test('path safety at read: symlinks, FIFOs, missing files, missing roots', async () => {
  const t = tempTree();
  const outside = mkdtempSync(path.join(tmpdir(), 'cg-outside-'));
  writeFileSync(path.join(outside, 'secret.md'), 'secret');
  t.put('inside.md', 'inside');
  symlinkSync(path.join(outside, 'secret.md'), path.join(t.root, 'escape.md'));
  symlinkSync(path.join(t.root, 'inside.md'), path.join(t.root, 'alias.md'));
  execFileSync('mkfifo', [path.join(t.root, 'pipe.md')]);
  mkdirSync(path.join(t.root, 'dir.md'));
  const knowledge = ['escape', 'alias', 'pipe', 'dir', 'missing'].map((n) => doc(n.toUpperCase(), file(`${n}.md`)));
  const definition = { providerId: 'acme', name: 'A', version: '1', capabilities: [cap('x', { knowledge })] };
  const graph = await CapabilityGraph.open({ providers: [{ definition, documentRoot: t.root }] });
  const rootless = await CapabilityGraph.open({ providers: [{ definition }] });
  try {
    const r = await graph.readDocuments({ selected: ['acme::x'] });
    const byId = Object.fromEntries(r.results.map((s) => [s.ok ? s.value.knowledgeId : s.error.code + '@' + s.inputIndex, s]));
    assert.equal(byId.ALIAS.value.text, 'inside');
    assert.deepEqual(r.results.map((s) => (s.ok ? 'ok' : s.error.code)), [
      'ok',
      'CG_DOCUMENT_ACCESS_DENIED',
      'CG_DOCUMENT_ACCESS_DENIED',
      'CG_DOCUMENT_NOT_FOUND',
      'CG_DOCUMENT_ACCESS_DENIED',
    ]);
    await rejectsWith(graph.readDocumentPage({ capability: 'acme::x', knowledgeId: 'PIPE' }), 'CG_DOCUMENT_ACCESS_DENIED', 'document', 'check_config');
    await rejectsWith(graph.readDocumentPage({ capability: 'acme::x', knowledgeId: 'ESCAPE' }), 'CG_DOCUMENT_ACCESS_DENIED', 'document', 'check_config');
    const noRoot = await rootless.readDocuments({ selected: ['acme::x'], knowledgeIds: ['ALIAS'] });
    assertError(noRoot.results[0].error, 'CG_DOCUMENT_ROOT_REQUIRED', 'document', 'check_config');
    assertNoPath(r, t.root, outside);
    await rejectsWith(
      CapabilityGraph.open({ providers: [{ definition, documentRoot: path.join(t.root, 'nope') }] }),
      'CG_CONFIG_INVALID',
      'load',
      'check_config',
      { path: 'providers[0].documentRoot' },
    );
  } finally {
    await graph.close();
    await rootless.close();
    t.cleanup();
    rmSync(outside, { recursive: true, force: true });
  }
});

test('a multi-MiB document reads page by page, exactly, on character boundaries', async () => {
  const t = tempTree();
  let text = '\ufeff# 大文件\r\n\r\n';
  for (let i = 0; text.length < 2_000_000; i++) text += `第 ${i} 行：𝄞 emoji 🙂 ünïcödé\r\n${i % 50 === 0 ? '\r\n```\r\ncode\r\n```\r\n' : ''}`;
  t.put('big.md', text);
  const bytes = Buffer.from(text, 'utf8');
  const graph = await CapabilityGraph.open({
    providers: [{ definition: { providerId: 'acme', name: 'A', version: '1', capabilities: [cap('x', { knowledge: [doc('BIG', file('big.md'))] })] }, documentRoot: t.root }],
  });
  try {
    const pages = [];
    let page = await graph.readDocumentPage({ capability: 'acme::x', knowledgeId: 'BIG' });
    assert.equal(page.startOffset, 0);
    assert.equal(page.totalBytes, bytes.length);
    assert.equal(page.meta.completeness, 'partial');
    pages.push(page);
    while (page.hasMore) {
      page = await graph.readDocumentPage({ capability: 'acme::x', knowledgeId: 'BIG', cursor: page.nextCursor });
      pages.push(page);
    }
    assert.ok(bytes.length > 2 * 1024 * 1024);
    assert.equal(pages.map((p) => p.text).join(''), text, 'BOM, CRLF and every character survive');
    for (const p of pages) {
      assert.ok(p.byteLength <= 32768);
      assert.equal(Buffer.byteLength(p.text), p.endOffset - p.startOffset);
      assert.equal(p.contentId, pages[0].contentId);
      assert.equal(p.pageContentId.length, 18);
    }
    // an offset inside a character, both start and cursor, and a too large page
    await rejectsWith(graph.readDocumentPage({ capability: 'acme::x', knowledgeId: 'BIG', startOffset: 1 }), 'CG_INPUT_INVALID', 'document', 'fix_input');
    await rejectsWith(graph.readDocumentPage({ capability: 'acme::x', knowledgeId: 'BIG', startOffset: 0, cursor: pages[0].nextCursor }), 'CG_INPUT_INVALID', 'document', 'fix_input');
    await rejectsWith(graph.readDocumentPage({ capability: 'acme::x', knowledgeId: 'BIG', maxBytes: 40000 }), 'CG_INPUT_TOO_LARGE', 'document', 'narrow_scope');
    const small = await graph.readDocumentPage({ capability: 'acme::x', knowledgeId: 'BIG', startOffset: 3, maxBytes: 5 });
    assert.equal(small.startOffset, 3);
    assert.ok(small.endOffset <= 8);
    // a file rewritten between two pages
    writeFileSync(path.join(t.root, 'big.md'), text.replace('大文件', '小文件'));
    await rejectsWith(graph.readDocumentPage({ capability: 'acme::x', knowledgeId: 'BIG', cursor: pages[0].nextCursor }), 'CG_REVISION_MISMATCH', 'document', 'refresh');
    const whole2 = await graph.readDocuments({ selected: ['acme::x'] });
    assert.equal(whole2.results[0].value.text.slice(0, 6), '\ufeff# 小文件');
    assertNoPath(pages, t.root);
  } finally {
    await graph.close();
    t.cleanup();
  }
});

test('knowledge roots: directories and installed packages (scoped, with spaces and Unicode)', async () => {
  const t = tempTree();
  t.put('docs/中文 guide.mdx', '# 中文\n');
  t.put('app/node_modules/@scope/lib/package.json', JSON.stringify({ name: '@scope/lib', version: '1.2.3' }));
  t.put('app/node_modules/@scope/lib/README.md', '# lib\n');
  mkdirSync(path.join(t.root, 'app', 'src', 'deep'), { recursive: true });
  const knowledge = [doc('CN', file('中文 guide.mdx', 'docs')), doc('PKG', file('README.md', 'pkg'))];
  const knowledgeRoots = {
    docs: { kind: 'directory', rootDir: path.join(t.root, 'docs') },
    pkg: { kind: 'package', packageName: '@scope/lib', resolveFrom: path.join(t.root, 'app', 'src', 'deep') },
  };
  const definition = { providerId: 'acme', name: 'A', version: '1', capabilities: [cap('x', { knowledge })] };
  const graph = await CapabilityGraph.open({ providers: [{ definition, knowledgeRoots }] });
  try {
    const r = await graph.readDocuments({ selected: ['acme::x'] });
    assert.deepEqual(r.results.map((s) => [s.value.source, s.value.text]), [
      ['root:docs/中文 guide.mdx', '# 中文\n'],
      ['root:pkg/README.md', '# lib\n'],
    ]);
    assert.equal(r.results[0].value.contentType, 'text/markdown; charset=utf-8');
    assertNoPath(r, t.root);
    await rejectsWith(
      CapabilityGraph.open({ providers: [{ definition, knowledgeRoots: { ...knowledgeRoots, pkg: { kind: 'package', packageName: 'absent', resolveFrom: t.root } } }] }),
      'CG_CONFIG_INVALID',
      'load',
      'check_config',
      { path: 'providers[0].knowledgeRoots["pkg"].packageName' },
    );
  } finally {
    await graph.close();
    t.cleanup();
  }
});

test('a package root reinstalled after open fails its documents root_changed until the bound package is back', async () => {
  const t = tempTree();
  const lib = path.join(t.root, 'app', 'node_modules', 'lib');
  const manifest = (version) => JSON.stringify({ name: 'lib', version });
  t.put('app/node_modules/lib/package.json', manifest('1.0.0'));
  t.put('app/node_modules/lib/a.md', '# a\n');
  t.put('app/node_modules/lib/b.md', '# b\n');
  t.put('docs/c.md', '# c\n');
  const knowledge = [doc('A', file('a.md', 'pkg')), doc('B', file('b.md', 'pkg')), doc('C', file('c.md', 'docs'))];
  const knowledgeRoots = {
    docs: { kind: 'directory', rootDir: path.join(t.root, 'docs') },
    pkg: { kind: 'package', packageName: 'lib', resolveFrom: path.join(t.root, 'app') },
  };
  const definition = { providerId: 'acme', name: 'A', version: '1', capabilities: [cap('x', { knowledge })] };
  const graph = await CapabilityGraph.open({ providers: [{ definition, knowledgeRoots }] });
  const read = async () => (await graph.readDocuments({ selected: ['acme::x'] })).results;
  const changed = (results) => {
    for (const slot of results.slice(0, 2)) assertError(slot.error, 'CG_DOCUMENT_UNREADABLE', 'document', 'retry', { reason: 'root_changed' });
    assert.equal(results[2].value.text, '# c\n', 'a directory root is not the package');
    assertNoPath(results, t.root);
  };
  try {
    assert.deepEqual((await read()).map((s) => s.value.text), ['# a\n', '# b\n', '# c\n']);
    // Rewritten in place as another version.
    t.put('app/node_modules/lib/package.json', manifest('1.0.1'));
    changed(await read());
    t.put('app/node_modules/lib/package.json', manifest('1.0.0'));
    assert.ok((await read()).every((s) => s.ok));
    // Replaced by a new directory at the same place.
    renameSync(lib, `${lib}-old`);
    t.put('app/node_modules/lib/package.json', manifest('2.0.0'));
    changed(await read());
  } finally {
    await graph.close();
    t.cleanup();
  }
});

test('a package directory that cannot be opened is CG_CONFIG_INVALID naming its packageName', async () => {
  const t = tempTree();
  t.put('app/node_modules/lib/package.json', JSON.stringify({ name: 'lib', version: '1.0.0' }));
  const config = {
    providers: [{ definition: { providerId: 'acme', name: 'A', version: '1', capabilities: [] }, knowledgeRoots: { pkg: { kind: 'package', packageName: 'lib', resolveFrom: path.join(t.root, 'app') } } }],
  };
  try {
    const graph = await CapabilityGraph.open(config);
    await graph.close();
    // The same package, in a process out of file descriptors: found, but not opened.
    const child = `
      const { CapabilityGraph } = await import('@devcodex/capability-graph');
      const { openSync, closeSync } = await import('node:fs');
      const taken = [];
      try { for (;;) taken.push(openSync('/dev/null', 'r')); } catch {}
      let out;
      try { await CapabilityGraph.open(JSON.parse(process.argv[1])); out = 'opened'; } catch (e) { out = JSON.stringify(e.toJSON()); }
      for (const fd of taken) closeSync(fd);
      process.stdout.write(out);`;
    const out = execFileSync('sh', ['-c', 'ulimit -n 64 && exec "$0" --input-type=module -e "$1" "$2"', process.execPath, child, JSON.stringify(config)], { cwd: repoRoot, encoding: 'utf8' });
    // Out of descriptors is a passing condition of the machine: retry (SPEC §14 D20).
    assertError(JSON.parse(out), 'CG_CONFIG_INVALID', 'load', 'retry', {
      path: 'providers[0].knowledgeRoots["pkg"].packageName',
      expected: 'package directory that can be opened',
      reason: 'temporarily_unreadable',
    });
    assertNoPath(out, t.root);
  } finally {
    t.cleanup();
  }
});

test('URL documents are references unless a host reader reads them; reader output is checked', async () => {
  const url = 'https://docs.example/guide.md';
  const knowledge = [doc('WEB', { type: 'http', url }), doc('WEB2', { type: 'http', url: 'https://docs.example/other.md' })];
  const definition = { providerId: 'acme', name: 'A', version: '1', capabilities: [cap('x', { knowledge })] };
  const plain = await CapabilityGraph.open({ providers: [{ definition }] });
  const r0 = await plain.readDocuments({ selected: ['acme::x'] });
  for (const s of r0.results) assertError(s.error, 'CG_DOCUMENT_REFERENCE_ONLY', 'document', 'fix_input');
  await plain.close();

  const body = '# Remote guide\n\nSecond paragraph.\n';
  const calls = [];
  const good = () => ({ bytes: new TextEncoder().encode(body), contentType: 'text/markdown; charset=utf-8', source: url });
  let reply = good;
  const reader = {
    id: 'test-reader',
    canRead: (ref) => ref.locator.type === 'http' && ref.locator.url === url,
    async read(ref, ctx, budget) {
      calls.push([ref.knowledgeId, ctx.providerId, budget.maxBytes]);
      return reply();
    },
  };
  const graph = await CapabilityGraph.open({ providers: [{ definition }], readers: [reader] });
  try {
    let r = await graph.readDocuments({ selected: ['acme::x'] });
    assert.equal(r.results[0].value.text, body);
    assert.equal(r.results[0].value.source, url);
    assertError(r.results[1].error, 'CG_DOCUMENT_REFERENCE_ONLY', 'document', 'fix_input'); // no reader accepts it
    assert.deepEqual(calls[0], ['WEB', 'acme', 4194304]);
    const page = await graph.readDocumentPage({ capability: 'acme::x', knowledgeId: 'WEB', maxBytes: 20 });
    const rest = await graph.readDocumentPage({ capability: 'acme::x', knowledgeId: 'WEB', maxBytes: 20, cursor: page.nextCursor });
    assert.equal(page.text + rest.text, body);
    const contentId = r.results[0].value.contentId;

    const slot = async () => (await graph.readDocuments({ selected: ['acme::x'], knowledgeIds: ['WEB'] })).results[0];
    const cases = [
      [() => ({ ...good(), contentId }), 'ok'],
      [() => ({ ...good(), contentId: 'k:0000000000000000' }), 'CG_ADAPTER_CONTRACT_INVALID'],
      [() => ({ ...good(), source: 'https://elsewhere.example/' }), 'CG_ADAPTER_CONTRACT_INVALID'],
      [() => ({ ...good(), bytes: body }), 'CG_ADAPTER_CONTRACT_INVALID'],
      [() => ({ ...good(), contentType: ' ' }), 'CG_ADAPTER_CONTRACT_INVALID'],
      [() => ({ ...good(), bytes: new Uint8Array([0xff]) }), 'CG_DOCUMENT_UNREADABLE', 'fix_input'],
      [() => { throw new Error('connect ECONNREFUSED /home/secret/path'); }, 'CG_DOCUMENT_UNREADABLE', 'retry'],
      [() => { throw Object.assign(new Error('stale'), { code: 'CG_INDEX_STALE' }); }, 'CG_INDEX_STALE'],
      [() => null, 'CG_ADAPTER_CONTRACT_INVALID'],
    ];
    for (const [make, expected, action] of cases) {
      reply = make;
      const s = await slot();
      assert.equal(s.ok ? 'ok' : s.error.code, expected, String(make));
      if (action) assert.equal(s.error.nextAction, action, String(make));
      if (!s.ok) {
        assert.equal(s.error.phase, 'document');
        assert.ok(!JSON.stringify(s).includes('secret'));
      }
    }
    reply = () => { throw new Error('down'); };
    assert.equal((await slot()).error.nextAction, 'retry');
    const tight = await CapabilityGraph.open({ providers: [{ definition }], readers: [{ ...reader, read: async () => ({ bytes: new Uint8Array(5000), contentType: 'text/plain', source: url }) }], budgets: { read: { maxResponseBytes: 4096 } } });
    assertError((await tight.readDocuments({ selected: ['acme::x'], knowledgeIds: ['WEB'] })).results[0].error, 'CG_DOCUMENT_TOO_LARGE', 'document', 'narrow_scope');
    await tight.close();
  } finally {
    await graph.close();
  }
});

test('a bound facade pages documents and lists members by a local capabilityId', async () => {
  const graph = await CapabilityGraph.open({ providers: [seedSource()] });
  const bound = graph.forProvider('seed.http');
  try {
    const byId = await bound.readDocumentPage({ capabilityId: 'route.validation', knowledgeId: 'D-02' });
    const byRef = await bound.readDocumentPage({ capability: 'route.validation', knowledgeId: 'D-02' });
    assert.deepEqual(byId, byRef);
    assert.equal(byId.text, readFileSync(path.join(seedRoot, 'knowledge', 'route-validation.md'), 'utf8'));
    const next = await bound.readDocumentPage({ capabilityId: 'route.validation', knowledgeId: 'D-02', cursor: undefined });
    assert.equal(next.contentId, byId.contentId);
    const members = await bound.listKnowledgeMembers({ capabilityId: 'route', collectionId: 'ROUTING' });
    assert.deepEqual(members, await bound.listKnowledgeMembers({ capability: 'route', collectionId: 'ROUTING' }));
    assert.deepEqual(members.items.map((m) => m.knowledgeId), ['D-01', 'D-02']);
    // One way to name the capability: both keys, a qualified or object capabilityId, or the key
    // on the unbound graph are refused.
    const both = { capability: 'route', capabilityId: 'route' };
    for (const q of [
      () => bound.readDocumentPage({ ...both, knowledgeId: 'D-01' }),
      () => bound.readDocumentPage({ capabilityId: 'seed.http::route.validation', knowledgeId: 'D-02' }),
      () => bound.readDocumentPage({ capabilityId: { capabilityId: 'route.validation' }, knowledgeId: 'D-02' }),
      () => graph.readDocumentPage({ capabilityId: 'route.validation', knowledgeId: 'D-02' }),
    ]) {
      await rejectsWith(q(), 'CG_INPUT_INVALID', 'document', 'fix_input');
    }
    for (const q of [
      () => bound.listKnowledgeMembers({ ...both, collectionId: 'ROUTING' }),
      () => bound.listKnowledgeMembers({ capabilityId: 7, collectionId: 'ROUTING' }),
      () => graph.listKnowledgeMembers({ capabilityId: 'route', collectionId: 'ROUTING' }),
    ]) {
      await rejectsWith(q(), 'CG_INPUT_INVALID', 'query', 'fix_input');
    }
    await rejectsWith(bound.listKnowledgeMembers({ capabilityId: 'nope', collectionId: 'ROUTING' }), 'CG_CAPABILITY_NOT_FOUND', 'query', 'refresh');
  } finally {
    await graph.close();
  }
});

test('URL documents of any size page through a reader stream; without stream the whole-read budget applies', async () => {
  const url = 'https://docs.example.com/big.md';
  const definition = { providerId: 'acme', name: 'A', version: '1', capabilities: [cap('x', { knowledge: [doc('BIG', { type: 'http', url })] })] };
  const line = 'Ünïcödé line of a large remote guide.\n\n';
  const body = Buffer.from(line.repeat(Math.ceil(5_000_000 / Buffer.byteLength(line))));
  const contentType = 'text/markdown; charset=utf-8';
  let mutate = (chunk) => chunk;
  let streams = 0;
  const reader = {
    id: 'streaming',
    canRead: (ref) => ref.locator.type === 'http',
    async read() {
      throw new Error('the page reads stream');
    },
    async *stream(ref, ctx, { chunkBytes }) {
      streams++;
      assert.equal(ctx.providerId, 'acme');
      // Chunks cut anywhere, code points split across them.
      for (let at = 0; at < body.length; at += chunkBytes) {
        yield mutate({ bytes: new Uint8Array(body.subarray(at, at + chunkBytes)), contentType, source: url }, at);
      }
    },
  };
  const graph = await CapabilityGraph.open({ providers: [{ definition }], readers: [reader] });
  try {
    const q = { capability: 'acme::x', knowledgeId: 'BIG' };
    const first = await graph.readDocumentPage(q);
    assert.equal(first.totalBytes, body.length);
    assert.equal(first.startOffset, 0);
    assert.equal(first.text, body.subarray(0, first.endOffset).toString('utf8'));
    // A page far into the document.
    const far = Math.floor(body.length / 2 / Buffer.byteLength(line)) * Buffer.byteLength(line);
    const middle = await graph.readDocumentPage({ ...q, startOffset: far, maxBytes: 1000 });
    assert.equal(middle.text, body.subarray(far, middle.endOffset).toString('utf8'));
    assert.equal(middle.contentId, first.contentId, 'the whole document identifies every page');
    const next = await graph.readDocumentPage({ ...q, cursor: first.nextCursor });
    assert.equal(next.startOffset, first.endOffset);
    assert.equal(streams, 3, 'each page streams the source');
    // The source changed between pages: the cursor no longer matches.
    mutate = (chunk, at) => (at === 0 ? { ...chunk, bytes: new TextEncoder().encode('# Changed\n') } : chunk);
    await rejectsWith(graph.readDocumentPage({ ...q, cursor: next.nextCursor }), 'CG_REVISION_MISMATCH', 'document', 'refresh');
    // Every chunk is checked.
    for (const bad of [
      (chunk) => ({ ...chunk, source: 'https://elsewhere.example/' }),
      (chunk, at) => ({ ...chunk, contentType: at === 0 ? contentType : 'text/plain' }),
      (chunk) => ({ ...chunk, contentType: ' ' }),
      (chunk) => ({ ...chunk, bytes: 'text' }),
      (chunk) => ({ ...chunk, bytes: new Uint8Array(chunk.bytes.length + 1) }),
    ]) {
      mutate = bad;
      await rejectsWith(graph.readDocumentPage(q), 'CG_ADAPTER_CONTRACT_INVALID', 'document', 'contact_admin', { reason: 'reader_stream_invalid' });
    }
    mutate = (chunk, at) => (at === 0 ? { ...chunk, bytes: new Uint8Array([0xc3]) } : chunk);
    await rejectsWith(graph.readDocumentPage(q), 'CG_DOCUMENT_UNREADABLE', 'document', 'fix_input', { reason: 'invalid_utf8' });
    mutate = () => {
      throw new Error('socket closed at /srv/secret');
    };
    const e = await rejectsWith(graph.readDocumentPage(q), 'CG_DOCUMENT_UNREADABLE', 'document', 'retry');
    assert.ok(!JSON.stringify(e).includes('secret'));
  } finally {
    await graph.close();
  }
  // Without stream, a page read is a whole read: over read.maxResponseBytes it is too large.
  const whole = await CapabilityGraph.open({
    providers: [{ definition }],
    readers: [{ id: 'whole', canRead: () => true, read: async (ref, ctx, { maxBytes }) => ({ bytes: new Uint8Array(body.subarray(0, Math.min(body.length, maxBytes + 1))), contentType, source: url }) }],
  });
  try {
    await rejectsWith(whole.readDocumentPage({ capability: 'acme::x', knowledgeId: 'BIG' }), 'CG_DOCUMENT_TOO_LARGE', 'document', 'narrow_scope');
  } finally {
    await whole.close();
  }
});

test('page reads take a signal: readers receive it, an abort settles the read at once', { timeout: 30_000 }, async () => {
  const url = 'https://docs.example.com/slow.md';
  const definition = { providerId: 'acme', name: 'A', version: '1', capabilities: [cap('x', { knowledge: [doc('SLOW', { type: 'http', url })] })] };
  const seen = [];
  // The reader answers only when its signal aborts (then it throws), or never.
  const waitForAbort = (signal) =>
    new Promise((resolve, reject) => {
      seen.push(signal);
      signal?.addEventListener('abort', () => reject(Object.assign(new Error('aborted'), { code: 'ABORT_ERR' })), { once: true });
    });
  const streaming = { id: 's', canRead: () => true, read: async () => ({}), async *stream(ref, ctx, options) { await waitForAbort(options.signal); } };
  const reading = { id: 'r', canRead: () => true, read: (ref, ctx, budget) => waitForAbort(budget.signal) };
  for (const reader of [streaming, reading]) {
    const graph = await CapabilityGraph.open({ providers: [{ definition }], readers: [reader] });
    try {
      const q = { capability: 'acme::x', knowledgeId: 'SLOW' };
      for (const signal of ['x', {}, 1]) {
        await rejectsWith(graph.readDocumentPage({ ...q, signal }), 'CG_INPUT_INVALID', 'document', 'fix_input', { field: 'signal' });
      }
      const controller = new AbortController();
      const pending = graph.readDocumentPage({ ...q, signal: controller.signal });
      while (seen.length === 0) await new Promise((resolve) => setImmediate(resolve));
      assert.ok(seen.pop() instanceof AbortSignal, `${reader.id} receives a signal`);
      controller.abort();
      await rejectsWith(pending, 'CG_DOCUMENT_UNREADABLE', 'document', 'retry', { reason: 'aborted' });
      // Already aborted: settles without waiting for anything.
      await rejectsWith(graph.readDocumentPage({ ...q, signal: AbortSignal.abort() }), 'CG_DOCUMENT_UNREADABLE', 'document', 'retry');
      seen.length = 0;
      // The Tool Adapter passes its call's signal.
      const adapter = createToolAdapter(graph, { documentBodies: true });
      const tool = new AbortController();
      const call = adapter.call('read_document_page', q, { signal: tool.signal });
      while (seen.length === 0) await new Promise((resolve) => setImmediate(resolve));
      tool.abort();
      const out = await call;
      assert.deepEqual([out.ok, out.error.code, out.error.nextAction], [false, 'CG_DOCUMENT_UNREADABLE', 'retry']);
      seen.length = 0;
    } finally {
      await graph.close();
    }
  }
  // Local files: a signal is accepted; one aborted before the read settles it at once.
  const graph = await CapabilityGraph.open({ providers: [seedSource()] });
  try {
    const q = { capability: 'seed.http::route.validation', knowledgeId: 'D-02' };
    assert.equal((await graph.readDocumentPage({ ...q, signal: new AbortController().signal })).startOffset, 0);
    await rejectsWith(graph.readDocumentPage({ ...q, signal: AbortSignal.abort() }), 'CG_DOCUMENT_UNREADABLE', 'document', 'retry');
    await rejectsWith(graph.readSpecificationPage({ providerId: 'seed.http', knowledgeId: 'SPEC-01', signal: AbortSignal.abort() }), 'CG_DOCUMENT_UNREADABLE', 'document', 'retry');
    await rejectsWith(graph.readDocuments({ selected: ['seed.http::route'], signal: new AbortController().signal }), 'CG_INPUT_INVALID', 'document', 'fix_input');
  } finally {
    await graph.close();
  }
});
