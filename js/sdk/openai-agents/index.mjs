// ESM entry of the OpenAI Agents SDK helpers: the CommonJS implementation, shared by both module systems.
import api from './index.cjs';

export const { openaiAgentsTools } = api;
export default api;
