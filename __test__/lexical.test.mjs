// The built-in lexical executor: what counts as evidence (IDs and names in a sentence, shared
// words), acceptance at every catalog size and for long requests, minScore, reasons and ties.
import assert from 'node:assert/strict';
import test from 'node:test';
import { CapabilityGraph, lexicalExecutor } from '@devcodex/capability-graph';
import { cap, inline, seedSource } from './helpers.mjs';

const open = (providers, options) =>
  CapabilityGraph.open({ providers, executor: lexicalExecutor(options) });

const shapes = inline('geo', [
  cap('shapes.rectangle-properties', {
    name: 'Rectangle properties',
    description: 'Computes the area, perimeter and diagonal of a rectangle from its side lengths.',
    whenToUse: 'A question about the measurements of a rectangle.',
  }),
  cap('shapes.circle-properties', {
    name: 'Circle properties',
    description: 'Computes the area and circumference of a circle from its radius.',
    whenToUse: 'A question about the measurements of a circle.',
  }),
]);

const billing = inline('acme', [
  cap('billing', { name: 'Billing', description: 'Charging customers.', whenToUse: 'Anything about money owed.' }),
  cap('billing.invoices', {
    name: 'Invoices',
    description: 'Issues invoices with line items and tax.',
    whenToUse: 'Send a customer a bill for what they bought.',
    parents: ['billing'],
  }),
  cap('billing.refunds', {
    name: 'Refunds',
    description: 'Returns a payment to a customer.',
    whenToUse: 'Give money back after a cancellation.',
    parents: ['billing'],
    knowledge: [{
      kind: 'document', knowledgeId: 'GUIDE-REFUNDS', role: 'guide', title: 'Chargeback handbook',
      locator: { type: 'http', url: 'https://docs.example.com/refunds' },
    }],
  }),
  cap('routing', { name: 'Routing', description: 'Maps URLs to handlers.', whenToUse: 'Add or change an endpoint.' }),
  cap('response-caching', {
    name: 'Response caching',
    description: 'Stores rendered responses and serves them again until they expire.',
    whenToUse: 'An expensive endpoint is requested often while its output rarely changes.',
  }),
]);

test('in a catalog of two, a request that clearly names one of them matches it', async () => {
  const g = await open([shapes]);
  const r = await g.match({ intent: 'find the area and perimeter of a rectangle whose sides are 3 and 4' });
  assert.equal(r.status, 'matched');
  assert.equal(r.matches[0].qualifiedId, 'geo::shapes.rectangle-properties');
  const circle = await g.match({ intent: 'what is the circumference of a circle with radius 2' });
  assert.equal(circle.matches[0].qualifiedId, 'geo::shapes.circle-properties');
  const none = await g.match({ intent: 'book a table at an Italian restaurant' });
  assert.equal(none.status, 'no_match');
  await g.close();
});

test('a dotted ID inside a sentence selects that capability, with or without its provider', async () => {
  const g = await open([billing]);
  for (const intent of [
    'wrap these calls in billing.invoices',
    'is acme::billing.invoices the right one?',
    'use acme.billing.invoices here',
  ]) {
    const r = await g.match({ intent });
    assert.equal(r.matches[0].qualifiedId, 'acme::billing.invoices', intent);
    assert.equal(r.matches[0].confidence, 1, intent);
    assert.equal(r.matches[0].reason, 'the request names its ID "billing.invoices"', intent);
  }
  // Another provider's ID is not this one's.
  const other = await g.match({ intent: 'wrap these calls in other::billing.invoices' });
  assert.notEqual(other.matches[0]?.confidence, 1);
  // A strict minScore still accepts a named ID, and only that.
  const strict = await open([billing], { minScore: 1 });
  const s = await strict.match({ intent: 'refunds and billing.invoices' });
  assert.deepEqual(s.matches.map((m) => m.qualifiedId), ['acme::billing.invoices']);
  await strict.close();
  await g.close();
});

test('a single common word is not enough; a multi-word name is', async () => {
  const g = await open([billing]);
  const one = await g.match({ intent: 'routing my letters through the post office' });
  assert.equal(one.status, 'no_match');
  const name = await g.match({ intent: 'we want response caching on the status page' });
  assert.equal(name.matches[0].qualifiedId, 'acme::response-caching');
  assert.match(name.matches[0].reason, /^the request uses its name; /);
  await g.close();
});

test('a long, descriptive request is accepted when one capability clearly fits', async () => {
  const g = await open([billing]);
  const r = await g.match({
    intent: 'our monthly sales summary endpoint is requested every few seconds by dashboards, but its expensive output rarely changes during the day',
  });
  assert.equal(r.status, 'matched');
  assert.equal(r.matches[0].qualifiedId, 'acme::response-caching');
  await g.close();
});

test('knowledge titles and parents\u2019 names are low-weight evidence from the definitions', async () => {
  const g = await open([billing]);
  const title = await g.match({ intent: 'chargeback handbook' });
  assert.equal(title.matches[0].qualifiedId, 'acme::billing.refunds');
  assert.match(title.matches[0].reason, /in knowledge titles/);
  await g.close();
});

test('every lexical selection carries a short, deterministic English reason', async () => {
  const g = await open([billing]);
  const r = await g.match({ intent: 'give the customer their money back after a cancellation' });
  assert.equal(r.matches[0].qualifiedId, 'acme::billing.refunds');
  assert.equal(
    r.matches[0].reason,
    // The five heaviest words are listed; the fields are where any of them matched.
    'matched 6 of 6 request words ("after", "back", "cancellation", "give", "money") in whenToUse, description',
  );
  for (const m of r.matches) {
    assert.equal(typeof m.reason, 'string');
    assert.ok(Buffer.byteLength(m.reason) <= 256);
  }
  const long = await g.match({ intent: `${'invoices '.repeat(50)}${'x'.repeat(300)} billing` });
  for (const m of long.matches) assert.ok(Buffer.byteLength(m.reason) <= 256, m.reason);
  const again = await g.match({ intent: 'give the customer their money back after a cancellation' });
  assert.deepEqual(again.matches, r.matches);
  await g.close();
});

test('equal scores are ordered by capability ID', async () => {
  const twin = (id) => cap(id, { name: 'Ledger export', description: 'Exports the ledger.', whenToUse: 'Export the ledger.' });
  const g = await open([inline('acme', [twin('z.export'), twin('a.export'), twin('m.export')])]);
  const r = await g.match({ intent: 'export the ledger' });
  assert.deepEqual(r.matches.map((m) => m.id.capabilityId), ['a.export', 'm.export', 'z.export']);
  assert.equal(new Set(r.matches.map((m) => m.confidence)).size, 1);
  await g.close();
});

test('the documented example (docs/match-and-executors.md): the best match first, what it requires added by resolution', async () => {
  const g = await CapabilityGraph.open({ providers: [seedSource()], executor: lexicalExecutor() });
  const r = await g.match({ intent: 'validate the request body before the handler runs', limit: 3 });
  assert.equal(r.matches[0].qualifiedId, 'seed.http::route.validation');
  assert.deepEqual(r.resolution.added, ['seed.http::schema.request']);
  await g.close();
});
