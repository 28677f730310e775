/**
 * Types of @devcodex/capability-graph/openai-agents: the Tool Adapter as OpenAI Agents SDK tools.
 * @module @devcodex/capability-graph/openai-agents
 */
import type { ToolAdapter } from '../../../index.js';

/** A strict function tool of the Agents SDK (for `new Agent({ tools })`). */
// @ts-ignore -- `@openai/agents` is an optional peer: without it installed this type is `any`.
export type OpenAIAgentsTool = import('@openai/agents').FunctionTool<any, any, string>;

/** Every tool of `adapter` (made with `dialect: 'strict'`, else `CG_INPUT_INVALID`,
 *  `field: 'dialect'`) as `tool({ name, description, parameters, strict: true, execute })`;
 *  `execute` returns the adapter's outcome as JSON text, an error as `{ ok: false, error }`.
 *  Loads `@openai/agents` on first call (missing: `CG_CONFIG_INVALID`, `details.package`). */
export declare function openaiAgentsTools(adapter: ToolAdapter): OpenAIAgentsTool[];
