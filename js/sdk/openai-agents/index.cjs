'use strict';
// The Tool Adapter as OpenAI Agents SDK function tools (`@openai/agents`, an optional peer loaded
// on first use): `tool({ name, description, parameters, strict: true, execute })`.

const { inputInvalid } = require('../../errors.cjs');
const { requirePeer } = require('../../engine/peer.cjs');
const { checkAdapter, schemaOf, withSignal } = require('../../tools/host-tools.cjs');

/** A strict function tool for every tool of `adapter` (made with `dialect: 'strict'`); each
 *  returns the adapter's outcome as JSON text. */
function openaiAgentsTools(adapter) {
  checkAdapter(adapter);
  // The SDK sends `strict: true` whatever the schema; only the strict dialect's meets it.
  if (adapter.dialect !== 'strict') throw inputInvalid('dialect');
  const { tool } = requirePeer('@openai/agents');
  return adapter.tools.map((t) =>
    tool({
      name: t.name,
      description: t.description,
      parameters: schemaOf(t),
      strict: true,
      execute: async (input, _context, details) => JSON.stringify(await adapter.call(t.name, input, withSignal(details?.signal))),
    }),
  );
}

module.exports = { openaiAgentsTools };
