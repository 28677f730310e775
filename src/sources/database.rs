//! The database authority (SPEC §14 D15): the JS layer reads a provider whole through the
//! adapter's paged scans — its provider record, every capability record in ID order, and the
//! eight relation streams of every capability — and hands the read here. The records are
//! validated like any definitions; the scan order and every relation stream are checked against
//! them, so an inconsistent database never becomes a snapshot.

use crate::definitions::{validate_provider, RawDefinitions, Roots, ValidatedProvider};
use crate::error::{project_component_error, Code, Component, GraphError, Phase, Result};
use crate::snapshot::Kind;
use serde_json::{Map, Value};
use std::path::PathBuf;

fn contract(reason: &str) -> GraphError {
    GraphError::new(Code::AdapterContractInvalid)
        .with_phase(Phase::Load)
        .detail("reason", reason)
}

/// The local ID a stream item names: a local ID string, or `{ providerId, capabilityId }` of
/// this provider (relations never cross providers).
fn endpoint<'v>(item: &'v Value, provider_id: &str) -> Option<&'v str> {
    match item {
        Value::String(id) => Some(id),
        Value::Object(m) if m.len() == 2 => {
            (m.get("providerId")?.as_str()? == provider_id).then_some(())?;
            m.get("capabilityId")?.as_str()
        }
        _ => None,
    }
}

/// Why a read the JS layer stopped failed, when a bound or deadline of `budgets.database` or a
/// page rule stopped it (`{ failed: { reason } }`).
const STOPPED: [&str; 6] = [
    "database_call_timeout",
    "database_read_timeout",
    "database_too_many_records",
    "database_too_many_bytes",
    "invalid_store_page",
    "neighbor_stream_unbounded",
];

/// The view fields that describe the source; read when the view is opened and again after the
/// scans, they must not change in between.
const CONTEXT: [&str; 3] = ["provider", "sourceRevision", "knowledgeRootDir"];

/// What the JS layer read from the adapter: `{ provider, sourceRevision, knowledgeRootDir?, cwd,
/// capabilities: [record…], streams: { capabilityId: { kind: [capabilityId…] } }, after }`, where
/// the first three fields were read when the view was opened (`cwd` is the working directory
/// then) and `after` holds them as read after the scans; or `{ failed: { code, reason? } }` when
/// the adapter threw or the read was stopped.
pub struct DatabaseRead {
    value: Value,
}

impl DatabaseRead {
    pub fn new(value: Value) -> DatabaseRead {
        DatabaseRead { value }
    }

    /// The adapter's failure, projected: a few codes pass through, the rest is
    /// `CG_CONFIG_INVALID` (phase `load`).
    fn failure(&self) -> Option<GraphError> {
        let failed = self.value.get("failed")?;
        if let Some(reason) = failed
            .get("reason")
            .and_then(Value::as_str)
            .and_then(|r| STOPPED.iter().find(|s| **s == r))
        {
            return Some(
                GraphError::new(Code::ConfigInvalid)
                    .with_phase(Phase::Load)
                    .detail("reason", *reason),
            );
        }
        let code = failed.get("code").and_then(Value::as_str);
        Some(
            project_component_error(Component::DatabaseAuthority, code, Phase::Load)
                .with_phase(Phase::Load),
        )
    }

