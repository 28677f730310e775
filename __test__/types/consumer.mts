// Compiled with `tsc --noEmit` by types.test.mjs: the public types must accept real usage
// and reject misuse (each @ts-expect-error line must be an error).
import {
  CapabilityGraph,
  GraphError,
  ErrorCode,
  Phase,
  NextAction,
  parseQualifiedId,
  formatQualifiedId,
  lexicalExecutor,
  semanticExecutor,
  createToolAdapter,
  createMcpServer,
  createMcpHttpHandler,
  type McpHttpHandler,
  type ToolDefinition,
  type ToolDialect,
  StdioServerTransport,
  codexExecutor,
  providerFromTools,
  type ToolProvider,
  type ModelExecutor,
  type ResolveResult,
  type ReloadResult,
  type ReloadEvent,
  type GraphErrorJSON,
  type BoundProviderGraph,
  type CapabilityRetriever,
  type KnowledgeRetriever,
  type RuntimeAdapter,
  type RuntimeObservation,
  type DatabaseAuthorityAdapter,
  type DatabaseRelation,
  type VectorEntry,
  type GraphStatus,
  readVectorsFile,
  type RetrieveCapabilitiesPage,
  type QueryRuntimePage,
  type QueryKnowledgePage,
} from '@devcodex/capability-graph';

async function main(): Promise<void> {
  const graph: CapabilityGraph = await CapabilityGraph.open({
    providers: [
      { providerId: 'seed.http', authority: { kind: 'file', rootDir: '.', definitionLayout: 'directory' } },
      { definition: { providerId: 'acme', name: 'Acme', version: '1', capabilities: [] }, documentRoot: '.' },
    ],
    hostAllowedProviders: ['seed.http', 'acme'],
    budgets: { resolve: { maxNodes: 64 } },
  });
  const resolved: ResolveResult = await graph.resolve({ ids: ['seed.http::route', { providerId: 'acme', capabilityId: 'x' }] });
  const first: string = resolved.items[0].reason.requiredBy[0];
  const revision: string | undefined = resolved.meta.staticRevision;
  const bound: BoundProviderGraph = graph.forProvider('seed.http');
  await bound.resolve({ ids: ['route', { capabilityId: 'route.http' }], requiredStaticRevision: revision });
  const report: ReloadResult = await graph.reload({ providerId: 'acme' });
  if (!report.ok) {
    const json: GraphErrorJSON | undefined = report.providers[0].error;
    void json;
  }
  try {
    await graph.resolve({ ids: [] });
  } catch (e) {
    if (e instanceof GraphError) {
      const code: ErrorCode = e.code;
      const phase: Phase = e.phase;
      const action: NextAction | undefined = e.nextAction;
      void [code, phase, action, e.toJSON().message];
    }
  }
  const c: 'CG_GRAPH_CLOSED' = ErrorCode.CG_GRAPH_CLOSED;
  const q: 'query' = Phase.query;
  const n: 'retry' = NextAction.retry;
  const id = parseQualifiedId('a::b');
  const s: string = formatQualifiedId(id);
  void [first, c, q, n, s];
  const made = new GraphError({ code: 'CG_MODEL_REFUSED', nextAction: 'fix_input', details: { reason: 'x' } });
  // @ts-expect-error a GraphError's fields are read-only
  made.code = 'CG_INTERNAL';
  // @ts-expect-error its details are frozen
  made.details!.reason = 'y';
  // @ts-expect-error unknown code
  new GraphError({ code: 'CG_NOPE' });
  // @ts-expect-error ids must be references
  await graph.resolve({ ids: [42] });
  // @ts-expect-error providers is required
  await CapabilityGraph.open({});
  const fromFile: CapabilityGraph = await CapabilityGraph.openConfigFile('capability-graph.json');
  await fromFile.close();
  // @ts-expect-error the config file is named by its path
  await CapabilityGraph.openConfigFile({ providers: [] });
  // @ts-expect-error the constructor is private
  new CapabilityGraph();
  await graph.close();
}
void main;

