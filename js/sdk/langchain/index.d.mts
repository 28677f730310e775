/**
 * The ESM entry's types: as the CommonJS entry's, with LangChain's own ESM declarations (it ships
 * one set per module system, and a consumer's tools must be of the set it imports).
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
