'use strict';
// The Tool Adapter as Anthropic Messages tools and a dispatcher that answers `tool_use` blocks
// with `tool_result` blocks. Plain JSON: no Anthropic package is loaded.

const { checkAdapter, schemaOf, withSignal, dispatchSignal, plainItems, read } = require('../../tools/host-tools.cjs');

/** Messages `tools`: `{ name, description, input_schema }`, with `strict: true` in the strict dialect. */
function anthropicTools(adapter) {
  checkAdapter(adapter);
  const strict = adapter.dialect === 'strict';
  return adapter.tools.map((t) => ({ name: t.name, description: t.description, input_schema: schemaOf(t), ...(strict ? { strict: true } : {}) }));
}

/**
 * Runs the `tool_use` blocks of this adapter's tools among `content` (an assistant message's
 * content; other blocks are passed over) and resolves, in their order, a `tool_result` block
 * per call: the adapter's outcome as JSON, `is_error: true` when it is `{ ok: false }`. Calls
 * of tools the adapter does not have are left to the host.
 */
async function handleToolUse(adapter, content, options) {
  checkAdapter(adapter);
  const signal = dispatchSignal(options);
  const uses = plainItems(content, 'content').flatMap((block, i) => {
    const at = `content[${i}]`;
    if (read(block, 'type', at) !== 'tool_use' || !adapter.has(read(block, 'name', at))) return [];
    return [{ id: read(block, 'id', at), name: block.name, input: read(block, 'input', at) }];
  });
  return Promise.all(
    uses.map(async (use) => {
      const outcome = await adapter.call(use.name, use.input, withSignal(signal));
      return { type: 'tool_result', tool_use_id: use.id, content: JSON.stringify(outcome), ...(outcome.ok ? {} : { is_error: true }) };
    }),
  );
}

module.exports = { anthropicTools, handleToolUse };