async function discovery(graph: CapabilityGraph): Promise<void> {
  const page = await graph.listCatalog({ capabilityIdPrefix: 'route', limit: 10 });
  const next: string | undefined = page.nextCursor;
  await graph.listCatalog({ cursor: next, parent: 'seed.http::route' });
  const details = await graph.getCapabilities(['seed.http::route'], { knowledgeLimit: 5 });
  for (const slot of details.results) {
    if (slot.ok) void slot.value.neighborSummaries.children.items[0]?.name;
    else void slot.error.code;
  }
  const n = await graph.getNeighbors('seed.http::route', { kinds: ['children'], cursors: { children: 'x' } });
  void n.groups.requiredBy.completeness;
  const sel = await graph.resolveSelection({ selected: ['seed.http::route'] });
  void sel.reasons[0].reason.requiredBy;
  const p = await graph.getProvider('seed.http');
  void p.specificationDocuments?.items[0].locator;
  const bound = graph.forProvider('seed.http');
  await bound.getProvider();
  await bound.getNeighbors('route');
  await bound.listKnowledgeMembers({ capability: 'route', collectionId: 'C-1' });
  await bound.listKnowledgeMembers({ capabilityId: 'route', collectionId: 'C-1' });
  await bound.readDocumentPage({ capabilityId: 'route', knowledgeId: 'D-01', signal: new AbortController().signal });
  // @ts-expect-error one of capability and capabilityId
  await bound.readDocumentPage({ capability: 'route', capabilityId: 'route', knowledgeId: 'D-01' });
  // @ts-expect-error a bound facade takes no request scope
  await bound.listCatalog({ requestProviderScope: ['x'] });
  // @ts-expect-error unknown neighbour kind
  await graph.getNeighbors('a::b', { kinds: ['siblings'] });
}
void discovery;

async function documents(graph: CapabilityGraph): Promise<void> {
  const batch = await graph.readDocuments({ selected: ['seed.http::route.validation'], locales: ['en'] });
  const state: 'matched' | 'filtered_empty' | 'not_associated' = batch.knowledgeState;
  const first = batch.results[0];
  if (first.ok) void first.value.text;
  let page = await graph.readDocumentPage({ capability: 'seed.http::route.http', knowledgeId: 'D-01', maxBytes: 4096 });
  while (page.hasMore) page = await graph.readDocumentPage({ capability: 'seed.http::route.http', knowledgeId: 'D-01', cursor: page.nextCursor });
  await graph.forProvider('seed.http').readSpecificationPage({ knowledgeId: 'SPEC-01' });
  void state;
  await CapabilityGraph.open({
    providers: [],
    readers: [
      { id: 'r', canRead: (ref) => ref.locator.type === 'http', read: async () => ({ bytes: new Uint8Array(), contentType: 'text/plain', source: 'x' }) },
      {
        id: 's',
        canRead: () => true,
        read: async () => ({ bytes: new Uint8Array(), contentType: 'text/plain', source: 'x' }),
        async *stream(ref, ctx, { chunkBytes }) {
          yield { bytes: new Uint8Array(Math.min(chunkBytes, 1)), contentType: 'text/plain', source: ctx.providerId };
        },
      },
    ],
  });
}
void documents;

async function matching(): Promise<void> {
  const graph = await CapabilityGraph.open({ providers: [], executor: lexicalExecutor({ minScore: 0.5 }) });
  const embedder = { id: 'my-model', dimensions: 3, embed: async (texts: string[], { signal }: { signal: AbortSignal }) => (signal.aborted ? new Float32Array(0) : new Float32Array(texts.length * 3)) };
  const semantic = await CapabilityGraph.open({ providers: [], executor: semanticExecutor({ embedder, minScore: 0.4 }), budgets: { match: { embedTimeoutMs: 5_000, embedBatchSize: 64 } } });
  await semantic.close();
  await CapabilityGraph.open({ providers: [], executor: semanticExecutor() }).then((g) => g.close());
  const r = await graph.match({ intent: 'x', context: { tenant: 'a', n: 1 }, signal: new AbortController().signal });
  if (r.status === 'matched') void r.resolution?.added;
  const custom: ModelExecutor = { id: 'mine', match: async (req) => ({ status: 'matched', selections: [{ id: req.candidates[0].qualifiedId }] }) };
  await CapabilityGraph.open({ providers: [], executor: custom });
  // @ts-expect-error context values are scalars
  await graph.match({ intent: 'x', context: { nested: {} } });
  const ranked = await graph.match({ intent: 'x', mode: 'rank' });
  if (ranked.status === 'no_match') void ranked.nearest.map((n) => [n.qualifiedId, n.confidence ?? 0]);
  // @ts-expect-error -- only a no_match names the nearest candidates
  if (ranked.status === 'matched') void ranked.nearest.length;
  // @ts-expect-error -- the modes are 'accept' and 'rank'
  await graph.match({ intent: 'x', mode: 'best' });
  const ranking: ModelExecutor = {
    id: 'ranking',
    match: (req) =>
      req.mode === 'rank'
        ? { status: 'matched', selections: req.candidates.slice(0, req.limit).map((c) => ({ id: c.qualifiedId })) }
        : { status: 'no_match', selections: [], nearest: [{ id: req.candidates[0].qualifiedId, confidence: 0.2 }] },
  };
  void ranking;
}
void matching;

