//! Tables beside the snapshots (SPEC D28): whoever derives something from a snapshot or keeps
//! something with it between reloads holds it in a table of its own, keyed by the snapshot's
//! identity, instead of in the snapshot. An entry goes when its owner removes it or, at the
//! latest, at the first [`SideTable::prune`] after its snapshot is gone.

use super::ProviderSnapshot;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// Values of type `T` by snapshot. A snapshot is known by its address: each entry holds a weak
/// reference to its snapshot, which keeps that address from being given to another snapshot
/// while the entry lives and tells when the snapshot is gone.
#[derive(Debug)]
pub struct SideTable<T> {
    entries: Mutex<HashMap<usize, (Weak<ProviderSnapshot>, T)>>,
}

impl<T> Default for SideTable<T> {
    fn default() -> Self {
        SideTable {
            entries: Mutex::default(),
        }
    }
}

fn key(snapshot: &ProviderSnapshot) -> usize {
    snapshot as *const ProviderSnapshot as usize
}

impl<T: Clone> SideTable<T> {
    fn lock(&self) -> MutexGuard<'_, HashMap<usize, (Weak<ProviderSnapshot>, T)>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The value of `snapshot`, if it has one.
    pub fn get(&self, snapshot: &ProviderSnapshot) -> Option<T> {
        self.lock().get(&key(snapshot)).map(|(_, v)| v.clone())
    }

    /// The value of `snapshot`, made by `make` if it has none yet.
    pub fn get_or_insert_with(
        &self,
        snapshot: &Arc<ProviderSnapshot>,
        make: impl FnOnce() -> T,
    ) -> T {
        self.lock()
            .entry(key(snapshot))
            .or_insert_with(|| (Arc::downgrade(snapshot), make()))
            .1
            .clone()
    }

    pub fn insert(&self, snapshot: &Arc<ProviderSnapshot>, value: T) {
        self.lock()
            .insert(key(snapshot), (Arc::downgrade(snapshot), value));
    }

    pub fn remove(&self, snapshot: &ProviderSnapshot) -> Option<T> {
        self.lock().remove(&key(snapshot)).map(|(_, v)| v)
    }

    /// Drops the entries of snapshots that are gone (the store let them go and no call still
    /// holds them).
    pub fn prune(&self) {
        self.lock().retain(|_, (s, _)| s.strong_count() > 0);
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// A snapshot of one capability, for tests of tables beside it.
    pub(crate) fn snapshot() -> Arc<ProviderSnapshot> {
        Arc::new(ProviderSnapshot::of_inline(&json!({
            "providerId": "p", "name": "P", "version": "1",
            "capabilities": [{ "capabilityId": "a", "name": "A", "description": "Does a.", "whenToUse": "For a." }],
        })))
    }

    #[test]
    fn each_snapshot_has_its_own_entry_until_it_is_gone() {
        let table = SideTable::default();
        let (first, second) = (snapshot(), snapshot());
        assert_eq!(table.get_or_insert_with(&first, || 1), 1);
        assert_eq!(table.get_or_insert_with(&first, || 2), 1);
        assert_eq!(table.get(&second), None);
        table.insert(&second, 3);
        assert_eq!((table.get(&first), table.get(&second)), (Some(1), Some(3)));
        table.prune();
        assert_eq!(table.len(), 2, "both snapshots live");
        drop(first);
        table.prune();
        assert_eq!(table.len(), 1);
        assert_eq!(table.remove(&second), Some(3));
        assert!(table.is_empty());
    }
}
