// match's two modes and `nearest` (SPEC D24): rank mode answers the best few every time, a
// no_match names the candidates closest to fitting, the executor request carries the mode, a
// host executor's `nearest` is checked like its selections, and every surface takes `mode` and
// shows what the SDK answers; activeToolsFromMatch's pinned tools.
import test from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { CapabilityGraph, createMcpServer, createToolAdapter, lexicalExecutor, semanticExecutor } from '@devcodex/capability-graph';
import { activeToolsFromMatch } from '@devcodex/capability-graph/ai-sdk';
import { cap, inline, rejectsWith, seedSource, throwsWith } from './helpers.mjs';
import wordsEmbedder from './fixtures/words-embedder.mjs';
import { openSeed } from './sdk-fixtures.mjs';

/** An answer without its meta (which names revisions, not what was found). */
const found = ({ meta, ...rest }) => rest;
/** One word in common with two capabilities: too little to accept, enough to rank. */
const WEAK = 'schema of the universe';

test('rank mode answers the best limit candidates where accept mode answers no_match with the nearest', async () => {
  const graph = await openSeed();
  try {
    const accepted = await graph.match({ intent: WEAK });
    assert.equal(accepted.status, 'no_match');
    assert.deepEqual(accepted.matches, []);
    assert.ok(accepted.nearest.length >= 1 && accepted.nearest.length <= 3);
    for (const n of accepted.nearest) {
      assert.deepEqual(Object.keys(n), ['id', 'qualifiedId', 'reason', 'confidence']);
      assert.equal(n.qualifiedId, `${n.id.providerId}::${n.id.capabilityId}`);
      assert.ok(n.confidence < 0.3, 'refused: below minScore');
      assert.match(n.reason, /"schema"/);
    }
    const confidences = accepted.nearest.map((n) => n.confidence);
    assert.deepEqual(confidences, [...confidences].sort((a, b) => b - a), 'closest to fitting first');

    const ranked = await graph.match({ intent: WEAK, mode: 'rank', limit: 1 });
    assert.equal(ranked.status, 'matched');
    assert.equal(ranked.matches.length, 1, 'the best `limit`');
    assert.equal(ranked.matches[0].qualifiedId, accepted.nearest[0].qualifiedId);
    assert.ok(ranked.matches[0].reason && ranked.matches[0].confidence > 0);
    assert.deepEqual(ranked.resolution.requested, [ranked.matches[0].qualifiedId]);
    assert.equal('nearest' in ranked, false, 'only a no_match names the nearest');

    // A request that fits answers alike in both modes, accept listing only what fits.
    const intent = 'validate the request body before the handler runs';
    const fits = await graph.match({ intent, limit: 5 });
    const best = await graph.match({ intent, limit: 5, mode: 'rank' });
    assert.equal(fits.status, 'matched');
    assert.equal('nearest' in fits, false);
    assert.deepEqual(best.matches.slice(0, fits.matches.length), fits.matches);
    assert.ok(best.matches.length > fits.matches.length);
    assert.deepEqual(found(await graph.match({ intent, limit: 5, mode: 'accept' })), found(fits), "'accept' is the default");

    // No word of the request is in the catalog: no evidence, no_match in both modes.
    for (const mode of ['accept', 'rank']) {
      const none = await graph.match({ intent: 'zzzz qqqq', mode });
      assert.deepEqual([none.status, none.nearest], ['no_match', []], mode);
    }
  } finally {
    await graph.close();
  }
});

test('the semantic executor ranks too, and names the nearest under its threshold', async () => {
  const strict = await CapabilityGraph.open({ providers: [seedSource()], executor: semanticExecutor({ embedder: wordsEmbedder, minScore: 1 }) });
  try {
    const refused = await strict.match({ intent: 'request body validation' });
    assert.equal(refused.status, 'no_match');
    assert.equal(refused.nearest.length, 3);
    assert.ok(refused.nearest.every((n) => n.confidence < 1 && n.reason.startsWith('close in meaning to')));
    const ranked = await strict.match({ intent: 'request body validation', mode: 'rank', limit: 4 });
    assert.equal(ranked.status, 'matched');
    assert.equal(ranked.matches.length, 4);
    assert.deepEqual(ranked.matches.slice(0, 3).map((m) => m.qualifiedId), refused.nearest.map((n) => n.qualifiedId));
  } finally {
    await strict.close();
  }
});

test('mode must be accept or rank', async () => {
  const graph = await openSeed();
  try {
    for (const mode of ['Rank', 'ranked', '', 1, true, ['rank'], { rank: true }, null]) {
      await rejectsWith(graph.match({ intent: 'x', mode }), 'CG_INPUT_INVALID', 'match', 'fix_input', { field: 'mode' });
    }
    await rejectsWith(graph.forProvider('seed.http').match({ intent: 'x', mode: 'best' }), 'CG_INPUT_INVALID', 'match', 'fix_input', { field: 'mode' });
  } finally {
    await graph.close();
  }
});