async function tools(graph: CapabilityGraph): Promise<void> {
  const adapter = createToolAdapter(graph, { prefix: 'acme_', documentBodies: true, tools: ['list_catalog', 'match'] });
  const out = await adapter.call(adapter.tools[0].name, {});
  if (!out.ok) void out.error.code;
  const server = createMcpServer(graph.forProvider('seed.http'), { name: 'x' });
  await server.connect(new StdioServerTransport({ maxMessageBytes: 1024 * 1024 }));
  new StdioServerTransport({ stdout: { write: (_chunk: Uint8Array, done: (error?: Error | null) => void) => (done(), true) }, highWaterMark: 65536, maxInFlight: 8 });
  // @ts-expect-error the high-water mark is a number of bytes
  new StdioServerTransport({ highWaterMark: '1 MiB' });
  await server.close();
  // @ts-expect-error the limit is a number of bytes
  new StdioServerTransport({ maxMessageBytes: '1 MiB' });
  await CapabilityGraph.open({ providers: [], budgets: { database: { callTimeoutMs: 1000, maxRecords: 10 }, read: { readerTimeoutMs: 500 } } });
  // @ts-expect-error database budgets are known fields
  await CapabilityGraph.open({ providers: [], budgets: { database: { maxPages: 1 } } });
  // @ts-expect-error unknown tool name
  createToolAdapter(graph, { tools: ['nope'] });
  const strict = createToolAdapter(graph, { dialect: 'strict', prefix: 'seed_' });
  const dialect: ToolDialect = strict.dialect;
  const instructions: string = strict.instructions;
  const first: ToolDefinition = strict.tools[0];
  const title: string = first.title;
  const readOnly: true = first.annotations.readOnlyHint;
  const required: string[] | undefined = first.inputSchema.required;
  const example: Record<string, unknown> | undefined = first.examples[0];
  void [dialect, instructions, title, readOnly, required, example];
  createMcpServer(graph, { dialect: 'json-schema', instructions: 'Start with list_catalog.' });
  const handler: McpHttpHandler = createMcpHttpHandler(graph, { prefix: 'seed_', allowedHosts: ['mcp.internal:8080'] });
  const done: Promise<void> = handler({}, {}, { jsonrpc: '2.0' });
  void done;
  // @ts-expect-error host names are strings
  createMcpHttpHandler(graph, { allowedHosts: [8080] });
  // @ts-expect-error the dialects are 'json-schema' and 'strict'
  createToolAdapter(graph, { dialect: 'openai' });
  // @ts-expect-error instructions are text
  createMcpServer(graph, { instructions: 1 });
}
void tools;

async function codex(): Promise<void> {
  const executor: ModelExecutor = codexExecutor({ model: 'gpt-5-codex', minCliVersion: '0.130.0' });
  await CapabilityGraph.open({ providers: [], executor });
  // @ts-expect-error env values are strings
  codexExecutor({ env: { A: 1 } });
}
void codex;

