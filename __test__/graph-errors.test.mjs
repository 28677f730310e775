// Every failure is a GraphError (SPEC §14 D17): the public surface is taken from the classes'
// prototypes and the package's exports — never a hand-kept list — and every method is called
// on things that are not graphs and with hostile values in each argument position.
import test from 'node:test';
import { PassThrough } from 'node:stream';
import assert from 'node:assert/strict';
import * as api from '@devcodex/capability-graph';
import { CapabilityGraph, GraphError } from '@devcodex/capability-graph';
import { seedSource } from './helpers.mjs';
import { HOSTILE, hostComponents } from './fixtures/bad-inputs/sdk.mjs';

const CLASSES = Object.entries(api).filter(([, v]) => typeof v === 'function' && /^class\b/.test(Function.prototype.toString.call(v)));
const FUNCTIONS = Object.entries(api).filter(([, v]) => typeof v === 'function' && !CLASSES.some(([, c]) => c === v));
const methodsOf = (object) =>
  Object.getOwnPropertyNames(object).filter((name) => name !== 'constructor' && typeof Object.getOwnPropertyDescriptor(object, name).value === 'function');

/** Runs `fn`, sync or async; returns { error } or { value }. */
async function settle(fn) {
  try {
    return { value: await fn() };
  } catch (error) {
    return { error };
  }
}

function assertInputError(error, where) {
  assert.ok(error instanceof GraphError, `${where}: expected a GraphError, got ${error?.stack ?? error}`);
  assert.notEqual(error.code, 'CG_INTERNAL', `${where}: ${JSON.stringify(error)}`);
  // A config file that cannot be read is the file's failure, named by no field (the command
  // line's envelope, exactly).
  const unreadableFile = error.code === 'CG_CONFIG_INVALID' && error.message === 'Cannot read a valid bounded JSON configuration file';
  if (['CG_INPUT_INVALID', 'CG_CONFIG_INVALID'].includes(error.code) && !unreadableFile) {
    const named = error.details?.field ?? error.details?.path;
    assert.equal(typeof named, 'string', `${where}: details name the argument: ${JSON.stringify(error)}`);
  }
  assert.ok(!JSON.stringify(error).includes('/srv/secret'), `${where}: nothing thrown leaks`);
}

test('the surface under test is the real one', () => {
  assert.deepEqual(CLASSES.map(([n]) => n).sort(), ['BoundProviderGraph', 'CapabilityGraph', 'GraphError', 'StdioServerTransport']);
  assert.ok(methodsOf(CapabilityGraph.prototype).length >= 20, methodsOf(CapabilityGraph.prototype).join());
  assert.ok(FUNCTIONS.length >= 6, FUNCTIONS.map(([n]) => n).join());
});

test('every method called on something that is not its graph rejects CG_INPUT_INVALID (field this); close() resolves', async () => {
  const graph = await CapabilityGraph.open({ providers: [seedSource()] });
  const bound = graph.forProvider('seed.http');
  const instances = {
    CapabilityGraph: graph,
    BoundProviderGraph: bound,
    GraphError: new GraphError({ code: 'CG_INTERNAL' }),
    StdioServerTransport: new api.StdioServerTransport({ stdin: new PassThrough(), stdout: new PassThrough() }),
  };
  try {
    for (const [className, Class] of CLASSES) {
      const own = instances[className];
      const other = own === graph ? bound : graph;
      const strangers = [undefined, null, {}, 42, Object.create(Class.prototype), HOSTILE['a throwing Proxy'](), new Proxy(own, {}), other];
      for (const name of methodsOf(Class.prototype)) {
        for (const [i, stranger] of strangers.entries()) {
          const where = `${className}.prototype.${name} on stranger #${i}`;
          const outcome = await settle(() => Class.prototype[name].call(stranger, {}));
          if (name === 'close') {
            assert.deepEqual(outcome, { value: undefined }, where);
            continue;
          }
          assert.ok(outcome.error instanceof GraphError, `${where}: ${outcome.error?.stack ?? 'resolved'}`);
          assert.equal(outcome.error.code, 'CG_INPUT_INVALID', where);
          assert.equal(outcome.error.details.field, 'this', where);
        }
        // A method taken off its object has no receiver either.
        const detached = own[name];
        const outcome = await settle(() => detached({}));
        if (name !== 'close') assert.equal(outcome.error?.details?.field, 'this', `${className} detached ${name}`);
      }
    }
  } finally {
    await graph.close();
  }
});

