// open(): configuration shape (phase config), definitions (phase load) and the pure-JSON walk.
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, symlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CapabilityGraph } from '@devcodex/capability-graph';
import { cap, inline, rejectsWith, seedSource } from './helpers.mjs';

const open = (config) => CapabilityGraph.open(config);
const openOne = (definition) => open({ providers: [{ definition }] });
const def = (extra) => ({ providerId: 'acme', name: 'Acme', version: '1', capabilities: [], ...extra });

test('the seed provider opens and an empty inline provider opens', async () => {
  const graph = await open({ providers: [seedSource(), inline('acme')] });
  const r = await graph.resolve({ ids: ['acme::x'] }).catch((e) => e);
  assert.equal(r.code, 'CG_CAPABILITY_NOT_FOUND');
  await graph.close();
});

const CONFIG_CASES = [
  ['config is not an object', null, '$', 'object'],
  ['config is an array', [], '$', 'object'],
  ['providers missing', {}, 'providers', 'array'],
  ['providers is null', { providers: null }, 'providers', 'array'],
  ['providers is not an array', { providers: {} }, 'providers', 'array'],
  ['a provider entry is null', { providers: [null] }, 'providers[0]', 'object'],
  ['a provider entry is a string', { providers: ['seed'] }, 'providers[0]', 'object'],
  ['unknown top-level key', { providers: [], extra: 1 }, 'extra', undefined],
  ['unknown provider key', { providers: [{ ...inline('acme'), nope: 1 }] }, 'providers[0].nope', undefined],
  ['duplicate inline provider', { providers: [inline('acme'), inline('acme')] }, 'providers[1]', 'unique providerId'],
  ['file provider without authority', { providers: [{ providerId: 'seed.http' }] }, 'providers[0].authority', 'object'],
  ['file provider with a bad id', { providers: [{ ...seedSource(), providerId: 'Seed' }] }, 'providers[0].providerId', 'ID'],
  ['rootDir empty', { providers: [{ providerId: 'p', authority: { kind: 'file', rootDir: '' } }] }, 'providers[0].authority.rootDir', 'non-empty string'],
  ['rootDir null', { providers: [{ providerId: 'p', authority: { kind: 'file', rootDir: null } }] }, 'providers[0].authority.rootDir', 'non-empty string'],
  ['unknown layout', { providers: [{ providerId: 'p', authority: { kind: 'file', rootDir: '.', definitionLayout: 'flat' } }] }, 'providers[0].authority.definitionLayout', 'one of: legacy, directory'],
  ['unknown authority kind', { providers: [{ providerId: 'p', authority: { kind: 'ftp' } }] }, 'providers[0].authority.kind', 'one of: file, database'],
  ['documentRoot null', { providers: [{ ...inline('acme'), documentRoot: null }] }, 'providers[0].documentRoot', 'non-empty string'],
  ['budgets null', { providers: [], budgets: null }, 'budgets', 'object'],
  ['unknown budget group', { providers: [], budgets: { nope: {} } }, 'budgets.nope', undefined],
  ['budget of zero', { providers: [], budgets: { resolve: { maxNodes: 0 } } }, 'budgets.resolve.maxNodes', 'integer >= 1'],
  ['budget default above its max', { providers: [], budgets: { neighbors: { defaultPageSize: 500 } } }, 'budgets.neighbors.defaultPageSize', 'integer <= budgets.neighbors.maxPageSize'],
  ['provider outside host scope', { providers: [inline('acme')], hostAllowedProviders: ['other'] }, 'providers[0]', undefined],
  ['provider outside integration scope', { providers: [inline('acme')], integrationEnabledProviders: [] }, 'providers[0]', undefined],
  ['scoped provider without a source', { providers: [inline('acme')], hostAllowedProviders: ['acme', 'beta'], integrationEnabledProviders: ['acme', 'beta'] }, 'hostAllowedProviders[1]', 'configured provider'],
  ['invalid id in a scope list', { providers: [], hostAllowedProviders: ['A'] }, 'hostAllowedProviders[0]', 'ID'],
  ['executor without match', { providers: [], executor: { id: 'x' } }, 'executor.match', 'function'],
  ['executor without id', { providers: [], executor: { match() {} } }, 'executor.id', 'non-empty string'],
  ['retriever without retrieve', { providers: [], capabilityRetriever: { id: 'r' } }, 'capabilityRetriever.retrieve', 'function'],
  ['runtime adapter with a bad provider', { providers: [], runtimeAdapters: [{ id: 'r', providerId: 'A', query() {} }] }, 'runtimeAdapters[0].providerId', 'ID'],
  ['readers not an array', { providers: [], readers: {} }, 'readers', 'array'],
  ['database adapter without openView', { providers: [{ providerId: 'db', authority: { kind: 'database', adapter: { id: 'a' } } }] }, 'providers[0].authority.adapter.openView', 'function'],
];

