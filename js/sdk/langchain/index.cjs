'use strict';
// The Tool Adapter as LangChain.js structured tools (`@langchain/core`, an optional peer loaded on
// first use): `tool(fn, { name, description, schema })` with the adapter's JSON schema.

const { requirePeer } = require('../../engine/peer.cjs');
const { checkAdapter, schemaOf, withSignal } = require('../../tools/host-tools.cjs');

/** A structured tool for every tool of `adapter`; each returns the adapter's outcome as JSON text. */
function langchainTools(adapter) {
  checkAdapter(adapter);
  const { tool } = requirePeer('@langchain/core', 'tools');
  return adapter.tools.map((t) =>
    tool(async (input, config) => JSON.stringify(await adapter.call(t.name, input, withSignal(config?.signal))), {
      name: t.name,
      description: t.description,
      schema: schemaOf(t),
    }),
  );
}

module.exports = { langchainTools };
