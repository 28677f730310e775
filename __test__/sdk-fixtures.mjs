// Shared by the agent SDK tests: the seed graph, a tool call that succeeds and one that fails,
// and loading an SDK that may not load on the running Node.
import assert from 'node:assert/strict';
import { CapabilityGraph, createToolAdapter, lexicalExecutor } from '@devcodex/capability-graph';
import { seedSource } from './helpers.mjs';

export const openSeed = (executor = lexicalExecutor()) => CapabilityGraph.open({ providers: [seedSource()], executor });

/** The seed graph's tool adapter in `dialect`, closed with the graph by `close()`. */
export async function seedAdapter(dialect, options = {}) {
  const graph = await openSeed();
  return { graph, adapter: createToolAdapter(graph, { dialect, ...options }) };
}

/** `args` as a model writes them in `adapter`'s dialect: in the strict one every property is
 *  there, the optional ones it does not need as null. */
export function modelArgs(adapter, name, args) {
  if (adapter.dialect !== 'strict') return args;
  const { properties } = adapter.tools.find((t) => t.name === name).inputSchema;
  return Object.fromEntries(Object.keys(properties).map((k) => [k, args[k] ?? null]));
}

/** A call that succeeds and one that fails with a graph error the model can act on. */
export const SUCCEEDS = { name: 'get_capabilities', args: { ids: ['seed.http::route'] } };
export const FAILS = { name: 'get_neighbors', args: { id: 'seed.http::missing' } };

export function assertSucceeded(outcome) {
  assert.equal(outcome.ok, true, JSON.stringify(outcome));
  assert.equal(outcome.result.results[0].value.qualifiedId, 'seed.http::route');
}

export function assertFailed(outcome) {
  assert.equal(outcome.ok, false, JSON.stringify(outcome));
  assert.deepEqual(outcome.error, { code: 'CG_CAPABILITY_NOT_FOUND', phase: 'query', message: 'Requested capability does not exist', nextAction: 'refresh' });
}

/** `{ sdk }`, or `{ skip }` saying why `specifier` does not load on this Node. */
export async function loadSdk(specifier) {
  try {
    return { sdk: await import(specifier), skip: false };
  } catch (error) {
    return { skip: `${specifier} does not load on Node ${process.version} (${String(error?.message).split('\n')[0]}); its types are still checked by tsc` };
  }
}

/** A fetch that answers each request with the next JSON body and records what was sent. */
export function fakeFetch(bodies) {
  const sent = [];
  const fetch = async (url, init) => {
    sent.push({ url: String(url), body: JSON.parse(init.body) });
    const body = bodies[Math.min(sent.length, bodies.length) - 1];
    return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
  };
  return { fetch, sent };
}

/** Host values that throw when read, their error naming a path no answer may repeat: a throwing
 *  getter on `key` of `object`, and a Proxy whose every trap throws. */
export const boom = () => {
  throw new Error('/secret/path boom');
};
export const getter = (object, key) => Object.defineProperty(object, key, { get: boom, enumerable: true });
export const trap = () => new Proxy({}, { get: boom, getOwnPropertyDescriptor: boom, ownKeys: boom, getPrototypeOf: boom });
