// ESM entry of the LangChain.js helpers: the CommonJS implementation, shared by both module systems.
import api from './langchain.cjs';

export const { langchainTools } = api;
export default api;
