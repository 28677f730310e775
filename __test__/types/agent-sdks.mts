// Compiled by types.test.mjs: each SDK helper's result goes into that SDK's own API with no cast,
// under --strict and exactOptionalPropertyTypes.
import { CapabilityGraph, createToolAdapter, providerFromTools, type MatchResult, type ToolProvider } from '@devcodex/capability-graph';
import { aiSdkTools, activeToolsFromMatch, type AiSdkToolSet } from '@devcodex/capability-graph/ai-sdk';
import { openaiAgentsTools } from '@devcodex/capability-graph/openai-agents';
import { handleToolCalls, openaiChatTools, openaiResponsesTools, type OpenAIToolMessage, type OpenAIFunctionCallOutput } from '@devcodex/capability-graph/openai';
import { anthropicTools, handleToolUse, type AnthropicToolResult } from '@devcodex/capability-graph/anthropic';
import { langchainTools } from '@devcodex/capability-graph/langchain';
import { generateText, tool, jsonSchema, type LanguageModel, type ToolSet } from 'ai';
import { Agent, run, type Tool as AgentTool } from '@openai/agents';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { ResponseInputItem, Tool as ResponsesTool } from 'openai/resources/responses/responses';
import Anthropic from '@anthropic-ai/sdk';
import type { MessageParam, ToolUnion } from '@anthropic-ai/sdk/resources/messages';
import type { StructuredToolInterface } from '@langchain/core/tools';

declare const model: LanguageModel;

export async function aiSdk(graph: CapabilityGraph, answer: MatchResult): Promise<string> {
  const adapter = createToolAdapter(graph, { dialect: 'strict' });
  const tools: AiSdkToolSet = aiSdkTools(adapter);
  const asToolSet: ToolSet = tools;
  const result = await generateText({ model, tools: asToolSet, prompt: 'What does routing do?' });

  const hostTools = {
    get_weather: tool({ description: 'Weather', inputSchema: jsonSchema<{ city: string }>({ type: 'object' }), execute: async ({ city }) => city }),
    get_time: tool({ description: 'Time', inputSchema: jsonSchema<{ zone: string }>({ type: 'object' }), execute: async ({ zone }) => zone }),
  };
  const toolNames = { 'host.tools::weather': 'get_weather', 'host.tools::clock': 'get_time' } as const;
  const activeTools = activeToolsFromMatch(answer, toolNames);
  await generateText({ model, tools: hostTools, activeTools, prompt: 'weather?' });
  // The tool-search recipe: a Map like providerFromTools's toolNames, narrowed to the tool set.
  const fromTools: ToolProvider['toolNames'] = new Map([['weather', 'get_weather']]);
  const narrowed = activeToolsFromMatch(answer, fromTools, hostTools);
  await generateText({ model, tools: hostTools, activeTools: narrowed, prompt: 'weather?' });
  // Tool search over the host's own AI SDK tools: the tool set as it is typed, no cast.
  const { toolNames: searched } = providerFromTools({ providerId: 'host.tools', name: 'Host tools', tools: hostTools });
  await generateText({ model, tools: hostTools, activeTools: activeToolsFromMatch(answer, searched, hostTools), prompt: 'weather?' });
  // Pinned tools: always shown, after the answer's own.
  await generateText({ model, tools: hostTools, activeTools: activeToolsFromMatch(answer, searched, hostTools, { always: ['get_time'] }), prompt: 'weather?' });
  const pinnedNames: Array<'get_weather' | 'get_time'> = activeToolsFromMatch(answer, toolNames, undefined, { always: ['get_time'] });
  void pinnedNames;
  // @ts-expect-error -- a pinned tool is one of the tool set
  activeToolsFromMatch(answer, searched, hostTools, { always: ['get_date'] });
  const anySet: ToolSet = hostTools;
  providerFromTools({ providerId: 'host.tools', name: 'Host tools', tools: anySet });
  // @ts-expect-error -- a table names tools, not numbers
  activeToolsFromMatch(answer, { a: 1 });
  // @ts-expect-error -- the tools are the SDK's, not any
  const notATool: number = tools['list_catalog'];
  void notATool;
  return result.text;
}

export async function openaiAgents(graph: CapabilityGraph): Promise<unknown> {
  const adapter = createToolAdapter(graph, { dialect: 'strict' });
  const tools: AgentTool[] = openaiAgentsTools(adapter);
  const agent = new Agent({ name: 'walker', instructions: adapter.instructions, tools: openaiAgentsTools(adapter) });
  void tools;
  // @ts-expect-error -- the tools are the SDK's, not any
  const notATool: number = openaiAgentsTools(adapter)[0];
  void notATool;
  return (await run(agent, 'What does routing do?')).finalOutput;
}

export async function openai(graph: CapabilityGraph, client: OpenAI): Promise<void> {
  const adapter = createToolAdapter(graph, { dialect: 'strict' });
  const tools: ChatCompletionTool[] = openaiChatTools(adapter);
  const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'What does routing do?' }];
  const completion = await client.chat.completions.create({ model: 'gpt-5', messages, tools });
  const message = completion.choices[0]!.message;
  const answers: OpenAIToolMessage[] = await handleToolCalls(adapter, message.tool_calls);
  messages.push(message, ...answers);

  const responsesTools: ResponsesTool[] = openaiResponsesTools(adapter);
  const response = await client.responses.create({ model: 'gpt-5', input: 'What does routing do?', tools: responsesTools });
  const outputs: OpenAIFunctionCallOutput[] = await handleToolCalls(adapter, response.output, { signal: undefined });
  const input: ResponseInputItem[] = outputs;
  await client.responses.create({ model: 'gpt-5', previous_response_id: response.id, input, tools: responsesTools });
}

export async function anthropic(graph: CapabilityGraph, client: Anthropic): Promise<void> {
  const adapter = createToolAdapter(graph, { dialect: 'strict' });
  const tools: ToolUnion[] = anthropicTools(adapter);
  const messages: MessageParam[] = [{ role: 'user', content: 'What does routing do?' }];
  const reply = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 1024, system: adapter.instructions, messages, tools });
  const results: AnthropicToolResult[] = await handleToolUse(adapter, reply.content);
  messages.push({ role: 'assistant', content: reply.content }, { role: 'user', content: results });
}

export function langchain(graph: CapabilityGraph): StructuredToolInterface[] {
  const tools = langchainTools(createToolAdapter(graph));
  // @ts-expect-error -- the tools are LangChain's, not any
  const notATool: number = tools[0];
  void notATool;
  return tools;
}

export async function literalCalls(graph: CapabilityGraph): Promise<number> {
  const adapter = createToolAdapter(graph, { dialect: 'strict' });
  // Calls written out, as a host that stores or replays them does.
  const chat = await handleToolCalls(adapter, [{ id: 'c', type: 'function', function: { name: 'list_catalog', arguments: '{}' } }]);
  const responses = await handleToolCalls(adapter, [{ type: 'function_call', call_id: 'c', name: 'list_catalog', arguments: '{}' }]);
  const anthropicResults = await handleToolUse(adapter, [{ type: 'text' }, { type: 'tool_use', id: 't', name: 'list_catalog', input: {} }]);
  const asChat: OpenAIToolMessage[] = chat;
  const asResponses: OpenAIFunctionCallOutput[] = responses;
  return asChat.length + asResponses.length + anthropicResults.length;
}
