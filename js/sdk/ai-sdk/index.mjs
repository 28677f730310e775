// ESM entry of the AI SDK helpers: the CommonJS implementation, shared by both module systems.
import api from './index.cjs';

export const { aiSdkTools, activeToolsFromMatch } = api;
export default api;
