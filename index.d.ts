// Public types of @devcodex/capability-graph (hand-written; `__test__/types` checks them
// against the runtime with `tsc --noEmit`).

// ---------------------------------------------------------------------------------------------
// Errors

/** Every error code. `ErrorCode.X === 'X'`. */
export type ErrorCode =
  | 'CG_CONFIG_INVALID'
  | 'CG_DEFINITION_INVALID'
  | 'CG_RELATION_INVALID'
  | 'CG_RELATION_CYCLE'
  | 'CG_CONTEXT_INVALID'
  | 'CG_INPUT_INVALID'
  | 'CG_ACCESS_DENIED'
  | 'CG_SCOPE_DENIED'
  | 'CG_PROVIDER_NOT_FOUND'
  | 'CG_CAPABILITY_NOT_FOUND'
  | 'CG_REVISION_MISMATCH'
  | 'CG_CATALOG_TOO_LARGE'
  | 'CG_RESULT_TOO_LARGE'
  | 'CG_INPUT_TOO_LARGE'
  | 'CG_BUDGET_EXCEEDED'
  | 'CG_GRAPH_CLOSED'
  | 'CG_RELOAD_FAILED'
  | 'CG_DOCUMENT_ROOT_REQUIRED'
  | 'CG_DOCUMENT_NOT_FOUND'
  | 'CG_DOCUMENT_ACCESS_DENIED'
  | 'CG_DOCUMENT_REFERENCE_ONLY'
  | 'CG_DOCUMENT_TOO_LARGE'
  | 'CG_DOCUMENT_UNREADABLE'
  | 'CG_MODEL_NOT_CONFIGURED'
  | 'CG_MODEL_UNAVAILABLE'
  | 'CG_MODEL_EXECUTOR_UNSAFE'
  | 'CG_MODEL_CONTEXT_EXCEEDED'
  | 'CG_MODEL_OUTPUT_INVALID'
  | 'CG_MODEL_INVALID_SELECTION'
  | 'CG_MODEL_OUTPUT_TOO_LARGE'
  | 'CG_MODEL_REFUSED'
  | 'CG_MODEL_TIMEOUT'
  | 'CG_MODEL_CANCELLED'
  | 'CG_RETRIEVER_UNCONFIGURED'
  | 'CG_RETRIEVER_UNAVAILABLE'
  | 'CG_INDEX_STALE'
  | 'CG_RUNTIME_DISABLED'
  | 'CG_RUNTIME_CONTEXT_REQUIRED'
  | 'CG_RUNTIME_UNAVAILABLE'
  | 'CG_ADAPTER_CONTRACT_INVALID'
  | 'CG_PARTIAL_ITEM'
  | 'CG_KNOWLEDGE_NOT_ASSOCIATED'
  | 'CG_INTERNAL';

/** Where an error arose. `Phase.query === 'query'`. */
export type Phase = 'config' | 'load' | 'query' | 'match' | 'document' | 'lifecycle';

/** What the caller should do next. `NextAction.fix_input === 'fix_input'`. */
export type NextAction = 'fix_input' | 'check_config' | 'refresh' | 'narrow_scope' | 'retry' | 'contact_admin';

export declare const ErrorCode: Readonly<{ [K in ErrorCode]: K }>;
export declare const Phase: Readonly<{ [K in Phase]: K }>;
export declare const NextAction: Readonly<{ [K in NextAction]: K }>;

/** Small, safe facts about an error: config paths, field names, limits, counts. */
export type ErrorDetails = Record<string, unknown>;

/** `GraphError.toJSON()`: keys in this order, absent ones omitted. */
export interface GraphErrorJSON {
  code: ErrorCode;
  phase: Phase;
  message: string;
  nextAction?: NextAction;
  details?: ErrorDetails;
}

export interface GraphErrorInit {
  code: ErrorCode;
  /** Defaults to the code's catalog phase. */
  phase?: Phase | undefined;
  /** Defaults to the code's catalog action. */
  nextAction?: NextAction | undefined;
  /** Defaults to the code's catalog message. */
  message?: string | undefined;
  details?: ErrorDetails | undefined;
}

/**
 * The one error class: every promise of the package rejects with it, and the few synchronous
 * functions throw it. Branch on `code` and `phase`, never on `message`. Its fields are
 * read-only; `details` is a deeply frozen plain-JSON copy whose strings are at most 128
 * characters (longer ones are cut and end with `…`).
 */
export declare class GraphError extends Error {
  /** Throws `CG_INPUT_INVALID` for an unknown code, phase or action, or details that are not plain JSON. */
  constructor(init: GraphErrorInit);
  readonly name: 'GraphError';
  readonly code: ErrorCode;
  readonly phase: Phase;
  readonly nextAction?: NextAction;
  readonly details?: Readonly<ErrorDetails>;
  toJSON(): GraphErrorJSON;
}

// ---------------------------------------------------------------------------------------------
// Identities and definitions

/** `{ providerId, capabilityId }`, the canonical identity of a capability. */
export interface CapabilityId {
  providerId: string;
  capabilityId: string;
}

/** A capability reference: `'provider::capability'` or `{ providerId, capabilityId }`. */
export type CapabilityRef = string | CapabilityId;

/** On a provider-bound graph: also the local ID or `{ capabilityId }`. */
export type BoundCapabilityRef = string | { providerId?: string | undefined; capabilityId: string };

/** How a bound facade's document verbs name their capability: a reference, or a local ID. */
export type BoundCapabilityKey =
  | { capability: BoundCapabilityRef; capabilityId?: never }
  | { capabilityId: string; capability?: never };

export type Locator =
  | { type: 'relative-file'; path: string; root?: string | undefined }
  | { type: 'http'; url: string };

export interface KnowledgeDocumentRef {
  kind: 'document';
  knowledgeId: string;
  locator: Locator;
  role: string;
  locale?: string | undefined;
  title?: string | undefined;
  summary?: string | undefined;
  canonicalUrl?: string | undefined;
}

export interface KnowledgeCollectionRef {
  kind: 'collection';
  knowledgeId: string;
  members: KnowledgeDocumentRef[];
  title?: string | undefined;
  summary?: string | undefined;
}

export type KnowledgeRef = KnowledgeDocumentRef | KnowledgeCollectionRef;

export interface CapabilityDefinition {
  capabilityId: string;
  name: string;
  description: string;
  whenToUse: string;
  distinction?: string | undefined;
  examples?: string[] | undefined;
  parents?: string[] | undefined;
  specializes?: string[] | undefined;
  related?: string[] | undefined;
  requires?: string[] | undefined;
  knowledge?: KnowledgeRef[] | undefined;
  /** For editors: the path or URL of `@devcodex/capability-graph/schema/capability.json`. Ignored by the engine. */
  $schema?: string | undefined;
}

export interface SpecificationDefinition {
  specificationId: string;
  version: string;
  appliesTo?: { software?: string | undefined; versionRange?: string | undefined; conditions?: string | undefined } | undefined;
  documents: KnowledgeDocumentRef[];
}

/** `provider.json` fields plus the capabilities, for inline providers. */
export interface InlineProviderDefinition {
  providerId: string;
  name: string;
  version: string;
  specification?: SpecificationDefinition | undefined;
  capabilities: CapabilityDefinition[];
  /** For editors: the path or URL of `@devcodex/capability-graph/schema/definition.json`. Ignored by the engine. */
  $schema?: string | undefined;
}

// ---------------------------------------------------------------------------------------------
// Configuration

export type KnowledgeRootSpec =
  | { kind: 'directory'; rootDir: string }
  | { kind: 'package'; packageName: string; resolveFrom: string };

export interface InlineProviderSource {
  definition: InlineProviderDefinition;
  /** Trusted root for the provider's relative-file documents. */
  documentRoot?: string | undefined;
  knowledgeRoots?: Record<string, KnowledgeRootSpec> | undefined;
}

export interface FileProviderSource {
  providerId: string;
  authority: {
    kind: 'file';
    rootDir: string;
    definitionLayout?: 'legacy' | 'directory' | undefined;
    /** Watch the root (default `false`): a change of its files, once quiet for 100 ms, reloads
     *  the provider; see `CapabilityGraph.on`. */
    watch?: boolean | undefined;
  };
  knowledgeRoots?: Record<string, KnowledgeRootSpec> | undefined;
}

/** A provider read whole from a database at open and at every reload (see `DatabaseAuthorityAdapter`). */
export interface DatabaseProviderSource {
  providerId: string;
  /** `watch: false` does not subscribe to the adapter's `watch` (subscribed by default when it
   *  has one). */
  authority: { kind: 'database'; adapter: DatabaseAuthorityAdapter; watch?: boolean | undefined };
  knowledgeRoots?: Record<string, KnowledgeRootSpec> | undefined;
}

export type ProviderSource = InlineProviderSource | FileProviderSource | DatabaseProviderSource;

