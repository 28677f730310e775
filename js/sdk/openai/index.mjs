// ESM entry of the OpenAI helpers: the CommonJS implementation, shared by both module systems.
import api from './index.cjs';

export const { openaiChatTools, openaiResponsesTools, handleToolCalls } = api;
export default api;
