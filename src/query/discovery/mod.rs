//! Discovery: what is in scope and what one capability is — providers and their specification
//! documents, the catalog, a capability's details, its neighbours and its knowledge members.
//! Pages throughout, bounded by count and bytes; bodies are never read here.

pub mod catalog;
pub mod details;
pub mod documents;
pub mod members;
pub mod neighbors;
pub mod providers;