/** Overrides of single budget fields; every group, field and default is in docs/budgets.md. */
export type BudgetOverrides = {
  [Group in
    | 'catalog' | 'detail' | 'neighbors' | 'specification' | 'selection' | 'read'
    | 'retrieveCapabilities' | 'queryKnowledge' | 'runtime' | 'resolve' | 'match' | 'export']?: Record<string, number> | undefined;
} & {
  /** Deadlines and bounds of host components, among the fields of their groups. */
  read?: { readerTimeoutMs?: number | undefined; [field: string]: number | undefined } | undefined;
  retrieveCapabilities?: { timeoutMs?: number | undefined; maxTextBytes?: number | undefined; [field: string]: number | undefined } | undefined;
  queryKnowledge?: { timeoutMs?: number | undefined; maxTextBytes?: number | undefined; [field: string]: number | undefined } | undefined;
  /** A host embedder's deadline per batch (30,000 ms), texts per batch (32, at most 1,024) and
   *  the most bytes of one text it is given (2,048, at most 65,536). */
  match?: { embedTimeoutMs?: number | undefined; embedBatchSize?: number | undefined; maxEmbedTextBytes?: number | undefined; maxQueued?: number | undefined; [field: string]: number | undefined } | undefined;
  /** Every read of a database authority: each adapter call within `callTimeoutMs` (30,000), the
   *  whole read within `readTimeoutMs` (600,000), at most `maxRecords` (2,000,000) capability
   *  records and `maxBytes` (2,147,483,648) of JSON (records and relation stream items). */
  database?: { callTimeoutMs?: number | undefined; readTimeoutMs?: number | undefined; maxRecords?: number | undefined; maxBytes?: number | undefined } | undefined;
};

export interface OpenConfig {
  providers: ProviderSource[];
  /** For editors: the path or URL of `@devcodex/capability-graph/schema/config.json`. Ignored by the engine. */
  $schema?: string | undefined;
  /** Default: every configured provider. */
  hostAllowedProviders?: string[] | undefined;
  /** Default: every configured provider. */
  integrationEnabledProviders?: string[] | undefined;
  budgets?: BudgetOverrides | undefined;
  /** Readers for URL documents, tried in order; without one they are references only. */
  readers?: KnowledgeReader[] | undefined;
  /** Who answers `match`; without one `match` rejects CG_MODEL_NOT_CONFIGURED. */
  executor?: ModelExecutor | LexicalExecutor | SemanticExecutor | undefined;
  /** Who answers `retrieveCapabilities`; without one it rejects CG_RETRIEVER_UNCONFIGURED. */
  capabilityRetriever?: CapabilityRetriever | undefined;
  /** Who will answer `queryKnowledge`; without one it rejects CG_RETRIEVER_UNCONFIGURED. */
  knowledgeRetriever?: KnowledgeRetriever | undefined;
  /** At most one per provider; `queryRuntime` on a provider without one rejects CG_RUNTIME_DISABLED. */
  runtimeAdapters?: RuntimeAdapter[] | undefined;
}

// ---------------------------------------------------------------------------------------------
// Results

export type Completeness = 'complete' | 'truncated' | 'partial';
export type ServedFrom = 'current' | 'previous' | 'mixed';

export interface Warning {
  code: ErrorCode;
  message: string;
  details?: ErrorDetails;
}

export interface ResultMetaBase {
  completeness: Completeness;
  warnings: Warning[];
  /** The effective provider scope of the call, sorted. */
  scope: string[];
  servedFrom: ServedFrom;
  compositeStaticRevision: string;
  /** Present (true) when the latest reload of a provider in scope failed. */
  refreshFailed?: true;
}

/** Exactly one provider in scope: its revision. */
export interface SingleProviderMeta extends ResultMetaBase {
  staticRevision: string;
  staticRevisionByProvider?: undefined;
  servedFromByProvider?: undefined;
}

/** Several providers in scope (and always for `resolveSelection` and `match`, which then also
 *  give `staticRevision` when there is one provider): one revision per provider. */
export interface MultiProviderMeta extends ResultMetaBase {
  staticRevision?: string;
  staticRevisionByProvider: Record<string, string>;
  servedFromByProvider: Record<string, 'current' | 'previous'>;
}

/** Narrow it by checking `staticRevisionByProvider` (or `staticRevision`). */
export type ResultMeta = SingleProviderMeta | MultiProviderMeta;

export interface StaticCapability {
  id: CapabilityId;
  qualifiedId: string;
  name: string;
  description: string;
  whenToUse: string;
  distinction?: string;
  examples: string[];
  parents: CapabilityId[];
  specializes: CapabilityId[];
  related: CapabilityId[];
  requires: CapabilityId[];
  knowledge: KnowledgeRef[];
  staticRevision: string;
}

/** Revision pins: one provider, or one revision per provider the targets name. */
export interface RevisionPins {
  requiredStaticRevision?: string | undefined;
  requiredStaticRevisionByProvider?: Record<string, string> | undefined;
}

export interface ResolveQuery extends RevisionPins {
  /** 1–32 references (`budgets.resolve.maxIds`); duplicates collapse. */
  ids: CapabilityRef[];
  requestProviderScope?: string[] | undefined;
}

export interface BoundResolveQuery extends RevisionPins {
  ids: BoundCapabilityRef[];
}

export interface ResolveResult {
  /** Requested capabilities (input order), then those they require (breadth-first). */
  items: Array<StaticCapability & { reason: { requested: boolean; requiredBy: string[] } }>;
  requested: string[];
  added: string[];
  requiresEdges: Array<{ from: string; to: string }>;
  meta: ResultMeta;
}

export interface ReloadOptions {
  /** Reload only this provider. */
  providerId?: string | undefined;
  /** New definitions for inline providers, keyed by their provider ID. */
  definitions?: Record<string, InlineProviderDefinition> | undefined;
  /** Read database providers even when their view names the `sourceRevision` (with the same
   *  provider record and document root) the current snapshot was read from. */
  force?: boolean | undefined;
}

interface ReloadProviderBase {
  providerId: string;
  staticRevision: string;
  previousStaticRevision?: string;
  servedFrom: 'current';
  refreshFailed: boolean;
}

/** One provider's reload; narrow it by `ok`. */
export type ReloadProviderResult =
  | (ReloadProviderBase & { ok: true; error?: undefined })
  /** `error`: the underlying error of this provider's failed candidate. */
  | (ReloadProviderBase & { ok: false; error: GraphErrorJSON });

/** Narrow it by `ok`: on `false`, `error` is `CG_RELOAD_FAILED` and the previous snapshots stay
 *  in service. */
export type ReloadResult =
  | { ok: true; providers: ReloadProviderResult[]; error?: undefined }
  | { ok: false; providers: ReloadProviderResult[]; error: GraphErrorJSON };

// --- Discovery ---------------------------------------------------------------------------------

/** Verbs that read a whole scope accept a narrower one. */
export interface ScopedQuery extends RevisionPins {
  requestProviderScope?: string[] | undefined;
}

export interface Budgets {
  [budget: string]: number;
}

export interface ProviderSummary {
  providerId: string;
  name: string;
  version: string;
  authorityKind: 'inline' | 'file' | 'database';
  specification?: {
    specificationId: string;
    version: string;
    appliesTo?: { software?: string; versionRange?: string; conditions?: string };
    documentCount: number;
  };
  staticRevision: string;
}

export interface DocumentPage {
  items: KnowledgeDocumentRef[];
  completeness: 'complete' | 'truncated';
  nextCursor?: string;
}

export interface ProviderResult extends ProviderSummary {
  /** The first page of specification documents (metadata only). */
  specificationDocuments?: DocumentPage;
  meta: ResultMeta & { budgets: Budgets };
}

export interface SpecificationDocumentsQuery extends ScopedQuery {
  providerId: string;
  cursor?: string | undefined;
  /** Default 20; larger values are clamped to 100 (`budgets.specification`). */
  limit?: number | undefined;
}

export interface SpecificationDocumentsPage extends DocumentPage {
  providerId: string;
  meta: ResultMeta & { budgets: Budgets };
}

/** A row of the catalog and of neighbour groups. */
export interface CatalogRecord {
  id: CapabilityId;
  qualifiedId: string;
  providerId: string;
  name: string;
  description: string;
  whenToUse: string;
  staticRevision: string;
  distinction?: string;
}

export interface CatalogQuery extends ScopedQuery {
  /** Plain `startsWith` on the capability ID. */
  capabilityIdPrefix?: string | undefined;
  /** Direct children of this capability only. */
  parent?: CapabilityRef | undefined;
  cursor?: string | undefined;
  /** Default and maximum `budgets.catalog.maxItems` (200); larger values are clamped. */
  limit?: number | undefined;
}

export interface CatalogPage {
  items: CatalogRecord[];
  meta: ResultMeta & {
    filter: { scope: string[]; prefix: string | null; parent: CapabilityId | null; limit: number };
    budgets: Budgets;
  };
  nextCursor?: string;
}

export type NeighborKind =
  | 'parents' | 'children' | 'specializes' | 'specializedBy'
  | 'related' | 'relatedBy' | 'requires' | 'requiredBy';

export interface ViewEntry {
  id: CapabilityId;
  staticRevision: string;
}

export interface CapabilityDetailQuery extends ScopedQuery {
  /** Default 50, 0 allowed, clamped to 100. */
  neighborLimitPerKind?: number | undefined;
  /** Default 20, clamped to 100. */
  knowledgeLimit?: number | undefined;
  /** Continue a capability's knowledge page: qualified ID → its `nextCursor`. */
  knowledgeCursors?: Record<string, string> | undefined;
}

