/**
 * Types of @devcodex/capability-graph/openai: the Tool Adapter as OpenAI function tools (Chat
 * Completions and Responses) and a dispatcher for the model's calls. Plain JSON shapes: they
 * need no OpenAI package and are assignable to the official client's types.
 * @module @devcodex/capability-graph/openai
 */
import type { ToolAdapter, ToolDefinition } from '../../../index.js';

/** A Chat Completions function tool (`strict` true in the strict dialect). */
export interface OpenAIChatTool {
  type: 'function';
  function: { name: string; description: string; parameters: ToolDefinition['inputSchema']; strict: boolean };
}

/** A Responses function tool (`strict` true in the strict dialect). */
export interface OpenAIResponsesTool {
  type: 'function';
  name: string;
  description: string;
  parameters: ToolDefinition['inputSchema'];
  strict: boolean;
}

/** The answer to a Chat Completions tool call: `content` is the adapter's outcome as JSON. */
export interface OpenAIToolMessage {
  role: 'tool';
  tool_call_id: string;
  content: string;
}

/** The answer to a Responses function call: `output` is the adapter's outcome as JSON. */
export interface OpenAIFunctionCallOutput {
  type: 'function_call_output';
  call_id: string;
  output: string;
}

/** A Chat Completions tool call (`message.tool_calls[i]`). */
export type OpenAIChatToolCall =
  | { id: string; type: 'function'; function: { name: string; arguments: string } }
  | { id: string; type: 'custom'; custom: { name: string; input: string } };

/** A Responses function call (an item of `response.output`). */
export interface OpenAIFunctionCall {
  type: 'function_call';
  call_id: string;
  name: string;
  arguments: string;
  id?: string | undefined;
  status?: string | undefined;
}

export interface HandleToolCallsOptions {
  /** Aborts the calls that read with a signal (`match`, the page reads). */
  signal?: AbortSignal | undefined;
}

/** Chat Completions `tools`. Throws `CG_INPUT_INVALID` (`field: 'adapter'`) for an object not made by `createToolAdapter`. */
export declare function openaiChatTools(adapter: ToolAdapter): OpenAIChatTool[];
/** Responses `tools`. Throws like openaiChatTools. */
export declare function openaiResponsesTools(adapter: ToolAdapter): OpenAIResponsesTool[];

/** Runs the calls of the adapter's tools in a Chat Completions message's `tool_calls` (undefined:
 *  none) and resolves a tool message per call, in order; calls of other tools are left to you.
 *  Empty arguments are none; arguments that are not JSON come back as `CG_INPUT_INVALID`
 *  (`field: 'arguments'`). */
export declare function handleToolCalls(adapter: ToolAdapter, calls: readonly OpenAIChatToolCall[] | undefined, options?: HandleToolCallsOptions): Promise<OpenAIToolMessage[]>;
/** Runs the calls of the adapter's tools in a Responses `output` (other items are passed over)
 *  and resolves a `function_call_output` item per call, in order. */
export declare function handleToolCalls(adapter: ToolAdapter, output: readonly (OpenAIFunctionCall | { type: string })[], options?: HandleToolCallsOptions): Promise<OpenAIFunctionCallOutput[]>;
