//! Capability ID → node, so a named capability is found in one probe rather than a binary search
//! whose every step is a cache miss in a large snapshot. The table holds node numbers only; the
//! IDs it is keyed by stay in the records.

use super::Capability;
use hashbrown::HashTable;
use std::hash::BuildHasher;
use std::sync::Arc;

#[derive(Clone, Debug)]
pub struct IdIndex {
    table: HashTable<u32>,
}

/// Fixed seed: the same table on every run (nothing observable depends on it, but a profile
/// or a failure is reproducible).
const HASHER: foldhash::fast::FixedState = foldhash::fast::FixedState::with_seed(0x6367);

fn hash(id: &str) -> u64 {
    HASHER.hash_one(id)
}

impl IdIndex {
    pub fn new(capabilities: &[Arc<Capability>]) -> IdIndex {
        let mut table = HashTable::with_capacity(capabilities.len());
        for (node, c) in capabilities.iter().enumerate() {
            table.insert_unique(hash(c.id()), node as u32, |&n| {
                hash(capabilities[n as usize].id())
            });
        }
        IdIndex { table }
    }

    pub fn find(&self, capabilities: &[Arc<Capability>], id: &str) -> Option<u32> {
        self.table
            .find(hash(id), |&n| capabilities[n as usize].id() == id)
            .copied()
    }

    /// Heap bytes of the table.
    pub fn bytes(&self) -> usize {
        self.table.allocation_size()
    }
}

#[cfg(test)]
mod tests {
    use crate::snapshot::ProviderSnapshot;
    use serde_json::json;

    #[test]
    fn every_capability_is_found_by_its_id_and_nothing_else() {
        let capabilities: Vec<_> = (0..300)
            .map(|i| json!({ "capabilityId": format!("c{i}.x"), "name": "N", "description": "D", "whenToUse": "W" }))
            .collect();
        let definition = json!({ "providerId": "acme", "name": "Acme", "version": "1", "capabilities": capabilities });
        let s = ProviderSnapshot::of_inline(&definition);
        for node in 0..300u32 {
            assert_eq!(s.find(s.capability(node).id()), Some(node));
        }
        for absent in ["", "c1", "c1.", "c300.x", "C1.x", "c1.x ", "acme::c1.x"] {
            assert_eq!(s.find(absent), None, "{absent}");
        }
    }
}