export type KnowledgeSummary =
  | KnowledgeDocumentRef
  | { kind: 'collection'; knowledgeId: string; title?: string; summary?: string; memberCount: number };

export interface CapabilityDetail {
  id: CapabilityId;
  qualifiedId: string;
  name: string;
  description: string;
  whenToUse: string;
  distinction?: string;
  staticRevision: string;
  examples: string[];
  neighborSummaries: Record<NeighborKind, { items: Array<{ id: CapabilityId; name: string }>; completeness: 'complete' | 'truncated' }>;
  knowledge: { items: KnowledgeSummary[]; completeness: 'complete' | 'truncated'; nextCursor?: string };
}

/** One slot per input, in input order; check `ok`. */
export type BatchItem<T> =
  | { inputIndex: number; ok: true; value: T }
  | { inputIndex: number; ok: false; error: GraphErrorJSON };

export interface CapabilityDetails {
  results: Array<BatchItem<CapabilityDetail>>;
  meta: ResultMeta & { budgets: Budgets; view: { capabilities: ViewEntry[] } };
}

export interface NeighborQuery extends ScopedQuery {
  /** Default: all eight, in their fixed order. */
  kinds?: NeighborKind[] | undefined;
  /** Default 50, clamped to 100. */
  limitPerKind?: number | undefined;
  /** Continue a group: kind → its `nextCursor` (the kind must be requested). */
  cursors?: Partial<Record<NeighborKind, string>> | undefined;
}

export interface NeighborGroup {
  items: CatalogRecord[];
  completeness: Completeness;
  nextCursor?: string;
}

export interface NeighborPage {
  id: CapabilityId;
  groups: Record<NeighborKind, NeighborGroup>;
  meta: ResultMeta & { filter: { kinds: NeighborKind[] }; budgets: Budgets; view: { capabilities: ViewEntry[] } };
}

export interface KnowledgeMembersQuery extends ScopedQuery {
  capability: CapabilityRef;
  collectionId: string;
  cursor?: string | undefined;
  /** Default 20, clamped to 100. */
  limit?: number | undefined;
}

export interface KnowledgeMembersPage extends DocumentPage {
  id: CapabilityId;
  collectionId: string;
  meta: ResultMeta & { budgets: Budgets; view: { capabilities: ViewEntry[] } };
}

export interface SelectionQuery extends ScopedQuery {
  /** 1–32 references (`budgets.selection.maxSelected`). */
  selected: CapabilityRef[];
}

export interface SelectionResult {
  requested: CapabilityId[];
  /** Every capability of the closure, sorted by qualified ID. */
  resolved: CapabilityId[];
  added: CapabilityId[];
  requiresEdges: Array<{ from: CapabilityId; to: CapabilityId }>;
  reasons: Array<{ id: CapabilityId; reason: { requested: boolean; requiredBy: CapabilityId[] } }>;
  meta: MultiProviderMeta & { budgets: Budgets; view: { capabilities: ViewEntry[] } };
}

// --- Documents ---------------------------------------------------------------------------------

export interface DocumentFilters {
  /** Read these documents (collection members only when named here). */
  knowledgeIds?: string[] | undefined;
  roles?: string[] | undefined;
  /** BCP 47 tags, matched exactly after canonical casing. */
  locales?: string[] | undefined;
}

export interface ReadDocumentsQuery extends ScopedQuery, DocumentFilters {
  /** 1–32 capabilities (`budgets.read.maxSelected`). */
  selected: CapabilityRef[];
}

export interface DocumentRead {
  id: CapabilityId;
  knowledgeId: string;
  contentId: string;
  source: string;
  contentType: string;
  text: string;
  byteLength: number;
  role: string;
  locale?: string;
  title?: string;
  summary?: string;
  canonicalUrl?: string;
}

export type SpecificationDocumentRead = Omit<DocumentRead, 'id'> & { providerId: string };

export type KnowledgeState = 'not_associated' | 'filtered_empty' | 'matched';

export interface DocumentReadBatch {
  results: Array<BatchItem<DocumentRead>>;
  knowledgeState: KnowledgeState;
  meta: ResultMeta & {
    budgets: Budgets;
    view: { capabilities: ViewEntry[]; knowledge: Array<{ id: CapabilityId; knowledgeId: string; contentId: string }> };
  };
}

export interface ReadSpecificationQuery extends ScopedQuery, DocumentFilters {
  providerId: string;
}

export interface SpecificationReadBatch {
  results: Array<BatchItem<SpecificationDocumentRead>>;
  knowledgeState: KnowledgeState;
  meta: ResultMeta & { budgets: Budgets };
}

export interface PageQuery extends ScopedQuery {
  knowledgeId: string;
  /** Byte offset on a character boundary; exclusive with `cursor`. */
  startOffset?: number | undefined;
  /** At most `budgets.read.maxBytes` (32 KiB, the default). */
  maxBytes?: number | undefined;
  cursor?: string | undefined;
  /**
   * Cancels the read: it settles at once with `CG_DOCUMENT_UNREADABLE` (`retry`); a host
   * reader receives it with the read.
   */
  signal?: AbortSignal | undefined;
}

export interface DocumentPageQuery extends PageQuery {
  capability: CapabilityRef;
}

export interface SpecificationPageQuery extends PageQuery {
  providerId: string;
}

export interface DocumentBodyPage {
  /** Absent for specification documents. */
  id?: CapabilityId;
  providerId: string;
  knowledgeId: string;
  /** The whole document's content ID. */
  contentId: string;
  /** This page's bytes' content ID. */
  pageContentId: string;
  source: string;
  contentType: string;
  text: string;
  byteLength: number;
  startOffset: number;
  /** Exclusive. */
  endOffset: number;
  totalBytes: number;
  complete: boolean;
  hasMore: boolean;
  nextCursor?: string;
  meta: ResultMeta & { budgets: Budgets };
}

/** A host reader for documents the engine does not read itself (URL locators). Here as in
 *  every host component, an optional method given as `undefined` is absent. */
export interface KnowledgeReader {
  id: string;
  canRead(ref: KnowledgeDocumentRef): boolean;
  /**
   * Optional: the document in chunks of at most `chunkBytes`, each with the same `source` (the
   * document's URL) and one non-blank `contentType`; an empty document is one empty chunk.
   * Page reads use it, so documents of any size can be paged. The whole stream must end within
   * `budgets.read.readerTimeoutMs`; `signal` is aborted by then, by the caller's page-read signal
   * and when `close()` settles the call.
   */
  stream?:
    | ((
        ref: KnowledgeDocumentRef,
        context: { providerId: string; staticRevision: string },
        options: { chunkBytes: number; signal: AbortSignal },
      ) => AsyncIterable<{ bytes: Uint8Array; contentType: string; source: string }>)
    | undefined;
  /** Must settle within `budgets.read.readerTimeoutMs` (10 s), else the document is
   *  CG_DOCUMENT_UNREADABLE/retry; `signal` is aborted then, and when `close()` settles the call. */
  read(
    ref: KnowledgeDocumentRef,
    context: { providerId: string; staticRevision: string },
    budget: { maxBytes: number; signal: AbortSignal },
  ): Promise<{ bytes: Uint8Array; contentType: string; source: string; contentId?: string | undefined }>;
}

// --- Match -------------------------------------------------------------------------------------

/** Facts for the model: at most 32 keys (1–64 bytes), scalar values (strings ≤ 1 KiB). */
export type MatchContext = Record<string, string | number | boolean | null>;

export interface MatchQuery extends ScopedQuery {
  /** Non-blank, at most `budgets.match.maxIntentBytes` (4 KiB). */
  intent: string;
  context?: MatchContext | undefined;
  /** Most selections the executor may return: default 5, clamped to 20. */
  limit?: number | undefined;
  /** Which question is asked: `'accept'` (the default), the capabilities that fit or an honest
   *  `no_match`; `'rank'`, the best `limit` candidates, `matched` while any candidate has
   *  evidence (tool search). The built-in executors honour it; a host executor that cannot rank
   *  answers as in accept mode. Anything else is CG_INPUT_INVALID (`field: 'mode'`). */
  mode?: MatchMode | undefined;
  /** Default 60,000; clamped to `budgets.match.maxTimeoutMs` (600,000). */
  timeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
}

export type MatchStatus = 'matched' | 'no_match' | 'unknown' | 'partial' | 'empty';

/** `'accept'`: the capabilities that fit, or `no_match`. `'rank'`: the best few, every time. */
export type MatchMode = 'accept' | 'rank';

export interface MatchedCapability {
  id: CapabilityId;
  qualifiedId: string;
  reason?: string;
  confidence?: number;
}

export type MatchMeta = MultiProviderMeta & { executor: { id: string }; candidates: number };

/** Narrow it by `status`: `matched` and `partial` carry the matches (in the executor's order)
 *  and `resolution`, `resolve()` of them (`partial`: its closure was cut by its budget); the
 *  others carry no match. A `no_match` carries `nearest`: the refused candidates closest to
 *  fitting, best first, at most three (`[]` when none had evidence, or a host executor named
 *  none); no other status has it. */
