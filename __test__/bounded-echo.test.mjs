// Bounded echo (SPEC §14 D17): whatever a caller sends, an error or warning stays small (every
// string in `details` at most 128 characters, the whole JSON at most 4 KiB) and a page stays
// within its byte budget. The inputs are generated from the tools' own input schemas: every
// verb, a 1 MiB string in each string input, and a 1 MiB unknown key.
import test from 'node:test';
import assert from 'node:assert/strict';
import { CapabilityGraph, GraphError, createToolAdapter } from '@devcodex/capability-graph';
import { seedSource } from './helpers.mjs';
import { HUGE, SEED_CALLS, hostComponents } from './fixtures/bad-inputs/sdk.mjs';

const MAX_ERROR_JSON = 4096;
const MAX_DETAIL_STRING = 128;

/** Every string (and key) anywhere in `value`. */
function* strings(value) {
  if (typeof value === 'string') yield value;
  else if (Array.isArray(value)) for (const v of value) yield* strings(v);
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      yield k;
      yield* strings(v);
    }
  }
}

/** Asserts an error (or warning) JSON is bounded; `where` names the case. */
export function assertBoundedError(error, where) {
  const text = JSON.stringify(error);
  assert.ok(Buffer.byteLength(text) <= MAX_ERROR_JSON, `${where}: ${text.length} bytes of error JSON`);
  for (const s of strings(error.details ?? {})) {
    assert.ok(s.length <= MAX_DETAIL_STRING, `${where}: a ${s.length}-character string in details`);
  }
}

/** The byte budget of a page, as its meta names it. */
function pageBudget(budgets = {}) {
  if ('read.maxResponseBytes' in budgets) return budgets['read.maxResponseBytes'];
  const page = Object.entries(budgets).filter(([k]) => k.endsWith('.maxBytes') && k !== 'read.maxBytes');
  return page.length === 1 ? page[0][1] : undefined;
}

function assertBoundedResult(result, where) {
  for (const w of result.meta?.warnings ?? []) assertBoundedError(w, `${where} warning`);
  for (const slot of result.results ?? []) if (!slot.ok) assertBoundedError(slot.error, `${where} slot`);
  const budget = pageBudget(result.meta?.budgets);
  if (budget !== undefined) {
    const bytes = Buffer.byteLength(JSON.stringify(result));
    assert.ok(bytes <= budget, `${where}: a ${bytes}-byte page over its ${budget}-byte budget`);
  }
}

/** `schema` with a huge string wherever it takes a string; one variant per place. */
function hugeVariants(schema) {
  const types = [schema.type].flat();
  const out = [];
  if (types.includes('string') || schema.pattern) out.push(HUGE);
  if (schema.items) for (const v of hugeVariants(schema.items)) out.push([v]);
  if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
    out.push({ [HUGE]: hugeVariants(schema.additionalProperties)[0] ?? 1 });
    for (const v of hugeVariants(schema.additionalProperties)) out.push({ k: v });
  }
  if (schema.enum) out.push(HUGE);
  return out;
}

/** Page budgets so small that a page's meta and echoed filters alone can exceed them. */
const TINY = {
  catalog: { maxBytes: 300 },
  neighbors: { maxBytes: 300 },
  detail: { maxBytes: 300, maxItemBytes: 300 },
  specification: { maxBytes: 300, maxItemBytes: 300 },
  resolve: { maxBytes: 300 },
  read: { maxResponseBytes: 300 },
};

async function openGraph(budgets) {
  return CapabilityGraph.open({ providers: [seedSource()], ...hostComponents(), ...(budgets ? { budgets } : {}) });
}

