// ESM entry of the LangChain.js helpers: the CommonJS implementation, shared by both module systems.
import api from './index.cjs';

export const { langchainTools } = api;
export default api;