export type MatchResult =
  | { status: 'matched' | 'partial'; matches: MatchedCapability[]; resolution: ResolveResult; nearest?: undefined; meta: MatchMeta }
  | { status: 'no_match'; matches: []; nearest: MatchedCapability[]; resolution?: undefined; meta: MatchMeta }
  | { status: 'unknown' | 'empty'; matches: []; resolution?: undefined; nearest?: undefined; meta: MatchMeta };

/** What an executor receives (a fresh plain object per call). */
export interface MatchRequest {
  intent: string;
  context: MatchContext;
  limit: number;
  /** The caller's mode: in `'rank'` answer the best `limit` candidates (`matched`) unless none
   *  relates to the intent; an executor that cannot rank may answer as in `'accept'`. */
  mode: MatchMode;
  /** Epoch milliseconds. */
  deadline: number;
  candidates: Array<{ qualifiedId: string; name: string; description: string; whenToUse: string; distinction?: string; examples: string[] }>;
}

/** What an executor returns; anything else is rejected with a CG_MODEL_* code. */
export interface MatchOutput {
  status: 'matched' | 'no_match' | 'unknown' | 'refused';
  selections: Array<{ id: string; reason?: string | undefined; confidence?: number | undefined }>;
  /** Only with `no_match`: at most three candidates closest to fitting, best first, checked like
   *  selections (more than three: CG_MODEL_OUTPUT_TOO_LARGE; malformed or duplicated:
   *  CG_MODEL_OUTPUT_INVALID; not a candidate: CG_MODEL_INVALID_SELECTION). */
  nearest?: Array<{ id: string; reason?: string | undefined; confidence?: number | undefined }> | undefined;
}

/** A model executor: any object with an `id` and `match()`. Throw a GraphError (or any value with
 *  a string `code`) to report a CG_MODEL_* failure; everything else becomes CG_MODEL_UNAVAILABLE. */
export interface ModelExecutor {
  id: string;
  match(request: MatchRequest, options: { signal: AbortSignal }): MatchOutput | Promise<MatchOutput>;
}

/** The built-in offline lexical executor (a marker the engine recognises). */
export interface LexicalExecutor {
  readonly id: 'lexical';
  readonly options: { readonly minScore: number };
}

/** Where the semantic executor's vectors come from when the host has its own model: `embed`
 *  answers a `Float32Array` of `texts.length × dimensions` (rows need not be normalised). A
 *  throw, a rejection, a wrong length, a non-finite or all-zero row, anything but a
 *  `Float32Array` and a missed `budgets.match.embedTimeoutMs` are CG_MODEL_UNAVAILABLE / retry.
 *  `id` names the model (segments of letters, digits, `.`, `_`, `-` joined by `/`; at most 128
 *  bytes): vectors are cached,
 *  and read from a provider's `vectors/<id>.bin`, under it. */
export interface Embedder {
  id: string;
  /** 1–4096. */
  dimensions: number;
  embed(texts: string[], options: { signal: AbortSignal }): Float32Array | Promise<Float32Array>;
}

/** The built-in semantic executor (a marker the engine recognises). */
export interface SemanticExecutor {
  readonly id: 'semantic';
  readonly options: { readonly minScore: number; readonly signals: 'fused' | 'dense' };
}

// --- Capability retrieval ------------------------------------------------------------------------

export interface RetrieveCapabilitiesQuery extends ScopedQuery {
  /** Non-blank, at most `budgets.retrieveCapabilities.maxTextBytes` (4 KiB). */
  text: string;
  /** Default and maximum `budgets.retrieveCapabilities.maxCandidates` (20); larger values are clamped. */
  limit?: number | undefined;
}

export interface CapabilityCandidate {
  id: CapabilityId;
  qualifiedId: string;
  /** The retriever's score, passed on as given (never normalised, never used to re-sort). */
  score?: number;
  /** The candidate's 1-based position in the retriever's answer; rejected candidates leave gaps. */
  rank: number;
}

export interface RetrieveCapabilitiesPage {
  /** In the retriever's order; only existing, in-scope capabilities at the served revision. */
  items: CapabilityCandidate[];
  /** `partial` with one warning (`details.adapterIndex`) per rejected candidate. */
  meta: ResultMeta & { budgets: Budgets; view: { capabilities: ViewEntry[] } };
}

/** What a capability retriever receives (a fresh plain object per call). */
export interface CapabilityRetrievalRequest {
  text: string;
  /** The call's effective scope, sorted. */
  providerIds: string[];
  /** The revision the call serves for each provider in scope. */
  staticRevisionByProvider: Record<string, string>;
  limit: number;
}

export interface CapabilityRetrievalOutput {
  /** At most `limit`, best first. */
  candidates: Array<{
    /** Qualified ID or `{ providerId, capabilityId }`, also on a bound facade. */
    id: CapabilityRef;
    /** A finite number. */
    score?: number | undefined;
    /** The revision the retriever's index was built from; another than the served one is stale. */
    sourceStaticRevision: string;
  }>;
}

/** A host search over capabilities (`capabilityRetriever`). It can only name capabilities that
 *  exist: every candidate is checked. Throw a value with a string `code` to report a failure; a
 *  few codes pass through, everything else becomes CG_RETRIEVER_UNAVAILABLE. No deadline is set. */
export interface CapabilityRetriever {
  id: string;
  /** Must settle within `budgets.retrieveCapabilities.timeoutMs` (30 s), else
   *  CG_RETRIEVER_UNAVAILABLE/retry; `options.signal` is aborted then, and when `close()` settles
   *  the pending call. */
  retrieve(request: CapabilityRetrievalRequest, options: { signal: AbortSignal }): CapabilityRetrievalOutput | Promise<CapabilityRetrievalOutput>;
}

// --- Knowledge retrieval -------------------------------------------------------------------------

export interface QueryKnowledgeQuery extends ScopedQuery, DocumentFilters {
  /** Non-blank, at most `budgets.queryKnowledge.maxTextBytes` (4 KiB). */
  text: string;
  /** 1–32 capabilities (`budgets.queryKnowledge.maxSelected`) whose documents are searched. */
  selected: CapabilityRef[];
  /** Default and maximum `budgets.queryKnowledge.maxHits` (8). */
  limit?: number | undefined;
}

/** A snippet a knowledge retriever found: byte offsets (UTF-8, end exclusive) into the document. */
export interface KnowledgeHit {
  id: CapabilityId;
  knowledgeId: string;
  contentId: string;
  source: string;
  startOffset: number;
  endOffset: number;
  snippet: string;
  score?: number | undefined;
}

/** A checked hit, with the document's metadata from the capability's knowledge mapping. */
export interface KnowledgeResultHit extends KnowledgeHit {
  role: string;
  locale?: string;
  title?: string;
  summary?: string;
  canonicalUrl?: string;
}

export interface QueryKnowledgePage {
  items: KnowledgeResultHit[];
  knowledgeState: 'searched' | 'empty_collection' | 'filtered_empty';
  /** When the retriever was asked: the evidence its index was checked against. */
  indexStatus?: { mappingRevision: string; observedAt: string; freshness: 'current'; validatedDocuments: number };
  meta: ResultMeta & {
    budgets: Budgets;
    view: { capabilities: ViewEntry[]; knowledge: Array<{ id: CapabilityId; knowledgeId: string; contentId: string }> };
  };
}

/** A document a knowledge retriever may search. */
export interface KnowledgeSearchTarget {
  id: CapabilityId;
  knowledgeId: string;
  locator: Locator;
  /** The collections that brought this document in, sorted. */
  viaCollectionIds: string[];
  role: string;
  locale?: string;
  title?: string;
  summary?: string;
  canonicalUrl?: string;
}

/** Proof that the retriever's index matches the sources it was asked about. */
export interface KnowledgeIndexEvidence {
  staticRevisionByProvider: Record<string, string>;
  mappingRevision: string;
  observedAt: string;
  freshness: 'current' | 'stale' | 'unknown';
  sourceConfigRevision: string;
  indexedConfigRevision: string;
  documents: Array<{ id: CapabilityId; knowledgeId: string; sourceContentId: string; indexedContentId: string }>;
}

/** Reads of the call's targets through the engine, valid only while `retrieve` runs. A target
 *  is `{ id, knowledgeId }` and nothing else; the content read is what the evidence and hits are
 *  checked against. */
export interface KnowledgeRetrievalAccess {
  /** Aborted when the call is settled without the retriever's answer: past
   *  `budgets.queryKnowledge.timeoutMs` (30 s, CG_RETRIEVER_UNAVAILABLE/retry) or by `close()`. */
  readonly signal: AbortSignal;
  /** At most `min(budget.maxBytes, budgets.read.maxResponseBytes)` bytes. */
  read(
    target: { id: CapabilityId; knowledgeId: string },
    budget: { maxBytes: number },
  ): Promise<{ bytes: Uint8Array; contentType: string; contentId: string; source: string }>;
  /** The whole document, of any size, in chunks of at most `chunkBytes` (default and cap
   *  `budgets.read.maxBytes`) cut on character boundaries, each awaited in order. A URL
   *  document is handed on while its reader's `stream()` delivers it (within
   *  `budgets.read.readerTimeoutMs`, `consume` included); a reader without `stream()` reads it
   *  whole, up to `budgets.read.maxResponseBytes`. */
  scan(
    target: { id: CapabilityId; knowledgeId: string },
    consume: (bytes: Uint8Array, startOffset: number) => void | Promise<void>,
    options?: { chunkBytes?: number | undefined; signal?: AbortSignal | undefined },
  ): Promise<{ contentId: string; totalBytes: number; contentType: string; source: string }>;
}

