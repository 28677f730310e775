//! Effective scope (host ∩ integration ∩ request), revision selection (current or previous)
//! and the common result `meta` (SPEC §6.3, §14 D3–D4).

use crate::error::{Code, GraphError, Result};
use crate::ids::is_id;
use crate::query::args::invalid;
use crate::snapshot::revision::composite_revision;
use crate::snapshot::ProviderSnapshot;
use crate::store::StoreState;
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ServedFrom {
    Current,
    Previous,
    Mixed,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Completeness {
    Complete,
    Truncated,
    Partial,
}

/// The snapshots one call reads: one per provider of its effective scope, in ID order.
pub struct View {
    pub scope: Vec<String>,
    pub served: Vec<(Arc<ProviderSnapshot>, ServedFrom)>,
    pub refresh_failed: bool,
}

impl View {
    pub fn position(&self, provider_id: &str) -> Option<usize> {
        self.scope
            .binary_search_by(|p| p.as_str().cmp(provider_id))
            .ok()
    }

    pub fn snapshot(&self, i: usize) -> &ProviderSnapshot {
        &self.served[i].0
    }
}

/// The effective scope of a call: every configured provider, narrowed by
/// `requestProviderScope` (an array of IDs, each configured) or by a bound facade.
pub fn effective_scope(
    state: &StoreState,
    request: Option<&Value>,
    bound: Option<&str>,
) -> Result<Vec<String>> {
    if let Some(p) = bound {
        if request.is_some() {
            return Err(invalid(
                "requestProviderScope",
                "absent on a provider-bound graph",
            ));
        }
        return Ok(vec![p.to_owned()]);
    }
    let Some(request) = request else {
        return Ok(state.providers.keys().cloned().collect());
    };
    let items = request
        .as_array()
        .ok_or_else(|| invalid("requestProviderScope", "array of provider IDs"))?;
    let mut scope = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let id = item
            .as_str()
            .filter(|s| is_id(s))
            .ok_or_else(|| invalid(&format!("requestProviderScope[{i}]"), "ID"))?;
        scope.push(id.to_owned());
    }
    if scope.iter().any(|p| !state.providers.contains_key(p)) {
        return Err(GraphError::new(Code::ScopeDenied));
    }
    scope.sort_unstable();
    scope.dedup();
    Ok(scope)
}

/// Revisions a call requires, per provider.
pub type Pins = BTreeMap<String, String>;

/// Serves every provider of `scope` from current, or from the snapshot whose revision `pins`
/// requires (current or the retained previous; anything else is `CG_REVISION_MISMATCH`).
pub fn view(state: &StoreState, scope: Vec<String>, pins: &Pins) -> Result<View> {
    let mut served = Vec::with_capacity(scope.len());
    let mut refresh_failed = false;
    for id in &scope {
        let slots = state
            .providers
            .get(id)
            .ok_or_else(|| GraphError::new(Code::ProviderNotFound))?;
        refresh_failed |= slots.refresh_failed;
        let entry = match pins.get(id) {
            None => (slots.current.clone(), ServedFrom::Current),
            Some(rev) if *rev == slots.current.static_revision => {
                (slots.current.clone(), ServedFrom::Current)
            }
            Some(rev) => match &slots.previous {
                Some(prev) if prev.static_revision == *rev => (prev.clone(), ServedFrom::Previous),
                _ => return Err(GraphError::new(Code::RevisionMismatch)),
            },
        };
        served.push(entry);
    }
    Ok(View {
        scope,
        served,
        refresh_failed,
    })
}

/// `meta` as every result carries it; verbs add their own fields to `extra`.
#[derive(Serialize)]
pub struct Meta {
    pub completeness: Completeness,
    pub warnings: Vec<Value>,
    pub scope: Vec<String>,
    #[serde(rename = "servedFrom")]
    pub served_from: ServedFrom,
    #[serde(rename = "compositeStaticRevision")]
    pub composite_static_revision: String,
    #[serde(rename = "staticRevision", skip_serializing_if = "Option::is_none")]
    pub static_revision: Option<String>,
    #[serde(
        rename = "staticRevisionByProvider",
        skip_serializing_if = "Option::is_none"
    )]
    pub static_revision_by_provider: Option<BTreeMap<String, String>>,
    #[serde(
        rename = "servedFromByProvider",
        skip_serializing_if = "Option::is_none"
    )]
    pub served_from_by_provider: Option<BTreeMap<String, ServedFrom>>,
    #[serde(rename = "refreshFailed", skip_serializing_if = "std::ops::Not::not")]
    pub refresh_failed: bool,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Meta {
    /// Base meta of a view: `staticRevision` for one provider, the by-provider pair for
    /// several (or always, with `by_provider`).
    pub fn of(view: &View, by_provider: bool) -> Meta {
        let revisions = || {
            view.scope
                .iter()
                .zip(&view.served)
                .map(|(id, (s, _))| (id.as_str(), s.static_revision.as_str()))
        };
        let froms: Vec<ServedFrom> = view.served.iter().map(|(_, f)| *f).collect();
        let served_from = match froms.first() {
            Some(first) if froms.iter().any(|f| f != first) => ServedFrom::Mixed,
            Some(first) => *first,
            None => ServedFrom::Current,
        };
        let several = by_provider || view.scope.len() > 1;
        Meta {
            completeness: Completeness::Complete,
            warnings: Vec::new(),
            scope: view.scope.clone(),
            served_from,
            composite_static_revision: composite_revision(revisions()),
            static_revision: (view.scope.len() == 1)
                .then(|| view.served[0].0.static_revision.clone()),
            static_revision_by_provider: several.then(|| {
                revisions()
                    .map(|(a, b)| (a.to_owned(), b.to_owned()))
                    .collect()
            }),
            served_from_by_provider: several.then(|| {
                view.scope
                    .iter()
                    .cloned()
                    .zip(froms.iter().copied())
                    .collect()
            }),
            refresh_failed: view.refresh_failed,
            extra: Map::new(),
        }
    }
}
