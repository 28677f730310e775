/**
 * Types of @devcodex/capability-graph/ai-sdk: the Tool Adapter as Vercel AI SDK tools.
 * @module @devcodex/capability-graph/ai-sdk
 */
import type { MatchResult, ToolAdapter, ToolOutcome } from '../../../index.js';

/** The adapter's tools as AI SDK tools, keyed by tool name (for `generateText({ tools })`). */
// @ts-ignore -- `ai` is an optional peer: without it installed this type is `any`.
export type AiSdkToolSet = Record<string, import('ai').Tool<any, ToolOutcome>>;

/** Where a capability's tool name is found: by qualified ID, then by local capability ID, in a
 *  plain object or a Map; a function is asked with the qualified ID. */
export type ToolNamesByCapability<NAME extends string = string> =
  | Readonly<Record<string, NAME>>
  | ReadonlyMap<string, NAME>
  | ((qualifiedId: string) => NAME | null | undefined);

/** Every tool of `adapter` as `tool({ title, description, inputSchema: jsonSchema(…), execute })`
 *  (`strict: true` in the strict dialect); `execute` resolves the adapter's outcome, an error as
 *  `{ ok: false, error }`, and passes the SDK's abort signal on. Loads `ai` on first call
 *  (missing: `CG_CONFIG_INVALID`, `details.package: 'ai'`); an object not made by
 *  `createToolAdapter` is `CG_INPUT_INVALID` (`field: 'adapter'`). */
export declare function aiSdkTools(adapter: ToolAdapter): AiSdkToolSet;

/** Tools a model always sees, whatever the match answered. */
export interface ActiveToolsOptions<NAME extends string = string> {
  /** Tool names, each once, after the answer's own (deduplicated); alone for an answer without
   *  matches. Each must be a name of `toolNames` (a table's values; a function's cannot be
   *  listed) and of `tools` when given; anything else is `CG_INPUT_INVALID` (`field: 'always'`). */
  always?: readonly NAME[] | undefined;
}

/** The tool names a `match` answer stands for, in its order and each once, for
 *  `generateText({ activeTools })`, then `options.always`; a matched capability without a tool
 *  name is left out. Ask `match` with `mode: 'rank'` for tool search: it answers the best few
 *  every time. A value that is no match answer is `CG_INPUT_INVALID` (`field: 'answer'`), a bad
 *  table or name `field: 'toolNames'`. */
export declare function activeToolsFromMatch<NAME extends string>(answer: MatchResult, toolNames: ToolNamesByCapability<NAME>, tools?: undefined, options?: ActiveToolsOptions<NAME>): NAME[];
/** As above, keeping only the names of `tools` (the tool set given to the SDK), so the result
 *  types as its `activeTools` (a tool set that is not an object is `field: 'tools'`). */
export declare function activeToolsFromMatch<TOOLS extends object>(
  answer: MatchResult,
  toolNames: ToolNamesByCapability,
  tools: TOOLS,
  options?: ActiveToolsOptions<keyof TOOLS & string>,
): Array<keyof TOOLS & string>;