/** What a knowledge retriever receives. */
export interface KnowledgeRetrievalRequest {
  text: string;
  /** Only the providers the targets belong to. */
  staticRevisionByProvider: Record<string, string>;
  mappingRevision: string;
  targets: KnowledgeSearchTarget[];
  limit: number;
}

export interface KnowledgeRetrievalOutput {
  hits: KnowledgeHit[];
  /** Required even with no hits: an empty answer never proves the index fresh. */
  evidence: KnowledgeIndexEvidence;
}

/** A host search over knowledge documents (`knowledgeRetriever`). Its evidence must prove the
 *  index holds exactly the targets sent, at the content the engine reads now (else
 *  CG_INDEX_STALE / CG_REVISION_MISMATCH); a hit that is not those bytes is dropped with a warning. */
export interface KnowledgeRetriever {
  id: string;
  retrieve(request: KnowledgeRetrievalRequest, access: KnowledgeRetrievalAccess): KnowledgeRetrievalOutput | Promise<KnowledgeRetrievalOutput>;
}

// --- Runtime -------------------------------------------------------------------------------------

export interface QueryRuntimeQuery extends ScopedQuery {
  /** Non-blank; with `environment` required (CG_RUNTIME_CONTEXT_REQUIRED); each at most 256 bytes. */
  project: string;
  environment: string;
  /** Only instances of this capability; its provider is the call's provider. */
  instanceOf?: CapabilityRef | undefined;
  instanceId?: string | undefined;
  /** A `nextCursor` of the same query. */
  cursor?: string | undefined;
  /** Default 50, clamped to 100 (`budgets.runtime`). */
  limit?: number | undefined;
  /** The observation must carry this runtime revision, else CG_REVISION_MISMATCH. */
  requiredRuntimeRevision?: string | undefined;
}

export interface RuntimeAssociation {
  kind: string;
  targetInstanceId?: string | undefined;
  facts?: Record<string, unknown> | undefined;
}

/** A running instance of a capability. Its identity is (providerId, project, environment, instanceId). */
export interface RuntimeInstance {
  instanceId: string;
  providerId: string;
  project: string;
  environment: string;
  instanceOf: CapabilityId;
  /** At most `budgets.runtime.maxFactsBytes` (4 KiB) as JSON. */
  facts: Record<string, unknown>;
  /** Runtime context only, never graph relations; at most `budgets.runtime.maxAssociationBytes` (2 KiB). */
  associations?: RuntimeAssociation[] | undefined;
}

/** The adapter's statement about what it observed; the engine checks it but never computes it. */
export interface RuntimeObservation {
  source: string;
  /** ISO 8601 date-time with `Z` or an offset. */
  observedAt: string;
  runtimeRevision: string;
  /** The static revision the running system was built from (not a copy of the request's). */
  observedAgainstStaticRevision: string;
  compatibility: 'compatible' | 'unknown' | 'refresh_required';
  /** `empty`: no instances and no cursor; `available`: at least one instance. */
  availability: 'available' | 'empty' | 'partial';
  /** `stale` does not change `completeness`. */
  freshness: 'current' | 'stale';
  sourceIdentity?: string | undefined;
  coverage?: string | undefined;
  freshnessLimit?: string | undefined;
}

export interface QueryRuntimePage {
  items: RuntimeInstance[];
  /** As the adapter stated it, unknown fields dropped. */
  observation: RuntimeObservation;
  /** Bound to the query, the static revision and the observation's runtime revision. */
  nextCursor?: string;
  /** `partial` when instances were rejected (one warning each) or the observation is partial. */
  meta: ResultMeta & {
    budgets: Budgets;
    view: {
      capabilities: ViewEntry[];
      runtime: {
        runtimeRevision: string;
        observedAgainstStaticRevision: string;
        queriedStaticRevision: string;
        compatibility: RuntimeObservation['compatibility'];
      };
    };
  };
}

/** What a runtime adapter receives (a fresh plain object per call). */
export interface RuntimeRequest {
  project: string;
  environment: string;
  instanceOf?: CapabilityId;
  instanceId?: string;
  /** The static revision the call serves. */
  currentStaticRevision: string;
  limit: number;
  /** The adapter's own `nextCursor` from the previous page. */
  cursor?: string;
}

export interface RuntimeAdapterOutput {
  /** At most `limit`; each must match the request's provider, project, environment and filters. */
  instances: Array<Omit<RuntimeInstance, 'instanceOf'> & { instanceOf: CapabilityRef }>;
  observation: RuntimeObservation;
  /** Non-blank and different from the cursor received. */
  nextCursor?: string | undefined;
}

/** Observes running instances of one provider's capabilities (`runtimeAdapters`). It must answer
 *  within `budgets.runtime.timeoutMs` (5 s), else the call is CG_RUNTIME_UNAVAILABLE; it is not
 *  cancelled. Throw a value with a string `code` to report a failure; a few codes pass through,
 *  everything else becomes CG_RUNTIME_UNAVAILABLE. */
export interface RuntimeAdapter {
  id: string;
  providerId: string;
  /** Past `budgets.runtime.timeoutMs` the call is no longer awaited (it is not cancelled). */
  query(request: RuntimeRequest): RuntimeAdapterOutput | Promise<RuntimeAdapterOutput>;
}

// --- Database authority --------------------------------------------------------------------------

export interface DatabasePageRequest {
  limit: number;
  cursor?: string;
}

export type DatabasePage<T> = DatabaseItemsPage<T> | DatabaseTextPage;

interface DatabasePageCursor {
  /** Must advance (non-empty, never one the same list gave before) and come with at least one
   *  item (else `invalid_store_page`); absent (or null) on the last page. Any other value is
   *  CG_ADAPTER_CONTRACT_INVALID. */
  nextCursor?: string | null | undefined;
}

export interface DatabaseItemsPage<T> extends DatabasePageCursor {
  /** At most the request's `limit` (else `invalid_store_page`). */
  items: T[];
  itemsJson?: undefined;
}

/** A page whose items come as one JSON array text, parsed by the engine instead of walked in
 *  JavaScript (e.g. the JSON text a database prints). Judged exactly as `items` would be; text
 *  that is not one JSON array (or not well-formed) is CG_ADAPTER_CONTRACT_INVALID. */
export interface DatabaseTextPage extends DatabasePageCursor {
  itemsJson: string;
  items?: undefined;
}

/** A change `changedSince` lists: the capability's definition now (changed or added), or its
 *  removal. */
export type DatabaseChange =
  | { capabilityId: string; record: CapabilityDefinition }
  | { capabilityId: string; removed: true };

/** A precomputed vector a view's `vectors()` lists: the entry of a vectors file
 *  (`readVectorsFile` gives them as these). Used only when `textHash` is the hash of the
 *  capability's text today for the model asked for; never trusted otherwise. */
export interface VectorEntry {
  capabilityId: string;
  /** 32 lowercase hex digits: the first 16 bytes of blake3 over the model ID's length (u64 LE)
   *  and bytes, the dimensions (u64 LE) and the text embedded. */
  textHash: string;
  /** Finite, > 0, ≤ 1: component = int8 × scale. */
  scale: number;
  /** The base64 of `dimensions` int8 components. */
  vector: string;
}

/** What `readVectorsFile` finds in a vectors file. */
export interface VectorsFile {
  modelId: string;
  dimensions: number;
  entries: VectorEntry[];
}

/** An edge of the bulk relation scan: `from`'s `kind` list holds `to`. Endpoints are local IDs
 *  or `{ providerId, capabilityId }` of the view's provider. */
export interface DatabaseRelation {
  from: string | CapabilityId;
  kind: NeighborKind;
  to: string | CapabilityId;
}

/** One consistent read of a provider: every call must see the same data. `provider`,
 *  `sourceRevision` and `knowledgeRootDir` are read when the view opens and must not change
 *  before the scans end (else CG_REVISION_MISMATCH, `source_context_changed`). The edges are
 *  read through `scanRelations` when the view has it, else through `neighbors`, else not at all
 *  (the definitions' own relations are the edges, as for files). */