async function integrations(): Promise<void> {
  const retriever: CapabilityRetriever = {
    id: 'index',
    retrieve: async ({ providerIds, staticRevisionByProvider, limit }) => ({
      candidates: providerIds.slice(0, limit).map((p) => ({ id: `${p}::route`, score: 0.5, sourceStaticRevision: staticRevisionByProvider[p] })),
    }),
  };
  const observation: RuntimeObservation = {
    source: 'registry',
    observedAt: '2026-11-30T12:00:00Z',
    runtimeRevision: 'r:1',
    observedAgainstStaticRevision: 's:0000000000000000',
    compatibility: 'unknown',
    availability: 'available',
    freshness: 'current',
  };
  const runtime: RuntimeAdapter = {
    id: 'routes',
    providerId: 'seed.http',
    query: (req) => ({
      instances: [{ instanceId: 'GET /', providerId: 'seed.http', project: req.project, environment: req.environment, instanceOf: 'seed.http::route.http', facts: { method: 'GET' } }],
      observation,
      nextCursor: req.cursor === undefined ? '1' : undefined,
    }),
  };
  const knowledge: KnowledgeRetriever = {
    id: 'docs',
    retrieve: async (req, access) => {
      const read = await access.read({ id: req.targets[0].id, knowledgeId: req.targets[0].knowledgeId }, { maxBytes: 1024 });
      return {
        hits: [],
        evidence: {
          staticRevisionByProvider: req.staticRevisionByProvider,
          mappingRevision: req.mappingRevision,
          observedAt: new Date().toISOString(),
          freshness: 'current',
          sourceConfigRevision: 'c1',
          indexedConfigRevision: 'c1',
          documents: [{ id: req.targets[0].id, knowledgeId: req.targets[0].knowledgeId, sourceContentId: read.contentId, indexedContentId: read.contentId }],
        },
      };
    },
  };
  const graph = await CapabilityGraph.open({
    providers: [
      { providerId: 'seed.http', authority: { kind: 'file', rootDir: '.' } },
      {
        providerId: 'acme.billing',
        authority: {
          kind: 'database',
          adapter: {
            id: 'memory',
            openView: async (providerId) => ({
              provider: { providerId, name: 'Billing', version: '1' },
              sourceRevision: 'v1',
              knowledgeRootDir: '.',
              scanCapabilities: async ({ limit, maxBytes, cursor }) => ({ items: [{ capabilityId: 'invoice', name: 'Invoice', description: `${limit} ${maxBytes}`, whenToUse: 'w' }], nextCursor: cursor ? null : undefined }),
              neighbors: (capabilityId, kind, { limit }) => ({ items: kind === 'requires' && limit > 0 ? [] : [capabilityId].slice(1) }),
              close: async () => {},
            }),
          },
        },
      },
    ],
    capabilityRetriever: retriever,
    knowledgeRetriever: knowledge,
    runtimeAdapters: [runtime],
  });
  const found: RetrieveCapabilitiesPage = await graph.retrieveCapabilities({ text: 'routing', limit: 5, requestProviderScope: ['seed.http'] });
  const top: [string, number, number | undefined] = [found.items[0].qualifiedId, found.items[0].rank, found.items[0].score];
  void [top, found.meta.warnings[0]?.details?.adapterIndex, found.meta.view.capabilities];
  let page: QueryRuntimePage = await graph.queryRuntime({ project: 'shop', environment: 'staging', instanceOf: 'seed.http::route.http' });
  if (page.nextCursor) page = await graph.queryRuntime({ project: 'shop', environment: 'staging', instanceOf: 'seed.http::route.http', cursor: page.nextCursor, requiredRuntimeRevision: page.observation.runtimeRevision });
  const compat: 'compatible' | 'unknown' | 'refresh_required' = page.meta.view.runtime.compatibility;
  void [compat, page.items[0].instanceOf.capabilityId, page.items[0].facts, page.items[0].associations?.[0].kind];
  try {
    const hits: QueryKnowledgePage = await graph.queryKnowledge({ text: 'body schema', selected: ['seed.http::route.validation'], roles: ['guide'] });
    void [hits.knowledgeState, hits.items[0]?.snippet, hits.indexStatus?.mappingRevision];
  } catch (e) {
    if (e instanceof GraphError && e.code === 'CG_RETRIEVER_UNAVAILABLE') void e.details?.reason;
  }
  const bound = graph.forProvider('seed.http');
  await bound.retrieveCapabilities({ text: 'routing' });
  await bound.queryRuntime({ project: 'shop', environment: 'staging', instanceOf: { capabilityId: 'route.http' } });
  await bound.queryKnowledge({ text: 'x', selected: ['route.validation'] });
  const db: DatabaseAuthorityAdapter = {
    id: 'db',
    openView: (providerId) => ({
      provider: { providerId, name: 'P', version: '1' },
      sourceRevision: 'v1',
      scanCapabilities: () => ({ items: [] }),
      neighbors: () => ({ items: [] }),
    }),
  };
  await CapabilityGraph.open({ providers: [{ providerId: 'p', authority: { kind: 'database', adapter: db } }] });
  // Edges in bulk, or none at all (the records' relations).
  const bulk: DatabaseAuthorityAdapter = {
    id: 'bulk',
    openView: (providerId) => ({
      provider: { providerId, name: 'P', version: '1' },
      sourceRevision: 'v1',
      scanCapabilities: () => ({ items: [] }),
      scanRelations: async ({ limit, maxBytes, cursor }) => ({
        items: limit + maxBytes > 0 ? [{ from: 'a', kind: 'children', to: { providerId, capabilityId: 'b' } }] : [],
        nextCursor: cursor ? null : undefined,
      }),
    }),
  };
  const recordsOnly: DatabaseAuthorityAdapter = { id: 'own', openView: (providerId) => ({ provider: { providerId, name: 'P', version: '1' }, sourceRevision: 'v1', scanCapabilities: () => ({ items: [] }) }) };
  const forced: ReloadResult = await graph.reload({ providerId: 'acme.billing', force: true });
  await graph.reload({ force: false });
  // @ts-expect-error force is a boolean
  await graph.reload({ force: 'yes' });
  // @ts-expect-error a bulk relation names its kind
  const unkinded: DatabaseRelation = { from: 'a', to: 'b' };
  // Pages as JSON text, and the changes since a revision (or "unknown").
  const incremental: DatabaseAuthorityAdapter = {
    id: 'log',
    openView: (providerId) => ({
      provider: { providerId, name: 'P', version: '1' },
      sourceRevision: 'v2',
      scanCapabilities: () => ({ itemsJson: '[]' }),
      changedSince: (since, { limit, maxBytes }) =>
        since === 'v0' ? { unknown: true as const } : { items: [{ capabilityId: 'a', record: { capabilityId: 'a', name: 'A', description: `${limit} ${maxBytes}`, whenToUse: 'w' } }, { capabilityId: 'b', removed: true as const }] },
    }),
  };
  // @ts-expect-error a page gives items or their JSON text, not both
  const both: DatabaseAuthorityAdapter = { id: 'x', openView: (providerId) => ({ provider: { providerId, name: 'P', version: '1' }, sourceRevision: 'v', scanCapabilities: () => ({ items: [], itemsJson: '[]' }) }) };
  // Precomputed vectors from a view, and what became of them.
  const file = readVectorsFile(new Uint8Array(0));
  const stored: VectorEntry[] = file.entries;
  const vectored: DatabaseAuthorityAdapter = {
    id: 'vectors',
    openView: (providerId) => ({
      provider: { providerId, name: 'P', version: '1' },
      sourceRevision: 'v1',
      scanCapabilities: () => ({ items: [] }),
      vectors: async (modelId, { limit, maxBytes, cursor, capabilityIds }) => ({
        items: stored.filter((e) => modelId === file.modelId && limit + maxBytes > 0 && (capabilityIds ?? [e.capabilityId]).includes(e.capabilityId) && e.capabilityId > (cursor ?? '')),
      }),
    }),
  };
  const status: GraphStatus = await graph.status();
  for (const { providerId, vectors } of status.providers) {
    if (vectors !== null && vectors.state === 'ignored') {
      const why: 'corrupt' | 'truncated' | 'foreign' | 'too_large' | 'failed' | 'timeout' | null = vectors.reason;
      void [providerId, why, vectors.embedded];
    }
  }
  // @ts-expect-error an entry's vector is base64 text
  const numeric: VectorEntry = { capabilityId: 'a', textHash: '00', scale: 1, vector: [1, 2] };
  void [bulk, recordsOnly, forced, unkinded, incremental, both, vectored, numeric];
  // Watched providers, and what a host is told after each reload.
  const watching: DatabaseAuthorityAdapter = {
    id: 'watching',
    openView: recordsOnly.openView,
    watch: (providerId, onChange, { signal }) =>
      new Promise<void>((resolve) => {
        onChange();
        signal.addEventListener('abort', () => resolve());
      }),
  };
  const watched = await CapabilityGraph.open({
    providers: [
      { providerId: 'p', authority: { kind: 'database', adapter: watching, watch: false } },
      { providerId: 'f', authority: { kind: 'file', rootDir: '/srv/f', watch: true } },
    ],
  });
  const onReload = (event: ReloadEvent) => {
    if (event.ok) {
      const revision: string = event.entry.staticRevision;
      void revision;
    } else {
      const code: string = event.error.code;
      const failedEntry = event.entry?.error.code;
      void [code, failedEntry];
    }
  };
  watched.on('reload', onReload).off('reload', onReload);
  // @ts-expect-error only reload events
  watched.on('change', onReload);
  // @ts-expect-error watch is a boolean
  await CapabilityGraph.open({ providers: [{ providerId: 'f', authority: { kind: 'file', rootDir: '/srv/f', watch: 'yes' } }] });
  // @ts-expect-error runtime queries need an environment
  await graph.queryRuntime({ project: 'shop' });
  // @ts-expect-error a bound facade takes no request scope
  await bound.queryRuntime({ project: 'shop', environment: 'staging', requestProviderScope: ['seed.http'] });
  // @ts-expect-error queryKnowledge needs a selection
  await graph.queryKnowledge({ text: 'x' });
  // @ts-expect-error a candidate states the revision its index was built from
  const stale: CapabilityRetriever = { id: 'r', retrieve: () => ({ candidates: [{ id: 'a::b' }] }) };
  // @ts-expect-error relation streams list capability IDs
  const streams: DatabaseAuthorityAdapter['openView'] = () => ({ provider: { providerId: 'p', name: 'P', version: '1' }, sourceRevision: 'v', scanCapabilities: () => ({ items: [] }), neighbors: () => ({ items: [{ capabilityId: 'x' }] }) });
  // @ts-expect-error a runtime adapter names its provider
  await CapabilityGraph.open({ providers: [], runtimeAdapters: [{ id: 'r', query: () => ({ instances: [], observation }) }] });
  void [stale, streams];
}
void integrations;

