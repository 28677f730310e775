/**
 * Types of @devcodex/capability-graph/anthropic: the Tool Adapter as Anthropic Messages tools and
 * a dispatcher for `tool_use` blocks. Plain JSON shapes: they need no Anthropic package and are
 * assignable to the official client's types.
 * @module @devcodex/capability-graph/anthropic
 */
import type { ToolAdapter, ToolDefinition } from '../../../index.js';

/** A Messages tool (`strict: true` in the strict dialect). */
export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: ToolDefinition['inputSchema'];
  strict?: true;
}

/** The answer to a `tool_use` block: `content` is the adapter's outcome as JSON; `is_error` when
 *  it is `{ ok: false, error }`. */
export interface AnthropicToolResult {
  type: 'tool_result';
  tool_use_id: string;
  content: string;
  is_error?: true;
}

/** A `tool_use` block of an assistant message. */
export interface AnthropicToolUse {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
}

export interface HandleToolUseOptions {
  /** Aborts the calls that read with a signal (`match`, the page reads). */
  signal?: AbortSignal | undefined;
}

/** Messages `tools`. Throws `CG_INPUT_INVALID` (`field: 'adapter'`) for an object not made by `createToolAdapter`. */
export declare function anthropicTools(adapter: ToolAdapter): AnthropicTool[];

/** Runs the `tool_use` blocks of the adapter's tools in an assistant message's `content` (other
 *  blocks are passed over; calls of other tools are left to you) and resolves a `tool_result`
 *  block per call, in order, for the next user message. */
export declare function handleToolUse(adapter: ToolAdapter, content: readonly (AnthropicToolUse | { type: string })[], options?: HandleToolUseOptions): Promise<AnthropicToolResult[]>;