export interface DatabaseReadView {
  /** `provider.json` fields; `providerId` must be the configured one. */
  provider: Omit<InlineProviderDefinition, 'capabilities'>;
  /** Names the state the view reads; non-blank. The adapter must change it with every committed
   *  change: a reload whose view names the revision (and provider record and document root) the
   *  current snapshot was read from reads nothing more and publishes nothing. */
  sourceRevision: string;
  /** The trusted folder for the provider's relative-file documents without a `root` alias. */
  knowledgeRootDir?: string | undefined;
  /** Capability definitions in strictly increasing `capabilityId` order; asked for pages of up to
   *  1,000 items (and `maxBytes`). */
  scanCapabilities(page: DatabasePageRequest & { maxBytes: number }): DatabasePage<CapabilityDefinition> | Promise<DatabasePage<CapabilityDefinition>>;
  /** Endpoints in ID order, as local IDs or `{ providerId, capabilityId }` of the view's provider,
   *  item by item: exactly the edges the definitions declare or imply (a stream longer than the
   *  provider's capabilities is `neighbor_stream_unbounded`). */
  neighbors?: ((capabilityId: string, kind: NeighborKind, page: DatabasePageRequest) => DatabasePage<string | CapabilityId> | Promise<DatabasePage<string | CapabilityId>>) | undefined;
  /** Every edge of the eight streams at once, by `from` in ID order, then `kind` in the order of
   *  `parents`, `children`, `specializes`, `specializedBy`, `related`, `relatedBy`, `requires`,
   *  `requiredBy`, then `to` in ID order; checked as the streams would be. Asked for pages of up
   *  to 10,000 items and 1 MiB. */
  scanRelations?: ((page: DatabasePageRequest & { maxBytes: number }) => DatabasePage<DatabaseRelation> | Promise<DatabasePage<DatabaseRelation>>) | undefined;
  /** What changed since `sourceRevision` (the revision the current snapshot was read from): every
   *  capability written or removed since, once, in strictly increasing `capabilityId` order, or
   *  `{ unknown: true }` as the first page (the provider is then read whole). A reload then reads
   *  only these, and the streams (`neighbors`) of the capabilities they touch; the rest comes
   *  from the records the snapshot kept, and the whole candidate is validated. */
  changedSince?:
    | ((
        sourceRevision: string,
        page: DatabasePageRequest & { maxBytes: number },
      ) => DatabasePage<DatabaseChange> | { unknown: true } | Promise<DatabasePage<DatabaseChange> | { unknown: true }>)
    | undefined;
  /** Optional: precomputed vectors of `modelId` (the semantic executor's), in strictly
   *  increasing `capabilityId` order, at most one per capability; asked for after the scans, only
   *  by the semantic executor, in pages of up to 1,000 items (and `maxBytes`), counted against
   *  `budgets.database.maxBytes`. An incremental read asks for the changed records only
   *  (`capabilityIds`, at most 1,000; more changes ask for all). Never fails the read: a throw, a
   *  missed deadline, a page breaking the page or entry rules, or more entries than records has
   *  them ignored (`graph.status()` says why) and the provider embedded as if it had none. */
  vectors?:
    | ((
        modelId: string,
        page: DatabasePageRequest & { maxBytes: number; capabilityIds?: string[] },
      ) => DatabasePage<VectorEntry> | Promise<DatabasePage<VectorEntry>>)
    | undefined;
  /** Called once the view was read (or found unchanged), also after a failure. */
  close?: (() => void | Promise<void>) | undefined;
}

/** The authority of a database provider. The engine reads the provider whole through a view at
 *  open and at every reload whose view names another state, and checks it like files plus the
 *  scan order and every relation list read; a thrown value becomes CG_CONFIG_INVALID (phase `load`) unless its `code` passes through.
 *  Every call has `budgets.database.callTimeoutMs` and the whole read `readTimeoutMs`; see
 *  `BudgetOverrides['database']` for its bounds. */
export interface DatabaseAuthorityAdapter {
  id: string;
  openView(providerId: string): DatabaseReadView | Promise<DatabaseReadView>;
  /** Optional: tells the graph when the provider may have changed, by calling `onChange()`
   *  (once as soon as it listens, since a change may have come before; then after every
   *  committed change). The promise stays pending while it listens: it resolves once `signal`
   *  aborts (at `close()`), and a rejection or an earlier end is a lost watch, reported and
   *  subscribed again with backoff. It must not keep the process alive on its own. */
  watch?: ((providerId: string, onChange: () => void, options: { signal: AbortSignal }) => Promise<void>) | undefined;
}

/** What `on('reload')` listeners are told: a provider's reload (the host's own or one a watch
 *  asked for) with its entry, published or not, or a lost watch (`ok: false`, no `entry`). */
export type ReloadEvent =
  | { providerId: string; ok: true; trigger: 'reload' | 'watch'; entry: ReloadProviderResult & { ok: true }; error?: undefined }
  | { providerId: string; ok: false; trigger: 'reload' | 'watch'; entry: ReloadProviderResult & { ok: false }; error: GraphError }
  | { providerId: string; ok: false; trigger: 'watch'; entry?: undefined; error: GraphError };

/** What became of a provider's precomputed vectors (its vectors file, or its database view's
 *  `vectors()`) when the semantic executor planned its current snapshot's build. */
export interface PrecomputedVectorsStatus {
  /** `null` when the provider offered none. */
  source: 'file' | 'view' | null;
  /** `used`: every entry read matched a capability's text; `partial`: some were stale; `stale`:
   *  none did; `ignored`: see `reason`; `absent`: none offered (or the view listed none). */
  state: 'used' | 'partial' | 'stale' | 'ignored' | 'absent';
  /** Why they were ignored whole (then none is used). */
  reason: 'corrupt' | 'truncated' | 'foreign' | 'too_large' | 'failed' | 'timeout' | null;
  /** Entries read; `used + stale`. */
  entries: number;
  /** Entries matching a capability's text today. */
  used: number;
  /** Entries matching none (text changed, another model, a removed capability). */
  stale: number;
  /** Capabilities the snapshot embeds: neither the entries nor an earlier snapshot held their text. */
  embedded: number;
}

export interface GraphStatus {
  /** In config order; `vectors` is `null` without the semantic executor and until it has planned
   *  the provider's build (the first-party encoder still loading, or unavailable). */
  providers: { providerId: string; vectors: PrecomputedVectorsStatus | null }[];
}

// ---------------------------------------------------------------------------------------------
// Graphs

export declare class CapabilityGraph {
  private constructor();
  /** Validates the config, loads every provider completely, and resolves the open graph. */
  static open(config: OpenConfig): Promise<CapabilityGraph>;
  /**
   * Opens the command line's config file (`capability-graph.json`, docs/cli.md) as its graph
   * commands open it: at most 1 MiB of JSON holding an {@link OpenConfig} (a UTF-8 byte order mark
   * allowed), file roots relative to the file's folder, `"executor": { "kind": "lexical" | "semantic"
   * | "codex", … }` made that built-in executor (a semantic `embedder` names a module relative to
   * the file whose default export is the host embedder), and the `mcp` block ignored. A file that
   * is missing, too large or not a JSON object rejects `CG_CONFIG_INVALID` (phase `config`,
   * message "Cannot read a valid bounded JSON configuration file"); anything wrong inside it
   * rejects the error the command line reports for it. No error names the path.
   */
  static openConfigFile(path: string): Promise<CapabilityGraph>;
  /** A facade restricted to one configured provider (throws `CG_PROVIDER_NOT_FOUND`). */
  forProvider(providerId: string): BoundProviderGraph;
  /** Capabilities plus the closure of what they require. */
  resolve(query: ResolveQuery): Promise<ResolveResult>;
  listProviders(query?: ScopedQuery): Promise<{ items: ProviderSummary[]; meta: ResultMeta }>;
  getProvider(providerId: string, query?: ScopedQuery): Promise<ProviderResult>;
  listSpecificationDocuments(query: SpecificationDocumentsQuery): Promise<SpecificationDocumentsPage>;
  /** The catalog in provider then capability ID order, paged by count and bytes. */
  listCatalog(query?: CatalogQuery): Promise<CatalogPage>;
  getCapabilities(ids: CapabilityRef[], query?: CapabilityDetailQuery): Promise<CapabilityDetails>;
  getNeighbors(id: CapabilityRef, query?: NeighborQuery): Promise<NeighborPage>;
  listKnowledgeMembers(query: KnowledgeMembersQuery): Promise<KnowledgeMembersPage>;
  /** The selection plus everything it requires, all or nothing. */
  resolveSelection(query: SelectionQuery): Promise<SelectionResult>;
  /** Whole documents of the selected capabilities, one slot each. */
  readDocuments(query: ReadDocumentsQuery): Promise<DocumentReadBatch>;
  readSpecification(query: ReadSpecificationQuery): Promise<SpecificationReadBatch>;
  /** One page of a capability document of any size. */
  readDocumentPage(query: DocumentPageQuery): Promise<DocumentBodyPage>;
  readSpecificationPage(query: SpecificationPageQuery): Promise<DocumentBodyPage>;
  /** Turns an intent into capabilities with the configured executor. */
  match(query: MatchQuery): Promise<MatchResult>;
  /** Capabilities the configured retriever recalls for a text: a search, not a selection. */
  retrieveCapabilities(query: RetrieveCapabilitiesQuery): Promise<RetrieveCapabilitiesPage>;
  /** Searches the selected capabilities' documents with the knowledge retriever; every hit is
   *  checked against the content the engine reads. */
  queryKnowledge(query: QueryKnowledgeQuery): Promise<QueryKnowledgePage>;
  /** One page of running instances from one provider's runtime adapter. */
  queryRuntime(query: QueryRuntimeQuery): Promise<QueryRuntimePage>;
  /** Re-reads providers; a provider's failure is reported in the result, not thrown. Reloads run
   *  one at a time (read, validate, publish), in the order they were called. */
  reload(options?: ReloadOptions): Promise<ReloadResult>;
  /** Calls `listener` after each provider's reload and when a watch is lost; what it throws
   *  stays with it. Throws `CG_INPUT_INVALID` for another event or a non-function and
   *  `CG_GRAPH_CLOSED` after `close()`. */
  on(event: 'reload', listener: (event: ReloadEvent) => unknown): this;
  off(event: 'reload', listener: (event: ReloadEvent) => unknown): this;
  /** What became of each provider's precomputed vectors. Rejects `CG_GRAPH_CLOSED` after
   *  `close()`. */
  status(): Promise<GraphStatus>;
  /** Idempotent and never rejects; later calls reject with `CG_GRAPH_CLOSED`, and so do calls
   *  still waiting on host code (readers, retrievers, adapters, the executor, a reload's
   *  database read), whose signals are aborted. Every watch stops; queued reloads are dropped. */
  close(): Promise<void>;
}

