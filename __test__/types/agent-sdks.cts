// The CommonJS view of the SDK helpers' types (require through the package's exports).
import { createToolAdapter, type CapabilityGraph } from '@devcodex/capability-graph';
import aiSdk = require('@devcodex/capability-graph/ai-sdk');
import agents = require('@devcodex/capability-graph/openai-agents');
import openai = require('@devcodex/capability-graph/openai');
import anthropic = require('@devcodex/capability-graph/anthropic');
import langchain = require('@devcodex/capability-graph/langchain');
import type { StructuredToolInterface } from '@langchain/core/tools';

export function all(graph: CapabilityGraph): number {
  const adapter = createToolAdapter(graph, { dialect: 'strict' });
  // LangChain's CommonJS declarations, as a require() consumer sees them.
  const structured: StructuredToolInterface[] = langchain.langchainTools(adapter);
  void structured;
  return (
    Object.keys(aiSdk.aiSdkTools(adapter)).length +
    agents.openaiAgentsTools(adapter).length +
    openai.openaiChatTools(adapter).length +
    openai.openaiResponsesTools(adapter).length +
    anthropic.anthropicTools(adapter).length +
    langchain.langchainTools(adapter).length
  );
}
