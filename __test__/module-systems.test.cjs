const test = require('node:test');
const assert = require('node:assert/strict');
const { CapabilityGraph, GraphError } = require('@devcodex/capability-graph');

test('CommonJS: open, resolve and a GraphError rejection', async () => {
  const graph = await CapabilityGraph.open({
    providers: [{ definition: { providerId: 'acme', name: 'Acme', version: '1', capabilities: [] } }],
  });
  await assert.rejects(graph.resolve({ ids: ['acme::missing'] }), (e) => e instanceof GraphError && e.code === 'CG_CAPABILITY_NOT_FOUND');
  await graph.close();
});