/** Queries on a bound facade: no request scope (it is always the bound provider). */
type Bound<Q> = Omit<Q, 'requestProviderScope'>;

export declare class BoundProviderGraph {
  private constructor();
  readonly providerId: string;
  resolve(query: BoundResolveQuery): Promise<ResolveResult>;
  listProviders(query?: Bound<ScopedQuery>): Promise<{ items: ProviderSummary[]; meta: ResultMeta }>;
  getProvider(query?: Bound<ScopedQuery>): Promise<ProviderResult>;
  listSpecificationDocuments(query?: Bound<Omit<SpecificationDocumentsQuery, 'providerId'>>): Promise<SpecificationDocumentsPage>;
  listCatalog(query?: Bound<Omit<CatalogQuery, 'parent'>> & { parent?: BoundCapabilityRef | undefined }): Promise<CatalogPage>;
  getCapabilities(ids: BoundCapabilityRef[], query?: Bound<CapabilityDetailQuery>): Promise<CapabilityDetails>;
  getNeighbors(id: BoundCapabilityRef, query?: Bound<NeighborQuery>): Promise<NeighborPage>;
  listKnowledgeMembers(query: Bound<Omit<KnowledgeMembersQuery, 'capability'>> & BoundCapabilityKey): Promise<KnowledgeMembersPage>;
  resolveSelection(query: Bound<Omit<SelectionQuery, 'selected'>> & { selected: BoundCapabilityRef[] }): Promise<SelectionResult>;
  readDocuments(query: Bound<Omit<ReadDocumentsQuery, 'selected'>> & { selected: BoundCapabilityRef[] }): Promise<DocumentReadBatch>;
  readSpecification(query?: Bound<Omit<ReadSpecificationQuery, 'providerId'>>): Promise<SpecificationReadBatch>;
  readDocumentPage(query: Bound<Omit<DocumentPageQuery, 'capability'>> & BoundCapabilityKey): Promise<DocumentBodyPage>;
  readSpecificationPage(query: Bound<Omit<SpecificationPageQuery, 'providerId'>>): Promise<DocumentBodyPage>;
  match(query: Bound<MatchQuery>): Promise<MatchResult>;
  retrieveCapabilities(query: Bound<RetrieveCapabilitiesQuery>): Promise<RetrieveCapabilitiesPage>;
  queryKnowledge(query: Bound<Omit<QueryKnowledgeQuery, 'selected'>> & { selected: BoundCapabilityRef[] }): Promise<QueryKnowledgePage>;
  queryRuntime(query: Bound<Omit<QueryRuntimeQuery, 'instanceOf'>> & { instanceOf?: BoundCapabilityRef | undefined }): Promise<QueryRuntimePage>;
}

// ---------------------------------------------------------------------------------------------
// Tool Adapter and MCP

export type ToolName =
  | 'list_providers' | 'get_provider' | 'list_catalog' | 'get_capabilities' | 'get_neighbors'
  | 'resolve' | 'resolve_selection' | 'match' | 'list_knowledge_members'
  | 'list_specification_documents' | 'read_documents' | 'read_document_page'
  | 'read_specification' | 'read_specification_page' | 'retrieve_capabilities'
  | 'query_knowledge' | 'query_runtime' | 'list_entry_points';

/**
 * How input schemas are written. `'json-schema'` (the default): JSON Schema with its limits
 * (`pattern`, `minLength`, …), optional properties left out of `required`, maps as objects.
 * `'strict'`: what strict function calling accepts (OpenAI strict mode, Anthropic strict
 * tools, Gemini): every property in `required`, optional ones nullable (`[T, "null"]`),
 * `additionalProperties: false` everywhere, limits said in descriptions, maps as arrays of
 * `{ key, value }` entries. In the strict dialect a `null` optional top-level argument means
 * omitted (not inside `context`, where null is a value), and entries are turned back into the
 * map before the verb runs.
 */
export type ToolDialect = 'json-schema' | 'strict';

export interface ToolAdapterOptions {
  /** Prepended to every tool name; each prefixed name must match `^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$`
   *  (the rule of OpenAI, Anthropic and Gemini), else `CG_INPUT_INVALID` (`field: 'prefix'`). */
  prefix?: string | undefined;
  /** Only these tools (names without the prefix), whether or not this configuration can serve
   *  them: one that cannot fails with its documented code. Default: the tools that can work
   *  here (no body tools without `documentBodies`, no retriever, runtime or `match` tool without
   *  its backend). */
  tools?: ToolName[] | undefined;
  /** The trusted host approves document bodies for agents (the read tools and query_knowledge). */
  documentBodies?: boolean | undefined;
  /** Qualified IDs the provider chose as its main entries; adds `list_entry_points`. */
  entryPoints?: string[] | undefined;
  /** Default `'json-schema'`. */
  dialect?: ToolDialect | undefined;
}

/**
 * MCP tool annotations: every tool reads and changes nothing; `openWorldHint` is true when its
 * answer comes from host code (the host's retrievers and runtime adapters, `match` with the
 * host's executor, document bodies when the host registered readers).
 */
export interface ToolAnnotations {
  readOnlyHint: true;
  destructiveHint: false;
  idempotentHint: true;
  openWorldHint: boolean;
}

/** A JSON Schema node of a tool's input. */
export interface ToolSchema {
  type?: string | string[];
  description?: string;
  properties?: Record<string, ToolSchema>;
  required?: string[];
  additionalProperties?: boolean | ToolSchema;
  items?: ToolSchema;
  enum?: unknown[];
  anyOf?: ToolSchema[];
  [keyword: string]: unknown;
}

export interface ToolDefinition {
  name: string;
  /** A human title, e.g. "Read capability details". */
  title: string;
  description: string;
  inputSchema: ToolSchema & { type: 'object'; properties: Record<string, ToolSchema>; required?: string[]; additionalProperties: false };
  outputSchema: { type: 'object'; [key: string]: unknown };
  annotations: ToolAnnotations;
  /** The documented example arguments, in the adapter's dialect (IDs of the served graph). */
  examples: Record<string, unknown>[];
}

export type ToolOutcome = { ok: true; result: any } | { ok: false; error: GraphErrorJSON };

export interface ToolAdapter {
  readonly tools: readonly ToolDefinition[];
  readonly dialect: ToolDialect;
  /** The progressive walk (entry points or catalog → narrow → details → neighbours →
   *  resolve_selection → documents) in the tools this adapter lists: a system prompt or MCP
   *  server `instructions`. */
  readonly instructions: string;
  /** Resolves `{ ok: true, result }` or `{ ok: false, error }`; never rejects for graph errors. */
  call(name: string, args: unknown, options?: { signal?: AbortSignal | undefined }): Promise<ToolOutcome>;
  has(name: string): boolean;
}

/** The graph as tools for agents. Throws `CG_INPUT_INVALID` for bad options. */
export declare function createToolAdapter(graph: CapabilityGraph | BoundProviderGraph, options?: ToolAdapterOptions): ToolAdapter;

export interface McpServerOptions extends ToolAdapterOptions {
  name?: string | undefined;
  version?: string | undefined;
  /** The server's `instructions` (default: the adapter's walk, generated from the tools listed). */
  instructions?: string | undefined;
}

/** A low-level MCP `Server` (from `@modelcontextprotocol/sdk`) serving the Tool Adapter's tools
 *  (with titles and annotations) and `instructions`, and, with `documentBodies`, the providers'
 *  specification documents as resources (an unknown one is JSON-RPC error -32002). */
export declare function createMcpServer(
  graph: CapabilityGraph | BoundProviderGraph,
  options?: McpServerOptions,
  // @ts-ignore -- the SDK is an optional peer: without it installed this type is `any`.
): import('@modelcontextprotocol/sdk/server/index.js').Server;

export interface McpHttpHandlerOptions extends McpServerOptions {
  /** Host header values accepted (DNS-rebinding protection, always on), e.g. `"mcp.internal:8080"`.
   *  Default: `127.0.0.1`, `localhost`, `[::1]` and the loopback address the request came in on
   *  (such as `127.0.0.2`), with the port it came in on. */
  allowedHosts?: string[] | undefined;
  /** Origin header values accepted besides the server's own loopback origin; a request
   *  without Origin is served, any other Origin gets 403. */
  allowedOrigins?: string[] | undefined;
  /** The largest request body read, in bytes (the MCP SDK's default: 4 MiB). */
  maxRequestBodySize?: number | undefined;
  /** Bearer token(s) a request must send as `Authorization: Bearer TOKEN`; otherwise 401 with
   *  `WWW-Authenticate: Bearer`, before the body is read. Compared in constant time. */
  auth?: { bearer: string | string[] } | undefined;
}