const providers = () => [inline('acme', [cap('a'), cap('b'), cap('c'), cap('d')]), inline('beta', [cap('x')])];
const withAnswer = (output, seen = []) =>
  CapabilityGraph.open({
    providers: providers(),
    executor: {
      id: 'host',
      match: (request) => {
        seen.push(request.mode);
        return output;
      },
    },
  });

test('a host executor is told the mode and may name the nearest with no_match', async () => {
  const seen = [];
  let g = await withAnswer({ status: 'no_match', selections: [], nearest: [{ id: 'acme::b', confidence: 0.2, reason: 'almost' }, { id: 'acme::a' }] }, seen);
  try {
    const r = await g.match({ intent: 'x' });
    assert.deepEqual(r.nearest, [
      { id: { providerId: 'acme', capabilityId: 'b' }, qualifiedId: 'acme::b', reason: 'almost', confidence: 0.2 },
      { id: { providerId: 'acme', capabilityId: 'a' }, qualifiedId: 'acme::a' },
    ]);
    await g.match({ intent: 'x', mode: 'rank' });
    assert.deepEqual(seen, ['accept', 'rank']);
  } finally {
    await g.close();
  }
  // A host that names none: an empty list; other statuses have none.
  g = await withAnswer({ status: 'no_match', selections: [] });
  assert.deepEqual((await g.match({ intent: 'x', mode: 'rank' })).nearest, []);
  await g.close();
  g = await withAnswer({ status: 'unknown', selections: [] });
  assert.equal('nearest' in (await g.match({ intent: 'x' })), false);
  await g.close();
});

test("a host executor's nearest is checked like its selections", async () => {
  const near = (...ids) => ({ status: 'no_match', selections: [], nearest: ids.map((id) => ({ id })) });
  const cases = [
    ['out of scope', near('beta::x'), 'CG_MODEL_INVALID_SELECTION', 'refresh'],
    ['fabricated', near('acme::ghost'), 'CG_MODEL_INVALID_SELECTION', 'refresh'],
    ['duplicated', near('acme::a', 'acme::a'), 'CG_MODEL_OUTPUT_INVALID', 'retry'],
    ['more than three', near('acme::a', 'acme::b', 'acme::c', 'acme::d'), 'CG_MODEL_OUTPUT_TOO_LARGE', 'narrow_scope'],
    ['malformed ID', near('acme:a'), 'CG_MODEL_OUTPUT_INVALID', 'retry'],
    ['not a list', { status: 'no_match', selections: [], nearest: 'acme::a' }, 'CG_MODEL_OUTPUT_INVALID', 'retry'],
    ['a bad confidence', { status: 'no_match', selections: [], nearest: [{ id: 'acme::a', confidence: 2 }] }, 'CG_MODEL_OUTPUT_INVALID', 'retry'],
    ['with matched', { status: 'matched', selections: [{ id: 'acme::a' }], nearest: [{ id: 'acme::b' }] }, 'CG_MODEL_OUTPUT_INVALID', 'retry'],
    ['with unknown', { status: 'unknown', selections: [], nearest: [] }, 'CG_MODEL_OUTPUT_INVALID', 'retry'],
  ];
  for (const [name, output, code, nextAction] of cases) {
    const g = await withAnswer(output);
    try {
      const e = await rejectsWith(g.match({ intent: 'x', requestProviderScope: ['acme'] }), code, 'match', nextAction);
      assert.equal(e.code, code, name);
    } finally {
      await g.close();
    }
  }
});

test('the Tool Adapter takes mode in both dialects and returns what the SDK returns', async () => {
  const graph = await openSeed();
  try {
    const sdk = await graph.match({ intent: WEAK, mode: 'rank', limit: 2 });
    const sdkRefused = await graph.match({ intent: WEAK });
    for (const dialect of ['json-schema', 'strict']) {
      const adapter = createToolAdapter(graph, { dialect, tools: ['match'] });
      const schema = adapter.tools[0].inputSchema.properties.mode;
      assert.deepEqual(schema.enum, dialect === 'strict' ? ['accept', 'rank', null] : ['accept', 'rank']);
      // Strict function calling sends every property, null for the ones left out.
      const properties = Object.keys(adapter.tools[0].inputSchema.properties);
      const omitted = dialect === 'strict' ? Object.fromEntries(properties.map((k) => [k, null])) : {};
      const ranked = await adapter.call('match', { ...omitted, intent: WEAK, mode: 'rank', limit: 2 });
      assert.deepEqual(ranked, { ok: true, result: sdk }, dialect);
      const refused = await adapter.call('match', { ...omitted, intent: WEAK });
      assert.deepEqual(refused.result.nearest, sdkRefused.nearest, `${dialect}: the nearest are shown`);
      for (const mode of ['best', 7]) {
        const bad = await adapter.call('match', { ...omitted, intent: WEAK, mode });
        assert.equal(bad.ok, false);
        assert.deepEqual([bad.error.code, bad.error.phase, bad.error.nextAction, bad.error.details.field], ['CG_INPUT_INVALID', 'match', 'fix_input', 'mode']);
      }
    }
  } finally {
    await graph.close();
  }
});

