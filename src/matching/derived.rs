//! What matching derives from a published snapshot — its lexical index, its capability vectors,
//! and the vectors its source offered until a build takes them — kept beside the snapshot,
//! never in it (SPEC D28). Each snapshot has one entry, built once and shared by every `match`
//! on it; an entry goes once its snapshot is gone ([`DerivedTable::prune`]).

use super::lexical::LexicalIndex;
use super::semantic::file::Offered;
use super::semantic::Vectors;
use crate::snapshot::side::SideTable;
use crate::snapshot::ProviderSnapshot;
use std::sync::{Arc, Mutex, OnceLock};

/// What matching derived from one snapshot.
#[derive(Debug, Default)]
pub struct Derived {
    /// Built once: in the background after open or reload when a built-in executor is
    /// configured, else by the first `match` that needs it.
    lexical: OnceLock<LexicalIndex>,
    /// The semantic executor's capability vectors, once built.
    vectors: OnceLock<Vectors>,
    /// The vectors the snapshot's source offered, until the semantic executor's build of the
    /// snapshot takes them.
    offered: Mutex<Option<Offered>>,
}

impl Derived {
    /// The lexical index of `snapshot` (the one this entry is of), built on first use.
    pub fn lexical(&self, snapshot: &ProviderSnapshot) -> &LexicalIndex {
        self.lexical.get_or_init(|| LexicalIndex::build(snapshot))
    }

    /// The lexical index, if it is built.
    pub fn lexical_built(&self) -> Option<&LexicalIndex> {
        self.lexical.get()
    }

    /// Whether the lexical index is built.
    pub fn lexical_ready(&self) -> bool {
        self.lexical_built().is_some()
    }

    /// The capability vectors, once built (see [`super::semantic::Semantic`]).
    pub fn vectors(&self) -> Option<&Vectors> {
        self.vectors.get()
    }

    pub fn set_vectors(&self, vectors: Vectors) {
        let _ = self.vectors.set(vectors);
    }

    /// The vectors the source offered, taken once.
    pub fn take_offered(&self) -> Option<Offered> {
        self.offered
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }
}

/// One graph's [`Derived`] entries, by snapshot.
#[derive(Debug, Default)]
pub struct DerivedTable(SideTable<Arc<Derived>>);

impl DerivedTable {
    /// The entry of `snapshot`, made empty if it has none yet.
    pub fn of(&self, snapshot: &Arc<ProviderSnapshot>) -> Arc<Derived> {
        self.0.get_or_insert_with(snapshot, Arc::default)
    }

    /// The entry of `snapshot`, if it has one.
    pub fn get(&self, snapshot: &ProviderSnapshot) -> Option<Arc<Derived>> {
        self.0.get(snapshot)
    }

    /// Hands the vectors `snapshot`'s source offered to its entry.
    pub fn offer(&self, snapshot: &Arc<ProviderSnapshot>, offered: Offered) {
        *self
            .of(snapshot)
            .offered
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(offered);
    }

    /// Drops the entries of snapshots that are gone.
    pub fn prune(&self) {
        self.0.prune();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::side::tests::snapshot;

    #[test]
    fn a_snapshot_s_index_is_built_once_and_shared() {
        let table = DerivedTable::default();
        let (first, second) = (snapshot(), snapshot());
        let entry = table.of(&first);
        assert!(table.get(&second).is_none());
        assert!(!entry.lexical_ready());
        let index: *const LexicalIndex = entry.lexical(&first);
        let again = table.get(&first).unwrap();
        assert!(again.lexical_ready());
        assert!(std::ptr::eq(again.lexical(&first), index));
        assert!(!table.of(&second).lexical_ready());
    }

    #[test]
    fn offered_vectors_are_taken_once() {
        let table = DerivedTable::default();
        let s = snapshot();
        table.offer(&s, Offered::Absent);
        let entry = table.get(&s).unwrap();
        assert!(matches!(entry.take_offered(), Some(Offered::Absent)));
        assert!(entry.take_offered().is_none());
    }
}
