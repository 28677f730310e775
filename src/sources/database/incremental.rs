//! An incremental read whose changes only rewrite records, every capability ID staying: its
//! snapshot is the current one with those records replaced, the other capabilities shared
//! instead of taken apart and rebuilt. It is taken only where that is provably the snapshot a
//! full read of the same records gives; any other read, and any read that breaks a rule, is
//! validated whole ([`DatabaseRead::validate_after`]), which then names the first problem.

use super::*;
use crate::definitions::graph::find_cycle;
use crate::definitions::model::{ProviderRecord, Relation};

/// What an incremental read changes in the current snapshot: its provider record and, by node
/// in increasing order, each rewritten record with its declared relation lists as nodes.
pub struct Replacement {
    pub provider: ProviderRecord,
    pub changed: Vec<crate::snapshot::ReplacedRecord>,
}

impl DatabaseRead {
    /// The snapshot of this read, with document roots `roots`: an incremental read that only
    /// rewrote records is applied to `current` ([`DatabaseRead::replacement`]); any other read
    /// is validated whole ([`DatabaseRead::validate_after`]) and built.
    pub fn snapshot_after(
        &self,
        provider_id: &str,
        rules: &Roots,
        current: Option<Current>,
        roots: crate::snapshot::DocumentRoots,
    ) -> Result<ProviderSnapshot> {
        let replacement = current
            .and_then(|c| Some((c.snapshot, self.replacement(provider_id, rules, Some(c))?)));
        match replacement {
            Some((current, r)) => {
                let snapshot = current.replaced(r.provider, r.changed, roots);
                self.check_touched_streams(&snapshot, provider_id)?;
                Ok(snapshot)
            }
            None => {
                let validated = self.validate_after(provider_id, rules, current)?;
                Ok(ProviderSnapshot::build(
                    validated,
                    crate::snapshot::AuthorityKind::Database,
                    roots,
                ))
            }
        }
    }

    /// The replacement this read makes in `current` when the whole check of the candidate is
    /// known to pass from what `current` already passed: the read is an incremental one applied
    /// to `current`'s records ([`DatabaseRead::reusable`]) and gives its edges through the
    /// touched streams or not at all; the provider record is the one `current` holds; every
    /// record sits where `current` holds its ID (so the IDs are the same, unique and in order);
    /// each rewritten record passes its own checks, keeps its knowledge references (so no
    /// knowledge ID changes meaning) and names existing capabilities only; and no relation that
    /// must be acyclic has a cycle once they are rewritten. `None` otherwise.
    pub fn replacement(
        &self,
        provider_id: &str,
        roots: &Roots,
        current: Option<Current>,
    ) -> Option<Replacement> {
        let definition = self.definition_checked().ok()?;
        let (kept, current) = self.reusable(current)?;
        let touched_streams = self.value.get("streamsOf").is_some_and(Value::is_array);
        match self.value.get("edges").and_then(Value::as_str) {
            None | Some("streams") if touched_streams => {}
            Some("records") => {}
            _ => return None,
        }
        let provider = crate::definitions::provider_of(definition, provider_id, roots).ok()?;
        let n = kept.records.len();
        if provider != current.provider || n != current.capabilities.len() {
            return None;
        }
        let in_place = (0..n).all(|i| current.capability(i as u32).id() == &*kept.records[i].id);
        if !in_place {
            return None;
        }
        let mut changed = Vec::new();
        for i in (0..n).filter(|&i| !kept.reused[i]) {
            let record =
                crate::definitions::record_at(provider_id, kept.record(i), i, roots).ok()?;
            let node = i as u32;
            if record.texts.capability_id() != current.capability(node).id()
                || record.knowledge[..] != current.capability(node).knowledge[..]
            {
                return None;
            }
            let mut lists: [Vec<u32>; 4] = Default::default();
            for relation in Relation::ALL {
                for target in record.relations.of(relation) {
                    lists[relation as usize].push(current.find(target)?);
                }
            }
            changed.push((node, record, lists));
        }
        let acyclic = Relation::ALL
            .into_iter()
            .filter(|r| r.must_be_acyclic())
            .all(|r| {
                find_cycle(n, |node| {
                    current.declared(&changed, node as u32, r as usize)
                })
                .is_none()
            });
        acyclic.then_some(Replacement { provider, changed })
    }

    /// The streams an incremental read read (those of the capabilities its changes touched)
    /// against `snapshot`, built from its [`Replacement`]: the check
    /// [`DatabaseRead::validate_after`] makes, on the lists the snapshot holds.
    pub fn check_touched_streams(
        &self,
        snapshot: &ProviderSnapshot,
        provider_id: &str,
    ) -> Result<()> {
        if self.value.get("edges").and_then(Value::as_str) == Some("records") {
            return Ok(());
        }
        let streams = self
            .value
            .get("streams")
            .and_then(Value::as_object)
            .ok_or_else(|| contract("streams_required"))?;
        let Some(Value::Array(ids)) = self.value.get("streamsOf") else {
            return Err(GraphError::new(Code::Internal));
        };
        let mut nodes: Vec<usize> = ids
            .iter()
            .filter_map(Value::as_str)
            .filter_map(|id| snapshot.find(id))
            .map(|node| node as usize)
            .collect();
        nodes.sort_unstable();
        nodes.dedup();
        check_stream_lists(
            |i| snapshot.capability(i as u32).id(),
            nodes.into_iter(),
            |i, kind| snapshot.neighbours(i as u32, kind),
            provider_id,
            streams,
        )
    }
}
