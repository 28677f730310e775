// Compiled by types.test.mjs with `exactOptionalPropertyTypes` on top of --strict: a host that
// forwards a value it may not have (`cursor: page.nextCursor`, `revision: meta.staticRevision`)
// writes the key with `undefined`, which the package reads as absent, so the declarations must
// accept it. The loops are the documentation's (docs/documents.md, docs/host-integrations.md).
import {
  CapabilityGraph,
  createToolAdapter,
  lexicalExecutor,
  semanticExecutor,
  seedProviderRoot,
  type CapabilityDefinition,
  type CatalogPage,
  type DatabaseAuthorityAdapter,
  type DatabasePage,
  type DatabasePageRequest,
  type DatabaseReadView,
  type DatabaseRelation,
  type KnowledgeReader,
  type ProviderSource,
  type RuntimeAdapter,
} from '@devcodex/capability-graph';

declare const registry: {
  routes(query: { project: string; environment: string; limit: number; cursor?: string | undefined }): Promise<{
    routes: Array<{ method: string; path: string }>;
    observedAt: string;
    revision: string;
    builtFrom: string;
    nextCursor?: string;
  }>;
};

export async function loops(maybeLimit: number | undefined, maybePrefix: string | undefined): Promise<number> {
  const providers: ProviderSource[] = [{ providerId: 'seed.http', authority: { kind: 'file', rootDir: seedProviderRoot, definitionLayout: 'directory' } }];
  const runtime: RuntimeAdapter = {
    id: 'route-registry',
    providerId: 'seed.http',
    async query({ project, environment, limit, cursor }) {
      const snap = await registry.routes({ project, environment, limit, cursor });
      return {
        instances: snap.routes.map((r) => ({
          instanceId: `${r.method} ${r.path}`, providerId: 'seed.http', project, environment,
          instanceOf: 'seed.http::route.http', facts: { method: r.method, path: r.path },
        })),
        observation: {
          source: 'route-registry', observedAt: snap.observedAt, runtimeRevision: snap.revision,
          observedAgainstStaticRevision: snap.builtFrom, compatibility: 'unknown',
          availability: snap.routes.length ? 'available' : 'empty', freshness: 'current',
        },
        nextCursor: snap.nextCursor,
      };
    },
  };
  const graph = await CapabilityGraph.open({ providers, runtimeAdapters: [runtime], executor: lexicalExecutor({ minScore: undefined }), budgets: { catalog: undefined } });
  void semanticExecutor({ minScore: undefined, embedder: undefined });
  try {
    let page = await graph.readDocumentPage({ capability: 'seed.http::route.http', knowledgeId: 'D-01' });
    while (page.hasMore) {
      page = await graph.readDocumentPage({ capability: 'seed.http::route.http', knowledgeId: 'D-01', cursor: page.nextCursor });
    }

    const q = { project: 'shop', environment: 'staging', instanceOf: 'seed.http::route.http' };
    let runtimePage = await graph.queryRuntime(q);
    while (runtimePage.nextCursor) runtimePage = await graph.queryRuntime({ ...q, cursor: runtimePage.nextCursor });

    let catalog: CatalogPage = await graph.listCatalog({ limit: maybeLimit, capabilityIdPrefix: maybePrefix });
    let rows = catalog.items.length;
    while (catalog.nextCursor !== undefined) {
      catalog = await graph.listCatalog({ limit: maybeLimit, capabilityIdPrefix: maybePrefix, cursor: catalog.nextCursor });
      rows += catalog.items.length;
    }

    const { meta } = await graph.resolve({ ids: ['seed.http::route.validation'] });
    const bound = graph.forProvider('seed.http');
    await bound.resolve({ ids: ['route'], requiredStaticRevision: meta.staticRevision });
    await bound.listCatalog({ parent: undefined, cursor: undefined });
    await graph.match({ intent: 'validate the request body', limit: maybeLimit, context: undefined });
    createToolAdapter(graph, { prefix: undefined, tools: undefined, dialect: undefined });
    // @ts-expect-error -- `null` is a value, never "absent": a cursor is a string
    await graph.listCatalog({ cursor: null });
    return rows;
  } finally {
    await graph.close();
  }
}

declare const rows: CapabilityDefinition[];
declare const maybeRelations: ((page: DatabasePageRequest & { maxBytes: number }) => DatabasePage<DatabaseRelation>) | undefined;
declare const maybeStream: KnowledgeReader['stream'] | undefined;

/** A host component's optional method may be written with `undefined` (the engine reads it as
 *  absent), as a host forwarding one it may not have does. */
export function components(): [DatabaseReadView, KnowledgeReader] {
  const view: DatabaseReadView = {
    provider: { providerId: 'inventory', name: 'Inventory', version: '1' },
    sourceRevision: 'r1',
    scanCapabilities: () => ({ items: rows }),
    scanRelations: maybeRelations,
    neighbors: undefined,
    changedSince: undefined,
    close: undefined,
  };
  const reader: KnowledgeReader = {
    id: 'web',
    canRead: () => true,
    stream: maybeStream,
    read: async () => ({ bytes: new Uint8Array(), contentType: 'text/plain', source: 'https://example.com/a' }),
  };
  const adapter: DatabaseAuthorityAdapter = { id: 'inventory-db', openView: () => view, watch: undefined };
  void adapter;
  return [view, reader];
}