for (const [bound, budgets] of [[false], [true], [false, TINY], [true, TINY]]) {
  test(`every tool (${bound ? 'bound' : 'unbound'}${budgets ? ', tiny page budgets' : ''}): a 1 MiB string in each string input stays a bounded answer`, async () => {
    const graph = await openGraph(budgets);
    try {
      const target = bound ? graph.forProvider('seed.http') : graph;
      const adapter = createToolAdapter(target, { documentBodies: true });
      let cases = 0;
      for (const tool of adapter.tools) {
        assert.ok(Object.hasOwn(SEED_CALLS, tool.name), `${tool.name} has a seed call`);
        const properties = tool.inputSchema.properties;
        const example = Object.fromEntries(Object.entries(SEED_CALLS[tool.name]).filter(([k]) => k in properties));
        // The base call succeeds, so each variant below reaches as far into the verb as it can.
        const base = await adapter.call(tool.name, example);
        if (!budgets) assert.ok(base.ok, `${tool.name}: ${JSON.stringify(base.error)}`);
        const variants = [{ ...example, [HUGE]: 1 }];
        for (const [name, schema] of Object.entries(tool.inputSchema.properties)) {
          for (const value of hugeVariants(schema)) variants.push({ ...example, [name]: value });
        }
        for (const [i, args] of variants.entries()) {
          const where = `${tool.name} #${i}`;
          const outcome = await adapter.call(tool.name, args);
          cases++;
          if (outcome.ok) assertBoundedResult(outcome.result, where);
          else assertBoundedError(outcome.error, where);
        }
      }
      assert.ok(cases > 50, `${cases} cases`);
    } finally {
      await graph.close();
    }
  });
}

test('reload, forProvider and open: a 1 MiB string or key stays a bounded error', async () => {
  const graph = await openGraph();
  try {
    for (const options of [{ providerId: HUGE }, { [HUGE]: 1 }, { definitions: { [HUGE]: {} } }]) {
      try {
        const r = await graph.reload(options);
        for (const p of r.providers ?? []) if (p.error) assertBoundedError(p.error, 'reload entry');
      } catch (error) {
        assert.ok(error instanceof GraphError);
        assertBoundedError(error.toJSON(), 'reload');
      }
    }
    for (const id of [HUGE, 'a'.repeat(200)]) {
      assert.throws(() => graph.forProvider(id), (error) => (assertBoundedError(error.toJSON(), 'forProvider'), true));
    }
  } finally {
    await graph.close();
  }
  for (const config of [{ [HUGE]: 1 }, { providers: [{ providerId: HUGE }] }, { providers: [seedSource()], budgets: { [HUGE]: {} } }]) {
    await assert.rejects(CapabilityGraph.open(config), (error) => (assertBoundedError(error.toJSON(), 'open'), true));
  }
});

test('a capabilityIdPrefix longer than a capability ID is CG_INPUT_TOO_LARGE', async () => {
  const graph = await openGraph();
  try {
    const prefix = 'a'.repeat(129);
    await assert.rejects(graph.listCatalog({ capabilityIdPrefix: prefix }), (error) => {
      assert.deepEqual(error.toJSON().details, { field: 'capabilityIdPrefix', limit: 128 });
      assert.equal(error.code, 'CG_INPUT_TOO_LARGE');
      return true;
    });
    const page = await graph.listCatalog({ capabilityIdPrefix: 'r'.repeat(128) });
    assert.deepEqual(page.items, []);
  } finally {
    await graph.close();
  }
  // A page whose meta alone (the echoed prefix) is over its budget is refused, never served.
  const tiny = await openGraph(TINY);
  try {
    await assert.rejects(tiny.listCatalog({ capabilityIdPrefix: 'r'.repeat(128) }), (error) => {
      assert.deepEqual(error.toJSON().details, { budget: 'catalog.maxBytes', limit: 300 });
      return error.code === 'CG_BUDGET_EXCEEDED';
    });
  } finally {
    await tiny.close();
  }
});

test('a string in details is cut to 128 characters with a trailing …, JS-made errors too', () => {
  const e = new GraphError({ code: 'CG_INPUT_INVALID', details: { field: 'x'.repeat(500), nested: { list: ['y'.repeat(129), 'short'] } } });
  assert.equal(e.details.field, `${'x'.repeat(127)}…`);
  assert.equal(e.details.nested.list[0], `${'y'.repeat(127)}…`);
  assert.equal(e.details.nested.list[1], 'short');
  const exact = new GraphError({ code: 'CG_INPUT_INVALID', details: { field: 'z'.repeat(128) } });
  assert.equal(exact.details.field, 'z'.repeat(128));
  // Counted as JavaScript counts them, never splitting a surrogate pair.
  const astral = new GraphError({ code: 'CG_INPUT_INVALID', details: { field: '😀'.repeat(100) } });
  assert.ok(astral.details.field.length <= 128);
  assert.ok(astral.details.field.isWellFormed());
  assert.ok(astral.details.field.endsWith('…'));
});
