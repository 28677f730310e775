//! What the maintenance commands need from a loaded graph: the whole graph of a provider for
//! people to look at (`export`), and a check of every local document ahead of time (`doctor`).

use super::args::{invalid, Args};
use super::Call;
use crate::definitions::model::{DocumentRef, KnowledgeRef, Locator};
use crate::error::{Code, GraphError, Result};
use crate::ids::{format_qualified, is_id};
use crate::knowledge::body::read_page;
use crate::knowledge::{locate, RootChecks};
use crate::snapshot::{Kind, ProviderSnapshot};
use serde_json::{json, Value};

/// `{ providers: [{ providerId, staticRevision }], nodes: [{ id, name }], edges: [{ from, to,
/// kind }] }` for one provider or every provider in scope, bounded by `export.maxNodes`.
pub fn export(call: &Call, json: &str) -> Result<String> {
    let args = Args::parse(json, &["providerId"])?;
    let only = match args.string("providerId")? {
        None => None,
        Some(p) if is_id(p) => Some(p),
        Some(_) => return Err(invalid("providerId", "provider ID")),
    };
    let view = call.view(&args, None::<std::iter::Empty<&str>>)?;
    if let Some(p) = only {
        if !call.state.providers.contains_key(p) {
            return Err(GraphError::new(Code::ProviderNotFound));
        }
    }
    let snapshots: Vec<&ProviderSnapshot> = view
        .served
        .iter()
        .map(|(s, _)| s.as_ref())
        .filter(|s| only.is_none_or(|p| s.provider_id() == p))
        .collect();
    let max = call.budgets.export.max_nodes;
    let count: usize = snapshots.iter().map(|s| s.capabilities.len()).sum();
    if count as u64 > max {
        return Err(GraphError::new(Code::ResultTooLarge)
            .detail("budget", "export.maxNodes")
            .detail("limit", max));
    }
    let mut nodes = Vec::with_capacity(count);
    let mut edges = Vec::new();
    for s in &snapshots {
        for (i, c) in s.capabilities.iter().enumerate() {
            let id = format_qualified(s.provider_id(), c.id());
            for kind in [
                Kind::Parents,
                Kind::Specializes,
                Kind::Related,
                Kind::Requires,
            ] {
                for &t in s.neighbours(i as u32, kind) {
                    edges.push(json!({ "from": id, "to": format_qualified(s.provider_id(), s.capability(t).id()), "kind": kind.as_str() }));
                }
            }
            nodes.push(json!({ "id": id, "name": c.name() }));
        }
    }
    let providers: Vec<Value> = snapshots
        .iter()
        .map(|s| json!({ "providerId": s.provider_id(), "name": s.provider.name, "staticRevision": s.static_revision }))
        .collect();
    Ok(json!({ "providers": providers, "nodes": nodes, "edges": edges }).to_string())
}

/// Every local document of every provider in scope: it exists, is a regular file inside its
/// root and is valid UTF-8. `{ providers: [{ providerId, documents, failures: [{ knowledgeId,
/// capabilityId?, code }] }] }`; URL documents are not fetched.
pub fn check_documents(call: &Call, json: &str) -> Result<String> {
    let args = Args::parse(json, &[])?;
    let view = call.view(&args, None::<std::iter::Empty<&str>>)?;
    let roots = RootChecks::default();
    let mut out = Vec::new();
    for (s, _) in &view.served {
        let mut docs: Vec<(Option<&str>, &DocumentRef)> = Vec::new();
        if let Some(spec) = &s.provider.specification {
            docs.extend(spec.documents.iter().map(|d| (None, d)));
        }
        for c in &s.capabilities {
            for k in &c.knowledge {
                match k {
                    KnowledgeRef::Document(d) => docs.push((Some(c.id()), d)),
                    KnowledgeRef::Collection(col) => {
                        docs.extend(col.members.iter().map(|d| (Some(c.id()), d)))
                    }
                }
            }
        }
        let mut checked = 0;
        let mut failures = Vec::new();
        // A knowledge ID means one document across the provider: check it once.
        let mut seen = std::collections::HashSet::new();
        for (capability, doc) in docs {
            if matches!(doc.locator, Locator::Http { .. })
                || !seen.insert(doc.knowledge_id.as_str())
            {
                continue;
            }
            checked += 1;
            // A first page scans the whole file: existence, type, UTF-8, stability. Four bytes
            // hold any first character.
            if let Err(e) = locate(s, doc, &roots).and_then(|at| read_page(&at, 0, 4, None)) {
                let mut f = json!({ "knowledgeId": doc.knowledge_id, "code": e.code().as_str() });
                if let Some(c) = capability {
                    f["capabilityId"] = c.into();
                }
                failures.push(f);
            }
        }
        out.push(
            json!({ "providerId": s.provider_id(), "documents": checked, "failures": failures }),
        );
    }
    Ok(json!({ "providers": out }).to_string())
}
