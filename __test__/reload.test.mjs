// reload (SPEC §6.4, §14 D5): only fully valid candidates publish; current and previous are
// served; a failure keeps the old current with refreshFailed.
import test from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CapabilityGraph } from '@devcodex/capability-graph';
import { cap, rejectsWith, seedRoot } from './helpers.mjs';

const definition = (capabilities) => ({ providerId: 'acme', name: 'Acme', version: '1', capabilities });

test('inline reload publishes new definitions and keeps the previous revision readable', async () => {
  const graph = await CapabilityGraph.open({ providers: [{ definition: definition([cap('a')]) }] });
  const first = (await graph.resolve({ ids: ['acme::a'] })).meta.staticRevision;

  const unchanged = await graph.reload();
  assert.deepEqual(unchanged, {
    ok: true,
    providers: [{ providerId: 'acme', ok: true, staticRevision: first, servedFrom: 'current', refreshFailed: false }],
  });

  const second = await graph.reload({ definitions: { acme: definition([cap('a'), cap('b')]) } });
  assert.equal(second.ok, true);
  const [entry] = second.providers;
  assert.notEqual(entry.staticRevision, first);
  assert.equal(entry.previousStaticRevision, first);

  const old = await graph.resolve({ ids: ['acme::a'], requiredStaticRevision: first });
  assert.equal(old.meta.servedFrom, 'previous');
  assert.equal(old.meta.staticRevision, first);
  await rejectsWith(graph.resolve({ ids: ['acme::b'], requiredStaticRevision: first }), 'CG_CAPABILITY_NOT_FOUND', 'query', 'refresh');
  assert.equal((await graph.resolve({ ids: ['acme::b'] })).meta.servedFrom, 'current');

  // The same definitions again publish nothing and retire nothing.
  const same = await graph.reload({ providerId: 'acme', definitions: { acme: definition([cap('b'), cap('a')]) } });
  assert.equal(same.providers[0].staticRevision, entry.staticRevision);
  assert.equal(same.providers[0].previousStaticRevision, first);

  await graph.reload({ definitions: { acme: definition([cap('c')]) } });
  await rejectsWith(graph.resolve({ ids: ['acme::a'], requiredStaticRevision: first }), 'CG_REVISION_MISMATCH', 'query', 'refresh');
  const prev = await graph.resolve({ ids: ['acme::b'], requiredStaticRevision: entry.staticRevision });
  assert.equal(prev.meta.servedFrom, 'previous');
  await graph.close();
});

test('a failing candidate keeps the old current, flags refreshFailed and reports CG_RELOAD_FAILED', async () => {
  const graph = await CapabilityGraph.open({ providers: [{ definition: definition([cap('a')]) }] });
  const before = (await graph.resolve({ ids: ['acme::a'] })).meta.staticRevision;
  const report = await graph.reload({ definitions: { acme: definition([cap('a', { requires: ['ghost'] })]) } });
  assert.equal(report.ok, false);
  assert.deepEqual(report.error, {
    code: 'CG_RELOAD_FAILED',
    phase: 'load',
    message: 'Provider reload failed; the previous snapshot stays in service',
    nextAction: 'check_config',
  });
  const [entry] = report.providers;
  assert.equal(entry.ok, false);
  assert.equal(entry.refreshFailed, true);
  assert.equal(entry.staticRevision, before);
  assert.equal(entry.error.code, 'CG_RELATION_INVALID');
  assert.equal(entry.error.phase, 'load');
  const after = await graph.resolve({ ids: ['acme::a'] });
  assert.equal(after.meta.staticRevision, before);
  assert.equal(after.meta.refreshFailed, true);
  const fixed = await graph.reload({ definitions: { acme: definition([cap('a'), cap('z')]) } });
  assert.equal(fixed.ok, true);
  assert.equal((await graph.resolve({ ids: ['acme::z'] })).meta.refreshFailed, undefined);
  await graph.close();
});

test('reload arguments are checked in phase lifecycle', async () => {
  const root = mkdtempSync(path.join(tmpdir(), 'cg-reload-'));
  cpSync(seedRoot, root, { recursive: true });
  const graph = await CapabilityGraph.open({
    providers: [
      { definition: definition([cap('a')]) },
      { providerId: 'seed.http', authority: { kind: 'file', rootDir: root, definitionLayout: 'directory' } },
    ],
  });
  try {
    const lifecycle = (p, code, action) => rejectsWith(p, code, 'lifecycle', action);
    await lifecycle(graph.reload({ providerId: 'nope' }), 'CG_PROVIDER_NOT_FOUND', 'refresh');
    await lifecycle(graph.reload({ providerId: 'Bad' }), 'CG_INPUT_INVALID', 'fix_input');
    await lifecycle(graph.reload({ extra: 1 }), 'CG_INPUT_INVALID', 'fix_input');
    await lifecycle(graph.reload(null), 'CG_INPUT_INVALID', 'fix_input');
    await lifecycle(graph.reload({ providerId: null }), 'CG_INPUT_INVALID', 'fix_input');
    await lifecycle(graph.reload({ definitions: { 'seed.http': definition([]) } }), 'CG_INPUT_INVALID', 'fix_input');
    await lifecycle(graph.reload({ definitions: { acme: { ...definition([]), providerId: 'other' } } }), 'CG_INPUT_INVALID', 'fix_input');
    await lifecycle(graph.reload({ providerId: 'seed.http', definitions: { acme: definition([]) } }), 'CG_INPUT_INVALID', 'fix_input');
    await lifecycle(graph.reload({ definitions: { nope: definition([]) } }), 'CG_PROVIDER_NOT_FOUND', 'refresh');

    // A file provider picks up an edited file.
    const before = (await graph.resolve({ ids: ['seed.http::route'] })).items[0];
    const file = path.join(root, 'capabilities', 'route.json');
    const edited = { ...JSON.parse(readFileSync(file, 'utf8')), name: 'Routing, edited' };
    writeFileSync(file, JSON.stringify(edited));
    const report = await graph.reload({ providerId: 'seed.http' });
    assert.equal(report.ok, true);
    assert.equal(report.providers.length, 1);
    assert.equal(report.providers[0].previousStaticRevision, before.staticRevision);
    assert.equal((await graph.resolve({ ids: ['seed.http::route'] })).items[0].name, 'Routing, edited');

    // A broken file fails the reload; the edited snapshot stays in service.
    writeFileSync(file, '{');
    const failed = await graph.reload({ providerId: 'seed.http' });
    assert.equal(failed.ok, false);
    assert.equal(failed.providers[0].error.code, 'CG_DEFINITION_INVALID');
    assert.equal(failed.providers[0].error.details.file, 'capabilities/route.json');
    assert.equal((await graph.resolve({ ids: ['seed.http::route'] })).items[0].name, 'Routing, edited');
  } finally {
    await graph.close();
    rmSync(root, { recursive: true, force: true });
  }
});
