// CommonJS consumers see the same types.
import cg = require('@devcodex/capability-graph');
const e: cg.GraphError = new cg.GraphError({ code: 'CG_INTERNAL' });
const p: Promise<cg.CapabilityGraph> = cg.CapabilityGraph.open({ providers: [] });
const fromFile: Promise<cg.CapabilityGraph> = cg.CapabilityGraph.openConfigFile('capability-graph.json');
void [e, p, fromFile];
const retriever: cg.CapabilityRetriever = { id: 'r', retrieve: () => ({ candidates: [] }) };
const adapter: cg.RuntimeAdapter = {
  id: 'rt',
  providerId: 'acme',
  query: async () => ({ instances: [], observation: { source: 's', observedAt: '2026-11-30T12:00:00Z', runtimeRevision: 'r', observedAgainstStaticRevision: 's', compatibility: 'unknown', availability: 'empty', freshness: 'current' } }),
};
async function hosted(): Promise<void> {
  const g = await cg.CapabilityGraph.open({ providers: [], capabilityRetriever: retriever, runtimeAdapters: [adapter] });
  const found: cg.RetrieveCapabilitiesPage = await g.retrieveCapabilities({ text: 'x' });
  const page: cg.QueryRuntimePage = await g.queryRuntime({ project: 'p', environment: 'e', requestProviderScope: ['acme'] });
  void [found.items.length, page.observation.availability];
  // @ts-expect-error availability is one of three states
  void ({ ...page.observation, availability: 'gone' } satisfies cg.RuntimeObservation);
}
void hosted;