for (const [name, config, pathExpected, expected] of CONFIG_CASES) {
  test(`config: ${name} → CG_CONFIG_INVALID at ${pathExpected}`, async () => {
    const e = await rejectsWith(open(config), 'CG_CONFIG_INVALID', 'config', 'check_config', { path: pathExpected });
    if (expected !== undefined) assert.equal(e.details.expected, expected);
    else assert.equal(typeof e.details.expected, 'string');
  });
}

test('config: a missing root directory is CG_CONFIG_INVALID in phase load', async () => {
  await rejectsWith(
    open({ providers: [{ providerId: 'p', authority: { kind: 'file', rootDir: '/nonexistent/cg-root' } }] }),
    'CG_CONFIG_INVALID',
    'load',
    'check_config',
    { path: 'providers[0].authority.rootDir' },
  );
});

const ID_CASES = ['A', '0a', 'a b', 'a'.repeat(129), '中'];
for (const id of ID_CASES) {
  test(`definitions: capability ID ${JSON.stringify(id).slice(0, 20)} is invalid`, async () => {
    await rejectsWith(openOne(def({ capabilities: [cap(id)] })), 'CG_DEFINITION_INVALID', 'load', 'fix_input', {
      field: 'capabilities[0].capabilityId',
      reason: 'id_invalid',
    });
  });
  test(`definitions: provider ID ${JSON.stringify(id).slice(0, 20)} is invalid`, async () => {
    await rejectsWith(openOne(def({ providerId: id })), 'CG_DEFINITION_INVALID', 'load', 'fix_input', {
      field: 'providerId',
      reason: 'id_invalid',
    });
  });
}

const DEFINITION_CASES = [
  ['a blank name', def({ capabilities: [cap('a', { name: '  ' })] }), 'capabilities[0].name', 'nonempty_string_required'],
  ['a name of byte order marks and spaces only', def({ capabilities: [cap('a', { name: '\uFEFF \uFEFF' })] }), 'capabilities[0].name', 'nonempty_string_required'],
  ['a provider name of a byte order mark only', def({ name: '\uFEFF' }), 'name', 'nonempty_string_required'],
  ['null for an optional field', def({ capabilities: [cap('a', { distinction: null })] }), 'capabilities[0].distinction', 'nonempty_string_required'],
  ['null examples', def({ capabilities: [cap('a', { examples: null })] }), 'capabilities[0].examples', 'array_required'],
  ['an unknown key', def({ capabilities: [cap('a', { tags: [] })] }), 'capabilities[0].tags', 'unknown_key'],
  ['a missing required key', def({ capabilities: [{ capabilityId: 'a', name: 'A', description: 'd' }] }), 'capabilities[0].whenToUse', 'required'],
  ['a blank provider version', def({ version: '' }), 'version', 'nonempty_string_required'],
  ['capabilities missing', { providerId: 'acme', name: 'A', version: '1' }, 'capabilities', 'required'],
  ['a function value', def({ capabilities: [cap('a', { name() {} })] }), 'capabilities[0].name', 'non_json_value'],
  ['a getter', def({ capabilities: [Object.defineProperty(cap('a'), 'name', { get: () => 'x', enumerable: true })] }), 'capabilities[0].name', 'non_json_value'],
  ['a class instance', def({ capabilities: [cap('a', { examples: new Set(['x']) })] }), 'capabilities[0].examples', 'non_json_value'],
  ['NaN', def({ capabilities: [cap('a', { examples: [NaN] })] }), 'capabilities[0].examples[0]', 'non_json_value'],
  ['a BigInt', def({ capabilities: [cap('a', { description: 1n })] }), 'capabilities[0].description', 'non_json_value'],
  ['a sparse array', def({ capabilities: [cap('a', { examples: [, 'x'] })] }), 'capabilities[0].examples[0]', 'non_json_value'],
  ['a lone-surrogate value', def({ capabilities: [cap('a', { name: 'x\udc00' })] }), 'capabilities[0].name', 'non_json_value'],
  ['a lone-surrogate key', def({ capabilities: [cap('a', { ['k\udc00']: 1 })] }), 'capabilities[0].k\ufffd', 'non_json_value'],
  ['a lone-surrogate key of the provider', def({ ['\ud800']: 1 }), '\ufffd', 'non_json_value'],
  ['a lone-surrogate key beside its stand-in', def({ capabilities: [cap('a', { ['k\udc00']: 1, ['k\ufffd']: 2 })] }), 'capabilities[0]', 'non_json_value'],
  ['an oversize record', def({ capabilities: [cap('a', { description: 'x'.repeat(262_144) })] }), 'capabilities[0]', 'record_too_large'],
];