/** A Node.js request listener serving MCP over Streamable HTTP in stateless mode: a server and
 *  transport per request over the one graph (scales out behind a load balancer). Mount it on
 *  any `node:http` server or framework route (pass a body already parsed as `parsedBody`).
 *  Answers POST only (GET and DELETE: 405). Throws `CG_INPUT_INVALID` for bad options. */
export declare function createMcpHttpHandler(
  graph: CapabilityGraph | BoundProviderGraph,
  options?: McpHttpHandlerOptions,
): McpHttpHandler;

/** `(req, res, parsedBody?)` of `node:http` (without Node's types installed, `req` and `res` are `any`). */
export type McpHttpHandler = (
  // @ts-ignore -- Node's types are optional for consumers.
  req: import('node:http').IncomingMessage,
  // @ts-ignore -- Node's types are optional for consumers.
  res: import('node:http').ServerResponse,
  parsedBody?: unknown,
) => Promise<void>;

export interface StdioServerTransportOptions {
  /** Default `process.stdin` (a Node.js readable stream). */
  stdin?: { on(event: string, listener: (...args: any[]) => void): unknown } | undefined;
  /** Default `process.stdout` (a Node.js writable stream; its write callback says when a
   *  message is written). */
  stdout?: { write(chunk: Uint8Array, callback: (error?: Error | null) => void): boolean; on?(event: 'error', listener: (error: Error) => void): unknown } | undefined;
  /** The longest message line in bytes (default 10 MiB); a longer one is skipped to its newline
   *  and answered with JSON-RPC error -32600 (id null), and the session goes on. */
  maxMessageBytes?: number | undefined;
  /** Bytes of answers handed to stdout and not yet written above which stdin is not read
   *  (default 1 MiB); reading resumes as writes complete. */
  highWaterMark?: number | undefined;
  /** Requests read and not yet answered at which stdin is not read (default 64). */
  maxInFlight?: number | undefined;
}

/** The MCP stdio transport for `createMcpServer(...).connect(...)`: a bad line is answered
 *  (-32600 too large or not JSON-RPC, -32700 not JSON) and never ends the session or the
 *  process. At the end of its input it answers every request already read, then closes
 *  (`onclose`); a stream error goes to `onerror` (a broken stdout then closes it). Throws
 *  `CG_INPUT_INVALID` for bad options. */
export declare class StdioServerTransport {
  constructor(options?: StdioServerTransportOptions);
  onclose?: () => void;
  onerror?: (error: Error) => void;
  // @ts-ignore -- the SDK is an optional peer: without it installed this type is `any`.
  onmessage?: (message: import('@modelcontextprotocol/sdk/types.js').JSONRPCMessage) => void;
  start(): Promise<void>;
  // @ts-ignore -- the SDK is an optional peer: without it installed this type is `any`.
  send(message: import('@modelcontextprotocol/sdk/types.js').JSONRPCMessage): Promise<void>;
  close(): Promise<void>;
}

/** The built-in lexical executor; `minScore` (0–1, default 0.3) is the confidence a capability
 *  needs: 1 when the request names its dotted ID, otherwise the rarity-weighted share of the
 *  request's words it contains (at most four words' worth needed; halved for a single shared
 *  word). Every selection carries a `reason`. Throws `CG_CONFIG_INVALID` for bad options. */
export declare function lexicalExecutor(options?: { minScore?: number | undefined }): LexicalExecutor;

/** The built-in semantic executor: the cosine of the request's vector with each capability's
 *  (name, description, whenToUse, examples) plus half the lexical executor's confidence where it
 *  is at least 0.7; `minScore` (0–1, default 0.3) is the fused score a capability needs.
 *  A dotted ID in the request stays decisive; a CJK request the lexical executor serves keeps its
 *  answer. Vectors come from `embedder`, or else from the first-party encoder of the optional
 *  package `@devcodex/capability-graph-minilm` (without it `match` rejects CG_MODEL_UNAVAILABLE /
 *  check_config with `details.package`). `signals: 'dense'` is an evaluation option, not a
 *  recommendation: it ranks and accepts on the cosine alone (no lexical confidence, named ID or
 *  CJK answer), to measure the encoder on its own; the default `'fused'` is the executor.
 *  Throws `CG_CONFIG_INVALID` for bad options. */
export declare function semanticExecutor(options?: { minScore?: number | undefined; signals?: 'fused' | 'dense' | undefined; embedder?: Embedder | undefined }): SemanticExecutor;

export interface CodexExecutorOptions {
  /** The Codex model to use (default: the CLI's). */
  model?: string | undefined;
  /** The Codex CLI to run (default: the one installed with @openai/codex-sdk). */
  codexPath?: string | undefined;
  /** The whole environment of the Codex process (default: this process's). */
  env?: Record<string, string> | undefined;
  /** May only raise the built-in minimum CLI version, 0.120.0. */
  minCliVersion?: string | undefined;
}

/** OpenAI Codex as `match` executor, through the optional peer `@openai/codex-sdk`; every call
 *  runs isolated (read-only sandbox, no network, no web search, no approvals, a private temporary
 *  working directory). Throws `CG_CONFIG_INVALID` for bad options. */
export declare function codexExecutor(options?: CodexExecutorOptions): ModelExecutor;

/** A tool as a host holds it: MCP `tools/list` (`inputSchema`), OpenAI Chat Completions
 *  (`{ type: 'function', function: { … } }`) and Responses (`{ type: 'function', name, … }`)
 *  function tools, Anthropic tools (`input_schema`), an AI SDK tool. Other fields are ignored. */
export interface HostTool {
  name?: string | undefined;
  title?: string | null | undefined;
  /** Searchable words. The AI SDK's per-call description (a function of the call's `context`) is
   *  typed here so a `ToolSet` passes as it is, but refused (`CG_INPUT_INVALID`, `details.field`
   *  `tools.<name>.description`): there is no call yet to describe it for, so resolve it first. */
  description?: string | null | ((options: never) => unknown) | undefined;
  type?: string | undefined;
  function?: { name: string; description?: string | null | undefined; parameters?: object | null | undefined; [key: string]: unknown } | undefined;
  inputSchema?: object | null | undefined;
  input_schema?: object | null | undefined;
  parameters?: object | null | undefined;
  annotations?: { title?: string | null | undefined; [key: string]: unknown } | null | undefined;
  [key: string]: unknown;
}

export interface ProviderFromToolsOptions {
  providerId: string;
  /** The provider's name. */
  name: string;
  /** The provider's version label (default `'1'`). */
  version?: string | undefined;
  /** A list of tools, or a tool set keyed by tool name (the AI SDK's `{ [name]: tool(...) }`,
   *  whose `inputSchema`/`parameters` may be `jsonSchema(...)` or a Standard JSON Schema such as
   *  a Zod 4 schema). At most 10,000 tools. */
  tools: readonly HostTool[] | Readonly<Record<string, HostTool>>;
}

export interface ToolProvider {
  /** An inline provider definition: a capability per tool. */
  definition: InlineProviderDefinition;
  /** Capability ID → tool name, in the tools' order. */
  toolNames: Map<string, string>;
  /** Tool name → capability ID, in the tools' order. */
  capabilityIds: Map<string, string>;
}

/** A host's own tools as a provider, so `match` can choose the few a model sees. A tool's
 *  capability ID is its name's words lower-cased and joined by `_` (camelCase and every character
 *  other than ASCII letters and digits break words; `tool` leads one that would not start with a
 *  letter; at most 128 bytes); names that share an ID each append 8 hex digits of their name's
 *  hash, whatever the order of the list. Throws `CG_INPUT_INVALID` / `CG_INPUT_TOO_LARGE` with
 *  `details.field` naming the tool (`tools[3].name`). */
export declare function providerFromTools(options: ProviderFromToolsOptions): ToolProvider;

/** The entries of a vectors file (`capability-graph embed`'s `vectors/<model-id>.bin`) as a
 *  database view's `vectors()` lists them, decoded by the engine's own rules; throws
 *  `CG_INPUT_INVALID` (`details.field` `bytes`) for bytes that are not one. */
export declare function readVectorsFile(bytes: Uint8Array): VectorsFile;
/** `'p::c'` → `{ providerId: 'p', capabilityId: 'c' }`; throws `CG_INPUT_INVALID`. */
export declare function parseQualifiedId(id: string): CapabilityId;
/** `{ providerId, capabilityId }` → `'p::c'`; throws `CG_INPUT_INVALID`. */
export declare function formatQualifiedId(id: CapabilityId): string;

/** Absolute path of the small seed provider the package ships (provider `seed.http`, directory
 *  layout): `{ providerId: 'seed.http', authority: { kind: 'file', rootDir: seedProviderRoot,
 *  definitionLayout: 'directory' } }` opens it. */
export declare const seedProviderRoot: string;
