//! Query verbs over pinned snapshots. A verb parses its arguments, builds its view (scope and
//! revisions), reads, and prints one JSON string.

// Shared by every verb: argument checks, byte-budgeted pages, how snapshot data is printed.
pub mod args;
pub mod page;
pub mod views;

// The verbs, by family.
pub mod discovery;
pub mod maintenance;
pub mod reads;
pub mod resolution;
pub mod retrieval;

use crate::config::Budgets;
use crate::error::{Code, GraphError, Result};
use crate::scope::{effective_scope, view, Pins, View};
use crate::store::StoreState;
use args::{invalid, Args};
use resolution::closure::Node;
use serde_json::Value;
use std::collections::BTreeSet;
use std::sync::Arc;

/// A capability reference as parsed: provider ID and capability ID.
pub type CapabilityRef<'a> = (&'a str, &'a str);

/// One call: the state it pinned, the budgets in force, and the provider a bound facade
/// restricts it to.
pub struct Call<'a> {
    pub state: Arc<StoreState>,
    pub budgets: &'a Budgets,
    pub backends: &'a retrieval::backends::Backends,
    pub bound: Option<&'a str>,
}

impl<'a> Call<'a> {
    /// The call's view: its effective scope, each provider served from the revision the
    /// arguments require. `targets` are the providers its explicit targets name; a verb
    /// without explicit targets reads its whole scope (`None`).
    pub fn view<'t>(
        &self,
        args: &Args,
        targets: Option<impl Iterator<Item = &'t str>>,
    ) -> Result<View> {
        self.view_within(args, targets, None)
    }

    /// The view of a verb with one target provider (SPEC §14 D20): that provider alone, so its
    /// meta reports that provider's scope, revision and `servedFrom`, whatever else the call's
    /// scope holds. A provider outside the scope leaves the scope whole, for the target checks
    /// to report.
    pub fn view_of_one(&self, args: &Args, provider: Option<&str>) -> Result<View> {
        self.view_within(args, Some(provider.into_iter()), provider)
    }

    fn view_within<'t>(
        &self,
        args: &Args,
        targets: Option<impl Iterator<Item = &'t str>>,
        only: Option<&str>,
    ) -> Result<View> {
        let mut scope =
            effective_scope(&self.state, args.get("requestProviderScope")?, self.bound)?;
        if let Some(only) = only.filter(|p| scope.binary_search_by(|s| s.as_str().cmp(p)).is_ok()) {
            scope = vec![only.to_owned()];
        }
        let targets: BTreeSet<&str> = match targets {
            Some(t) => t.collect(),
            None => scope.iter().map(String::as_str).collect(),
        };
        let mut pins = Pins::new();
        let single = args.string("requiredStaticRevision")?;
        let by_provider = args.object("requiredStaticRevisionByProvider")?;
        match (single, by_provider) {
            (Some(_), Some(_)) => {
                return Err(invalid(
                    "requiredStaticRevision",
                    "either requiredStaticRevision or requiredStaticRevisionByProvider",
                ))
            }
            (Some(rev), None) => {
                if rev.is_empty() || targets.len() != 1 {
                    return Err(invalid(
                        "requiredStaticRevision",
                        "non-empty string, with targets in exactly one provider",
                    ));
                }
                pins.extend(targets.iter().map(|p| (p.to_string(), rev.to_owned())));
            }
            (None, Some(map)) => {
                let keys: BTreeSet<&str> = map.keys().map(String::as_str).collect();
                if keys != targets {
                    return Err(invalid(
                        "requiredStaticRevisionByProvider",
                        "one revision for each provider the targets name",
                    ));
                }
                for (p, rev) in map {
                    let rev = rev.as_str().filter(|r| !r.is_empty()).ok_or_else(|| {
                        invalid(
                            &format!("requiredStaticRevisionByProvider.{p}"),
                            "non-empty string",
                        )
                    })?;
                    pins.insert(p.clone(), rev.to_owned());
                }
            }
            (None, None) => {}
        }
        // Pins for providers outside the scope are reported by the target checks.
        pins.retain(|p, _| scope.binary_search(p).is_ok());
        view(&self.state, scope, &pins)
    }

    /// An explicit target (SPEC §14 D2): configured provider → inside this call's scope →
    /// existing capability.
    pub fn locate(&self, view: &View, provider: &str, capability: &str) -> Result<Node> {
        if !self.state.providers.contains_key(provider) {
            return Err(GraphError::new(Code::ProviderNotFound));
        }
        let p = view
            .position(provider)
            .ok_or_else(|| GraphError::new(Code::AccessDenied))?;
        let node = view
            .snapshot(p)
            .find(capability)
            .ok_or_else(|| GraphError::new(Code::CapabilityNotFound))?;
        Ok((p, node))
    }

    /// The targets of a batch verb (`getCapabilities`, `readDocuments`, `queryKnowledge`): each
    /// reference parsed on its own (a failure stays in its slot), and the view over the
    /// providers of those that parsed.
    pub fn slot_targets<'v>(
        &self,
        args: &Args,
        field: &str,
        list: &'v [Value],
    ) -> Result<(Vec<Result<CapabilityRef<'v>>>, View)>
    where
        'a: 'v,
    {
        let refs: Vec<Result<CapabilityRef>> = list
            .iter()
            .enumerate()
            .map(|(i, v)| args::capability_ref_at(v, || format!("{field}[{i}]"), self.bound))
            .collect();
        let targets = refs.iter().filter_map(|r| r.as_ref().ok().map(|r| r.0));
        let view = self.view(args, Some(targets))?;
        Ok((refs, view))
    }

    /// The targets of an all-or-nothing verb (`resolve`, `resolveSelection`): every reference's
    /// syntax first, then each target in input order, kept once. Returns the call's view and
    /// the distinct nodes.
    pub fn locate_all(
        &self,
        args: &Args,
        field: &str,
        list: &[Value],
    ) -> Result<(View, Vec<Node>)> {
        let refs = list
            .iter()
            .enumerate()
            .map(|(i, v)| args::capability_ref_at(v, || format!("{field}[{i}]"), self.bound))
            .collect::<Result<Vec<_>>>()?;
        let view = self.view(args, Some(refs.iter().map(|r| r.0)))?;
        let mut nodes: Vec<Node> = Vec::with_capacity(refs.len());
        for (provider, capability) in refs {
            let node = self.locate(&view, provider, capability)?;
            if !nodes.contains(&node) {
                nodes.push(node);
            }
        }
        Ok((view, nodes))
    }
}