for (const [name, definition, field, reason] of DEFINITION_CASES) {
  test(`definitions: ${name} → CG_DEFINITION_INVALID`, async () => {
    await rejectsWith(openOne(definition), 'CG_DEFINITION_INVALID', 'load', 'fix_input', { field, reason });
  });
}

test('definitions: undefined-valued keys count as absent, cycles in values are rejected', async () => {
  const graph = await openOne(def({ capabilities: [cap('a', { distinction: undefined, examples: undefined })] }));
  await graph.close();
  const looped = cap('a');
  looped.examples = [looped];
  await rejectsWith(openOne(def({ capabilities: [looped] })), 'CG_DEFINITION_INVALID', 'load', 'fix_input', {
    reason: 'non_json_value',
  });
});

test('relations: a missing endpoint, cross-provider and duplicate endpoints', async () => {
  await rejectsWith(openOne(def({ capabilities: [cap('a', { requires: ['ghost'] })] })), 'CG_RELATION_INVALID', 'load', 'fix_input', {
    capabilityId: 'a',
    reason: 'missing_endpoint',
    endpoint: 'ghost',
  });
  await rejectsWith(openOne(def({ capabilities: [cap('a', { parents: ['other::b'] })] })), 'CG_RELATION_INVALID', 'load', 'fix_input', {
    reason: 'cross_provider',
  });
  await rejectsWith(
    openOne(def({ capabilities: [cap('a', { parents: [{ providerId: 'acme', capabilityId: 'b' }] }), cap('b')] })),
    'CG_RELATION_INVALID',
    'load',
    'fix_input',
    { reason: 'cross_provider' },
  );
  await rejectsWith(openOne(def({ capabilities: [cap('a', { related: ['b', 'b'] }), cap('b')] })), 'CG_RELATION_INVALID', 'load', 'fix_input', {
    reason: 'duplicate_endpoint',
    field: 'capabilities[0].related[1]',
  });
});

test('relations: cycles of length 1 and 3 name the relation and the cycle', async () => {
  await rejectsWith(openOne(def({ capabilities: [cap('a', { requires: ['a'] })] })), 'CG_RELATION_CYCLE', 'load', 'fix_input', {
    relation: 'requires',
    cycle: ['a', 'a'],
  });
  const three = [cap('a', { parents: ['b'] }), cap('b', { parents: ['c'] }), cap('c', { parents: ['a'] })];
  await rejectsWith(openOne(def({ capabilities: three })), 'CG_RELATION_CYCLE', 'load', 'fix_input', {
    relation: 'parents',
    cycle: ['a', 'b', 'c', 'a'],
  });
  // `related` may form cycles.
  const graph = await openOne(def({ capabilities: [cap('a', { related: ['b', 'a'] }), cap('b', { related: ['a'] })] }));
  await graph.close();
});

test('files: not JSON, not UTF-8 and a symlink out of the root fail with a relative file', async () => {
  const root = mkdtempSync(path.join(tmpdir(), 'cg-open-'));
  const outside = mkdtempSync(path.join(tmpdir(), 'cg-outside-'));
  try {
    writeFileSync(path.join(root, 'provider.json'), JSON.stringify({ providerId: 'p', name: 'P', version: '1' }));
    const source = { providerId: 'p', authority: { kind: 'file', rootDir: root } };
    mkdirSync(path.join(root, 'defs'));
    writeFileSync(path.join(root, 'defs', 'a.capability.json'), '{ not json');
    let e = await rejectsWith(open({ providers: [source] }), 'CG_DEFINITION_INVALID', 'load', 'fix_input', {
      file: 'defs/a.capability.json',
      reason: 'invalid_json',
    });
    assert.ok(!JSON.stringify(e).includes(root), 'no absolute path in the error');
    writeFileSync(path.join(root, 'defs', 'a.capability.json'), Buffer.from([0x7b, 0xff, 0x7d]));
    await rejectsWith(open({ providers: [source] }), 'CG_DEFINITION_INVALID', 'load', 'fix_input', { reason: 'invalid_utf8' });
    rmSync(path.join(root, 'defs', 'a.capability.json'));
    writeFileSync(path.join(outside, 'x.capability.json'), JSON.stringify(cap('x')));
    symlinkSync(path.join(outside, 'x.capability.json'), path.join(root, 'x.capability.json'));
    e = await rejectsWith(open({ providers: [source] }), 'CG_DEFINITION_INVALID', 'load', 'fix_input', {
      file: 'x.capability.json',
      reason: 'outside_root',
    });
    assert.ok(!JSON.stringify(e).includes(outside));
  } finally {
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  }
});
