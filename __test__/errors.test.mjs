import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import * as api from '@devcodex/capability-graph';
import { GraphError, ErrorCode, Phase, NextAction } from '@devcodex/capability-graph';
import { repoRoot, throwsWith } from './helpers.mjs';

const dts = readFileSync(path.join(repoRoot, 'index.d.ts'), 'utf8');
const unionOf = (name) => {
  const body = new RegExp(`export type ${name} =([^;]*);`).exec(dts)[1];
  return [...body.matchAll(/'([^']+)'/g)].map((m) => m[1]).sort();
};

test('the constants are frozen objects whose keys equal their values', () => {
  for (const constants of [ErrorCode, Phase, NextAction]) {
    assert.ok(Object.isFrozen(constants));
    for (const [k, v] of Object.entries(constants)) assert.equal(k, v);
  }
  assert.equal(ErrorCode.CG_CAPABILITY_NOT_FOUND, 'CG_CAPABILITY_NOT_FOUND');
  assert.equal(Phase.query, 'query');
  assert.equal(NextAction.fix_input, 'fix_input');
});

test('index.d.ts unions list exactly the engine catalog', () => {
  assert.deepEqual(unionOf('ErrorCode'), Object.keys(ErrorCode).sort());
  assert.deepEqual(unionOf('Phase'), Object.keys(Phase).sort());
  assert.deepEqual(unionOf('NextAction'), Object.keys(NextAction).sort());
  assert.equal(Object.keys(ErrorCode).length, 43);
});

test('the documented error table lists every code with its catalog phase and action', () => {
  const readme = readFileSync(path.join(repoRoot, 'docs', 'errors.md'), 'utf8');
  const rows = new Map(
    [...readme.matchAll(/^\| `(CG_[A-Z_]+)` \| ([a-z ]+) \| ([a-z_—]+) \|/gm)].map((m) => [m[1], [m[2].trim(), m[3]]]),
  );
  assert.deepEqual([...rows.keys()].sort(), Object.keys(ErrorCode).sort());
  for (const code of Object.keys(ErrorCode)) {
    const e = new GraphError({ code });
    assert.deepEqual(rows.get(code), [e.phase, e.nextAction ?? '—'], code);
  }
});

test('GraphError fills catalog defaults and serialises in a fixed key order', () => {
  const e = new GraphError({ code: 'CG_CAPABILITY_NOT_FOUND' });
  assert.ok(e instanceof Error);
  assert.equal(e.name, 'GraphError');
  assert.equal(e.message, 'Requested capability does not exist');
  assert.equal(JSON.stringify(e), '{"code":"CG_CAPABILITY_NOT_FOUND","phase":"query","message":"Requested capability does not exist","nextAction":"refresh"}');
  const custom = new GraphError({ code: 'CG_MODEL_UNAVAILABLE', nextAction: 'check_config', details: { reason: 'x' } });
  assert.deepEqual(Object.keys(custom.toJSON()), ['code', 'phase', 'message', 'nextAction', 'details']);
  assert.equal(custom.phase, 'match');
  const closed = new GraphError({ code: 'CG_GRAPH_CLOSED' });
  assert.deepEqual(closed.toJSON(), { code: 'CG_GRAPH_CLOSED', phase: 'lifecycle', message: 'Capability graph is closed' });
});

test('GraphError rejects unknown codes, phases and actions', () => {
  throwsWith(() => new GraphError({ code: 'NOPE' }), 'CG_INPUT_INVALID', 'query', 'fix_input', { field: 'code' });
  throwsWith(() => new GraphError({ code: 'CG_INTERNAL', phase: 'x' }), 'CG_INPUT_INVALID', 'query', 'fix_input', { field: 'phase' });
  throwsWith(() => new GraphError({ code: 'CG_INTERNAL', nextAction: 'x' }), 'CG_INPUT_INVALID', 'query', 'fix_input', { field: 'nextAction' });
  throwsWith(() => new GraphError(), 'CG_INPUT_INVALID', 'query', 'fix_input');
});

test('GraphError accepts only the actions its code allows', () => {
  throwsWith(() => new GraphError({ code: 'CG_INTERNAL', nextAction: 'retry' }), 'CG_INPUT_INVALID', 'query', 'fix_input', { field: 'nextAction' });
  throwsWith(() => new GraphError({ code: 'CG_GRAPH_CLOSED', nextAction: 'retry' }), 'CG_INPUT_INVALID', 'query', 'fix_input', { field: 'nextAction' });
  throwsWith(() => new GraphError({ code: 'CG_MODEL_REFUSED', nextAction: 'retry' }), 'CG_INPUT_INVALID', 'query', 'fix_input', { field: 'nextAction' });
  const { catalog } = createRequire(import.meta.url)('../js/errors.cjs');
  for (const entry of catalog.codes) {
    for (const action of [entry.nextAction, ...entry.alsoLegal].filter((a) => a !== null)) {
      assert.equal(new GraphError({ code: entry.code, nextAction: action }).nextAction, action, entry.code);
    }
    assert.equal(new GraphError({ code: entry.code }).nextAction, entry.nextAction ?? undefined, entry.code);
  }
});

test('require and import hand out the same classes', () => {
  const require = createRequire(import.meta.url);
  const cjs = require('@devcodex/capability-graph');
  assert.equal(cjs.GraphError, GraphError);
  assert.equal(cjs.CapabilityGraph, api.CapabilityGraph);
  assert.equal(api.default.GraphError, GraphError);
});

test('qualified IDs parse and format, and bad ones throw CG_INPUT_INVALID', () => {
  assert.deepEqual(api.parseQualifiedId('seed.http::route'), { providerId: 'seed.http', capabilityId: 'route' });
  assert.equal(api.formatQualifiedId({ providerId: 'seed.http', capabilityId: 'route' }), 'seed.http::route');
  for (const bad of ['a::b::c', '::x', 'a::', 'route', 'A::b', 42, null, undefined, { providerId: 'a' }]) {
    throwsWith(() => api.parseQualifiedId(bad), 'CG_INPUT_INVALID', 'query', 'fix_input');
  }
  for (const bad of ['a::b', { providerId: 'A', capabilityId: 'b' }, { capabilityId: 'b' }, null]) {
    throwsWith(() => api.formatQualifiedId(bad), 'CG_INPUT_INVALID', 'query', 'fix_input');
  }
});

test('napi argument conversion errors become CG_INPUT_INVALID, anything else CG_INTERNAL', async () => {
  const require = createRequire(import.meta.url);
  const { call, native } = require('../js/engine/native.cjs');
  throwsWith(() => call(native.parseQualifiedId, 42), 'CG_INPUT_INVALID', 'query', 'fix_input');
  throwsWith(() => call(() => { throw new TypeError('boom'); }), 'CG_INTERNAL', 'query', 'contact_admin');
  const e = throwsWith(() => call(() => { throw 'not an error'; }), 'CG_INTERNAL', 'query', 'contact_admin');
  assert.equal(e.details, undefined);
});
