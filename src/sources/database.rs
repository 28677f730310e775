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

/// What the JS layer read from the adapter: `{ provider, sourceRevision, knowledgeRootDir?,
/// capabilities: [record…], streams: { capabilityId: { kind: [capabilityId…] } } }`, or
/// `{ failed: { code } }` when the adapter threw.
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
        let code = failed.get("code").and_then(Value::as_str);
        Some(
            project_component_error(Component::DatabaseAuthority, code, Phase::Load)
                .with_phase(Phase::Load),
        )
    }

    /// The provider's default document root, if the view named one.
    pub fn knowledge_root(&self) -> Option<PathBuf> {
        self.value
            .get("knowledgeRootDir")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
    }

    /// Validates the read for the configured provider `provider_id`.
    pub fn validate(&self, provider_id: &str, roots: &Roots) -> Result<ValidatedProvider> {
        if let Some(e) = self.failure() {
            return Err(e);
        }
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
