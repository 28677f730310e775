//! Retrieval through host components: `queryKnowledge` (the knowledge retriever, its evidence
//! checked by the engine), `retrieveCapabilities` and `queryRuntime` (optional backends).

pub mod backends;
pub mod knowledge_retrieval;
pub mod knowledge_search;