    /// The provider's default document root, if the view named one; a relative one is taken
    /// from the working directory of the moment the view was opened.
    pub fn knowledge_root(&self) -> Option<PathBuf> {
        let dir = self
            .value
            .get("knowledgeRootDir")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)?;
        match self.value.get("cwd").and_then(Value::as_str) {
            Some(cwd) if dir.is_relative() => Some(PathBuf::from(cwd).join(dir)),
            _ => Some(dir),
        }
    }

    /// The source's context must be the one the view was opened with.
    fn check_context(&self) -> Result<()> {
        let after = self.value.get("after");
        let changed = CONTEXT
            .iter()
            .any(|field| self.value.get(*field) != after.and_then(|a| a.get(*field)));
        if changed {
            return Err(GraphError::new(Code::RevisionMismatch)
                .with_phase(Phase::Load)
                .detail("reason", "source_context_changed"));
        }
        Ok(())
    }

    /// Validates the read for the configured provider `provider_id`.
    pub fn validate(&self, provider_id: &str, roots: &Roots) -> Result<ValidatedProvider> {
        if let Some(e) = self.failure() {
            return Err(e);
        }
        self.check_context()?;
        let v = &self.value;
        if v.get("sourceRevision")
            .and_then(Value::as_str)
            .is_none_or(|s| s.trim().is_empty())
        {
            return Err(contract("source_revision_required"));
        }
        let provider = v
            .get("provider")
            .and_then(Value::as_object)
            .ok_or_else(|| contract("provider_required"))?;
        let records = v
            .get("capabilities")
            .and_then(Value::as_array)
            .ok_or_else(|| contract("capabilities_required"))?;
        // Scans come in strictly increasing ID order, each record once.
        let ids: Vec<Option<&str>> = records
            .iter()
            .map(|r| r.get("capabilityId").and_then(Value::as_str))
            .collect();
        if ids
            .windows(2)
            .any(|w| matches!(w, [Some(a), Some(b)] if a >= b))
        {
            return Err(contract("scan_order_or_duplicate"));
        }
        let mut definition: Map<String, Value> = provider.clone();
        definition.insert("capabilities".into(), Value::Array(records.clone()));
        let definition = Value::Object(definition);
        let validated = validate_provider(
            &RawDefinitions::Inline(&definition),
            Some(provider_id),
            roots,
        )?;
        self.check_streams(&validated, provider_id)?;
        Ok(validated)
    }

    /// Every relation stream the adapter serves must list exactly the edges the records declare
    /// (forward) or imply (inverse), in ID order.
    fn check_streams(&self, v: &ValidatedProvider, provider_id: &str) -> Result<()> {
        let streams = self
            .value
            .get("streams")
            .and_then(Value::as_object)
            .ok_or_else(|| contract("streams_required"))?;
        let n = v.capabilities.len();
        // Expected lists per kind, as indices: forward from the records, inverse derived.
        let mut expected: Vec<[Vec<u32>; 8]> = vec![Default::default(); n];
        for (i, edges) in v.edges.iter().enumerate() {
            for (r, targets) in edges.iter().enumerate() {
                let (forward, inverse) = (2 * r, 2 * r + 1);
                expected[i][forward] = targets.clone();
                for &t in targets {
                    expected[t as usize][inverse].push(i as u32);
                }
            }
        }
        for (i, c) in v.capabilities.iter().enumerate() {
            let kinds = streams.get(&c.capability_id).and_then(Value::as_object);
            for kind in Kind::ALL {
                let listed = kinds
                    .and_then(|k| k.get(kind.as_str()))
                    .and_then(Value::as_array)
                    .map(|l| l.iter().map(|item| endpoint(item, provider_id)));
                let Some(listed) = listed.map(|l| l.collect::<Option<Vec<&str>>>()) else {
                    return Err(contract(&format!("{}_stream_mismatch", kind.as_str()))
                        .detail("capabilityId", c.capability_id.as_str()));
                };
                let Some(listed) = listed else {
                    return Err(contract("neighbor_identity_invalid")
                        .detail("capabilityId", c.capability_id.as_str()));
                };
                let want = &expected[i][kind as usize];
                let same = listed.len() == want.len()
                    && listed
                        .iter()
                        .zip(want)
                        .all(|(&got, &w)| got == v.capabilities[w as usize].capability_id);
                if !same {
                    return Err(contract(&format!("{}_stream_mismatch", kind.as_str()))
                        .detail("capabilityId", c.capability_id.as_str()));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The error of validating `v`, or `None` when it validates.
    fn error(v: Value) -> Option<GraphError> {
        let roots = Roots {
            aliases: &[],
            default_root: false,
        };
        DatabaseRead::new(v).validate("p", &roots).err()
    }

    #[test]
    fn a_stopped_read_names_its_reason_and_unknown_reasons_name_none() {
        for reason in STOPPED {
            let e = error(json!({ "failed": { "reason": reason } })).unwrap();
            assert_eq!((e.code(), e.phase()), (Code::ConfigInvalid, Phase::Load));
            assert_eq!(e.details().unwrap()["reason"], reason);
        }
        let e = error(json!({ "failed": { "reason": "/srv/secret" } })).unwrap();
        assert_eq!((e.code(), e.details()), (Code::ConfigInvalid, None));
    }

    #[test]
    fn source_fields_must_not_change_after_open() {
        let provider = json!({ "providerId": "p", "name": "P", "version": "1" });
        let opened = json!({ "provider": provider, "sourceRevision": "r1" });
        for after in [
            json!({ "provider": provider, "sourceRevision": "r2" }),
            json!({ "provider": provider, "sourceRevision": "r1", "knowledgeRootDir": "k" }),
            json!({ "provider": { "providerId": "p", "name": "Q", "version": "1" }, "sourceRevision": "r1" }),
            Value::Null,
        ] {
            let mut v = opened.clone();
            v["capabilities"] = json!([]);
            v["streams"] = json!({});
            v["after"] = after.clone();
            let e = error(v).unwrap();
            assert_eq!(
                (e.code(), e.phase()),
                (Code::RevisionMismatch, Phase::Load),
                "{after}"
            );
            assert_eq!(e.details().unwrap()["reason"], "source_context_changed");
        }
        let mut same = opened.clone();
        same["capabilities"] = json!([]);
        same["streams"] = json!({});
        same["after"] = opened;
        assert!(error(same).is_none());
    }

    #[test]
    fn a_relative_root_is_taken_from_the_directory_at_open() {
        let r = DatabaseRead::new(json!({ "knowledgeRootDir": "docs", "cwd": "/srv/host" }));
        assert_eq!(r.knowledge_root(), Some(PathBuf::from("/srv/host/docs")));
        let abs = DatabaseRead::new(json!({ "knowledgeRootDir": "/abs", "cwd": "/srv/host" }));
        assert_eq!(abs.knowledge_root(), Some(PathBuf::from("/abs")));
    }
}