test('every method and export given hostile values in each argument position fails with a GraphError', async () => {
  const graph = await CapabilityGraph.open({ providers: [seedSource()], ...hostComponents() });
  const bound = graph.forProvider('seed.http');
  const calls = [];
  // close() would end the graph the other calls need; it is covered above.
  for (const name of methodsOf(CapabilityGraph.prototype).filter((n) => n !== 'close')) calls.push([`graph.${name}`, (...a) => graph[name](...a)]);
  for (const name of methodsOf(api.BoundProviderGraph.prototype)) calls.push([`bound.${name}`, (...a) => bound[name](...a)]);
  for (const [className, Class] of CLASSES) {
    for (const name of methodsOf(Class)) calls.push([`${className}.${name}`, (...a) => Class[name](...a)]);
  }
  calls.push(['new GraphError', (...a) => new GraphError(...a)]);
  for (const [name, fn] of FUNCTIONS) calls.push([name, fn]);
  // The adapter a graph hands out is part of the surface too.
  const adapter = api.createToolAdapter(graph, { documentBodies: true });
  for (const tool of adapter.tools) calls.push([`tool ${tool.name}`, (args, options) => adapter.call(tool.name, args, options)]);
  try {
    let checked = 0;
    for (const [name, fn] of calls) {
      for (const [hostile, make] of Object.entries(HOSTILE)) {
        for (const position of [0, 1]) {
          const args = [position === 0 ? make() : 'seed.http::route', position === 1 ? make() : undefined];
          const where = `${name} with ${hostile} at argument ${position}`;
          const outcome = await settle(() => fn(...args));
          checked++;
          if (name.startsWith('tool ')) {
            // A tool never rejects: a failure is { ok: false, error } and never CG_INTERNAL.
            assert.ok(outcome.value && typeof outcome.value.ok === 'boolean', where);
            if (!outcome.value.ok) assertInputError(new GraphError(outcome.value.error), where);
          } else if (outcome.error !== undefined || name === 'new GraphError') {
            assertInputError(outcome.error, where);
          }
        }
      }
    }
    assert.ok(checked > 200, `${checked} calls`);
  } finally {
    await graph.close();
  }
});

test('new GraphError copies its details deeply and freezes them; engine errors are frozen too', async () => {
  const details = { field: 'x', nested: { list: ['a'] } };
  const error = new GraphError({ code: 'CG_INPUT_INVALID', details });
  details.field = 'changed';
  details.nested.list.push('b');
  assert.deepEqual(error.details, { field: 'x', nested: { list: ['a'] } });
  assert.ok(Object.isFrozen(error.details) && Object.isFrozen(error.details.nested) && Object.isFrozen(error.details.nested.list));
  assert.throws(() => {
    'use strict';
    error.details.field = 'y';
  }, TypeError);
  assert.throws(() => {
    error.details = {};
  }, TypeError);
  assert.throws(() => {
    error.code = 'CG_INTERNAL';
  }, TypeError);
  assert.equal(error.code, 'CG_INPUT_INVALID');
  // Another GraphError is copied as its JSON.
  const copy = new GraphError(error);
  assert.deepEqual(copy.toJSON(), error.toJSON());
  assert.notEqual(copy.details, error.details);

  const graph = await CapabilityGraph.open({ providers: [seedSource()] });
  try {
    const engine = await graph.listCatalog({ nope: 1 }).catch((e) => e);
    assert.ok(engine instanceof GraphError);
    assert.ok(Object.isFrozen(engine.details));
    assert.throws(() => {
      engine.details.field = 'other';
    }, TypeError);
    assert.throws(() => {
      engine.phase = 'load';
    }, TypeError);
    assert.equal(engine.details.field, 'nope');
  } finally {
    await graph.close();
  }
});