// Tool search: MCP, OpenAI, Anthropic and AI SDK tools in; a definition and the mapping out.
async function toolSearch() {
  const mcp = [{ name: 'get_weather', description: 'Weather', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } }];
  const openai = [{ type: 'function', function: { name: 'send_email', parameters: { type: 'object' } } }];
  const anthropic = [{ name: 'create_ticket', input_schema: { type: 'object' }, cache_control: { type: 'ephemeral' } }];
  const aiSdk = { getWeather: { description: 'Weather', inputSchema: { type: 'object' }, execute: async () => ({}) } };
  const { definition, toolNames, capabilityIds }: ToolProvider = providerFromTools({ providerId: 'tools', name: 'Tools', tools: [...mcp, ...openai, ...anthropic] });
  providerFromTools({ providerId: 'tools', name: 'Tools', version: undefined, tools: aiSdk });
  const graph = await CapabilityGraph.open({ providers: [{ definition }], executor: lexicalExecutor() });
  const { matches } = await graph.match({ intent: 'weather in Paris', limit: 5 });
  const activeTools: (string | undefined)[] = matches.map((m) => toolNames.get(m.id.capabilityId));
  const id: string | undefined = capabilityIds.get('get_weather');
  void [activeTools, id];
  // @ts-expect-error a provider needs its ID
  providerFromTools({ name: 'Tools', tools: [] });
  // @ts-expect-error tools are a list or a tool set
  providerFromTools({ providerId: 'tools', name: 'Tools', tools: 'get_weather' });
}
void toolSearch;