test("MCP's match tool takes mode; its result is the SDK's answer, a bad mode an isError", async () => {
  const graph = await openSeed();
  const server = createMcpServer(graph);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'rank', version: '1.0.0' });
  await client.connect(clientSide);
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.find((t) => t.name === 'match').inputSchema.properties.mode.enum, ['accept', 'rank']);
    const ranked = await client.callTool({ name: 'match', arguments: { intent: WEAK, mode: 'rank', limit: 2 } });
    assert.deepEqual(ranked.structuredContent, await graph.match({ intent: WEAK, mode: 'rank', limit: 2 }));
    const refused = await client.callTool({ name: 'match', arguments: { intent: WEAK } });
    assert.deepEqual(refused.structuredContent.nearest, (await graph.match({ intent: WEAK })).nearest);
    const bad = await client.callTool({ name: 'match', arguments: { intent: WEAK, mode: 'rnak' } });
    assert.equal(bad.isError, true);
    const error = JSON.parse(bad.content[0].text);
    assert.deepEqual([error.code, error.phase, error.nextAction, error.details.field], ['CG_INPUT_INVALID', 'match', 'fix_input', 'mode']);
  } finally {
    await client.close();
    await server.close();
    await graph.close();
  }
});

test('activeToolsFromMatch: the answer\'s tools, then the pinned ones, each once', async () => {
  const toolNames = new Map([
    ['get_weather', 'get_weather'],
    ['get_time', 'get_time'],
    ['send_mail', 'send_mail'],
  ]);
  const answer = (...ids) => ({ status: ids.length ? 'matched' : 'no_match', matches: ids.map((id) => ({ id: { providerId: 'host.tools', capabilityId: id }, qualifiedId: `host.tools::${id}` })) });
  assert.deepEqual(activeToolsFromMatch(answer('get_weather', 'get_time'), toolNames, undefined, { always: ['send_mail', 'get_time'] }), ['get_weather', 'get_time', 'send_mail']);
  assert.deepEqual(activeToolsFromMatch(answer(), toolNames, undefined, { always: ['send_mail'] }), ['send_mail'], 'alone for an answer without matches');
  assert.deepEqual(activeToolsFromMatch(answer('get_weather'), toolNames, undefined, {}), ['get_weather']);
  const tools = { get_weather: {}, send_mail: {} };
  assert.deepEqual(activeToolsFromMatch(answer('get_time'), toolNames, tools, { always: ['send_mail'] }), ['send_mail']);
  // A table by qualified ID, and a function (whose names cannot be listed: checked against `tools`).
  assert.deepEqual(activeToolsFromMatch(answer(), { 'host.tools::x': 'send_mail' }, undefined, { always: ['send_mail'] }), ['send_mail']);
  assert.deepEqual(activeToolsFromMatch(answer(), () => undefined, tools, { always: ['get_weather'] }), ['get_weather']);

  const bad = (options, tools_, details) => throwsWith(() => activeToolsFromMatch(answer('get_weather'), toolNames, tools_, options), 'CG_INPUT_INVALID', 'query', 'fix_input', details);
  bad({ always: 'send_mail' }, undefined, { field: 'always' });
  bad({ always: [1] }, undefined, { field: 'always' });
  bad({ always: ['send_mail', 'send_mail'] }, undefined, { field: 'always', reason: 'duplicate' });
  bad({ always: ['get_date'] }, undefined, { field: 'always', reason: 'unknown_tool' });
  bad({ always: ['get_time'] }, tools, { field: 'always', reason: 'unknown_tool' });
  bad('always', undefined, { field: 'options' });
  bad({ pinned: [] }, undefined, { field: 'pinned' });
});

test('tool search in rank mode: a plain-words request still gets tools, never an empty set', async () => {
  const tools = [
    { name: 'calendarCreateEvent', description: 'Create a calendar event with attendees, time and location.', inputSchema: { type: 'object' } },
    { name: 'slack_post_message', description: 'Post a message to a Slack channel.', inputSchema: { type: 'object' } },
    { name: 'payments_refund_charge', description: 'Refund a charge in full or in part.', inputSchema: { type: 'object' } },
  ];
  const { providerFromTools } = await import('@devcodex/capability-graph');
  const { definition, toolNames } = providerFromTools({ providerId: 'host.tools', name: 'Host tools', tools });
  const graph = await CapabilityGraph.open({ providers: [{ definition }], executor: lexicalExecutor() });
  try {
    const intent = 'put a meeting with Ana in my calendar';
    assert.equal((await graph.match({ intent })).status, 'no_match');
    const answer = await graph.match({ intent, mode: 'rank', limit: 2 });
    assert.deepEqual(activeToolsFromMatch(answer, toolNames, undefined, { always: ['slack_post_message'] }), ['calendarCreateEvent', 'slack_post_message']);
  } finally {
    await graph.close();
  }
});
