/**
 * Types of @devcodex/capability-graph/langchain: the Tool Adapter as LangChain.js structured tools.
 * @module @devcodex/capability-graph/langchain
 */
import type { ToolAdapter } from '../../../index.js';

/** A structured tool of `@langchain/core` (for `model.bindTools(tools)` and agents). */
// @ts-ignore -- `@langchain/core` is an optional peer: without it installed this type is `any`.
export type LangChainTool = import('@langchain/core/tools').DynamicStructuredTool;

/** Every tool of `adapter` as `tool(fn, { name, description, schema })` with its JSON schema;
 *  `fn` returns the adapter's outcome as JSON text, an error as `{ ok: false, error }`. Loads
 *  `@langchain/core` on first call (missing: `CG_CONFIG_INVALID`, `details.package`). */
export declare function langchainTools(adapter: ToolAdapter): LangChainTool[];
