// ESM entry: re-exports the CommonJS implementation so both module systems share one set of
// classes (instanceof GraphError holds across them).
import api from './index.cjs';

export const {
  CapabilityGraph,
  BoundProviderGraph,
  GraphError,
  ErrorCode,
  Phase,
  NextAction,
  parseQualifiedId,
  readVectorsFile,
  formatQualifiedId,
  lexicalExecutor,
  semanticExecutor,
  createToolAdapter,
  createMcpServer,
  createMcpHttpHandler,
  StdioServerTransport,
  codexExecutor,
  providerFromTools,
  seedProviderRoot,
} = api;
export default api;
