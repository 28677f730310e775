// ESM entry of the Anthropic helpers: the CommonJS implementation, shared by both module systems.
import api from './index.cjs';

export const { anthropicTools, handleToolUse } = api;
export default api;
