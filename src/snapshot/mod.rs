//! Immutable provider snapshots: capabilities sorted by ID (found by binary search), the eight
//! relation adjacencies (declared and derived inverse) and the static revision, all built once at load.

mod id_index;
pub mod revision;
pub mod side;
pub mod size;

use crate::definitions::model::{KnowledgeRef, ProviderRecord, Texts};
use crate::definitions::ValidatedProvider;
use crate::fsx::beneath::RootDir;
use std::path::Path;
use std::sync::Arc;

/// The eight neighbour kinds, in their fixed order (reference/definitions.md §5.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Parents,
    Children,
    Specializes,
    SpecializedBy,
    Related,
    RelatedBy,
    Requires,
    RequiredBy,
}

impl Kind {
    pub const ALL: [Kind; 8] = [
        Kind::Parents,
        Kind::Children,
        Kind::Specializes,
        Kind::SpecializedBy,
        Kind::Related,
        Kind::RelatedBy,
        Kind::Requires,
        Kind::RequiredBy,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Parents => "parents",
            Kind::Children => "children",
            Kind::Specializes => "specializes",
            Kind::SpecializedBy => "specializedBy",
            Kind::Related => "related",
            Kind::RelatedBy => "relatedBy",
            Kind::Requires => "requires",
            Kind::RequiredBy => "requiredBy",
        }
    }
}

/// Adjacency lists in compressed form: the targets of node `i` are
/// `targets[offsets[i]..offsets[i + 1]]`, sorted by ID.
#[derive(Debug, Default)]
pub struct Adjacency {
    offsets: Vec<u32>,
    targets: Vec<u32>,
}

impl Adjacency {
    fn from_lists<'a>(n: usize, lists: impl Iterator<Item = &'a [u32]>) -> Adjacency {
        let mut offsets = Vec::with_capacity(n + 1);
        let mut targets = Vec::new();
        offsets.push(0);
        for list in lists {
            targets.extend_from_slice(list);
            offsets.push(targets.len() as u32);
        }
        Adjacency { offsets, targets }
    }

    /// The inverse of `forward`: sources are visited in ID order, so each list stays sorted.
    fn inverse_of(forward: &Adjacency) -> Adjacency {
        let n = forward.offsets.len() - 1;
        let mut counts = vec![0u32; n + 1];
        for &t in &forward.targets {
            counts[t as usize + 1] += 1;
        }
        for i in 0..n {
            counts[i + 1] += counts[i];
        }
        let offsets = counts.clone();
        let mut fill = counts;
        let mut targets = vec![0u32; forward.targets.len()];
        for source in 0..n {
            for &t in forward.of(source as u32) {
                targets[fill[t as usize] as usize] = source as u32;
                fill[t as usize] += 1;
            }
        }
        Adjacency { offsets, targets }
    }

    pub fn of(&self, node: u32) -> &[u32] {
        let (a, b) = (self.offsets[node as usize], self.offsets[node as usize + 1]);
        &self.targets[a as usize..b as usize]
    }

    /// The eight kinds' lists in one table, a node's side by side: list `8 * node + kind`.
    /// Details and neighbour pages read all eight lists of one capability, which then sit in
    /// one or two cache lines instead of sixteen places across the snapshot.
    fn interleave(kinds: [Adjacency; 8]) -> Adjacency {
        let n = kinds[0].offsets.len() - 1;
        let mut offsets = Vec::with_capacity(8 * n + 1);
        let mut targets = Vec::with_capacity(kinds.iter().map(|a| a.targets.len()).sum());
        offsets.push(0);
        for node in 0..n as u32 {
            for a in &kinds {
                targets.extend_from_slice(a.of(node));
                offsets.push(targets.len() as u32);
            }
        }
        Adjacency { offsets, targets }
    }
}

/// One capability as served.
#[derive(Debug)]
pub struct Capability {
    /// ID, name, description, whenToUse and distinction, in one allocation (see [`Texts`]).
    texts: Texts,
    pub examples: Box<[Box<str>]>,
    pub knowledge: Box<[KnowledgeRef]>,
    /// Which texts JSON prints as they are, decided once here, so answers copy them without
    /// scanning for characters to escape.
    pub plain: Plain,
}

impl Capability {
    fn new(c: crate::definitions::model::CapabilityRecord) -> Capability {
        let mut capability = Capability {
            texts: c.texts,
            examples: c.examples.into_iter().map(Into::into).collect(),
            knowledge: c.knowledge.into(),
            plain: Plain::default(),
        };
        capability.plain = Plain::of(&capability);
        capability
    }

    pub fn id(&self) -> &str {
        self.texts.capability_id()
    }

    pub fn name(&self) -> &str {
        self.texts.name()
    }

    pub fn description(&self) -> &str {
        self.texts.description()
    }

    pub fn when_to_use(&self) -> &str {
        self.texts.when_to_use()
    }

    pub fn distinction(&self) -> Option<&str> {
        self.texts.distinction()
    }

    /// Heap bytes of the texts.
    pub fn texts_bytes(&self) -> usize {
        self.texts.bytes()
    }
}

/// A capability's texts that JSON prints as they are (see [`crate::json::prints_as_is`]): one
/// bit per text; the examples share one.
#[derive(Clone, Copy, Debug, Default)]
pub struct Plain(u8);

impl Plain {
    pub const NAME: u8 = 1;
    pub const DESCRIPTION: u8 = 2;
    pub const WHEN_TO_USE: u8 = 4;
    pub const DISTINCTION: u8 = 8;
    pub const EXAMPLES: u8 = 16;

    fn of(c: &Capability) -> Plain {
        use crate::json::prints_as_is;
        let bit = |text: &str, bit: u8| if prints_as_is(text) { bit } else { 0 };
        Plain(
            bit(c.name(), Plain::NAME)
                | bit(c.description(), Plain::DESCRIPTION)
                | bit(c.when_to_use(), Plain::WHEN_TO_USE)
                | c.distinction().map_or(0, |d| bit(d, Plain::DISTINCTION))
                | if c.examples.iter().all(|e| prints_as_is(e)) {
                    Plain::EXAMPLES
                } else {
                    0
                },
        )
    }

    pub fn has(self, bit: u8) -> bool {
        self.0 & bit != 0
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthorityKind {
    Inline,
    File,
    Database,
}

impl AuthorityKind {
    pub fn as_str(self) -> &'static str {
        match self {
            AuthorityKind::Inline => "inline",
            AuthorityKind::File => "file",
            AuthorityKind::Database => "database",
        }
    }
}

/// A trusted root bound at load: the directory handle every document beneath it is opened
/// through, and what it was bound to (`directory`, or a package's name, version and manifest
/// hash) so a later read can tell it changed.
#[derive(Debug, Clone)]
pub struct BoundRoot {
    pub handle: Arc<RootDir>,
    pub identity: String,
    /// The npm package name for a package root.
    pub package: Option<String>,
}

impl BoundRoot {
    /// The real path it was opened at (never an output, never reopened by name).
    pub fn dir(&self) -> &Path {
        self.handle.real_path()
    }
}

/// Where a snapshot's documents are read from; never part of any output. The handles stay
/// open as long as the snapshot does.
#[derive(Debug, Default)]
pub struct DocumentRoots {
    /// The file provider's root, an inline provider's `documentRoot` or a database view's
    /// `knowledgeRootDir`.
    pub default_root: Option<Arc<RootDir>>,
    /// `knowledgeRoots` aliases, bound.
    pub aliases: Vec<(String, BoundRoot)>,
}

/// Two snapshots read documents from the same place when their roots were opened at the same
/// real paths and bound to the same identities (the handles themselves are never compared).
impl PartialEq for DocumentRoots {
    fn eq(&self, other: &DocumentRoots) -> bool {
        let path = |root: &Option<Arc<RootDir>>| root.as_ref().map(|r| r.real_path().to_owned());
        path(&self.default_root) == path(&other.default_root)
            && self.aliases.len() == other.aliases.len()
            && self
                .aliases
                .iter()
                .zip(&other.aliases)
                .all(|((a, x), (b, y))| {
                    a == b
                        && x.identity == y.identity
                        && x.package == y.package
                        && x.dir() == y.dir()
                })
    }
}

/// A record an incremental read rewrote in place: its node, the record, and its declared
/// relation lists (parents, specializes, related, requires) as nodes.
pub type ReplacedRecord = (
    u32,
    crate::definitions::model::CapabilityRecord,
    [Vec<u32>; 4],
);

/// A validated provider as one immutable value; queries hold it through an `Arc`. It holds what
/// was validated and what queries read, nothing more (SPEC D28): what is derived from it or
/// kept beside it between reloads lives with whoever derives or keeps it.
#[derive(Debug)]
pub struct ProviderSnapshot {
    pub provider: ProviderRecord,
    pub authority: AuthorityKind,
    pub static_revision: String,
    /// Shared, not copied, by the next snapshot of an incremental read that did not change them.
    pub capabilities: Vec<Arc<Capability>>,
    by_id: id_index::IdIndex,
    /// Every relation list, kinds interleaved (see [`Adjacency::interleave`]).
    relations: Adjacency,
    pub roots: DocumentRoots,
}

impl ProviderSnapshot {
    pub fn build(
        v: ValidatedProvider,
        authority: AuthorityKind,
        roots: DocumentRoots,
    ) -> ProviderSnapshot {
        let n = v.capabilities.len();
        let forward: [Adjacency; 4] = std::array::from_fn(|r| {
            Adjacency::from_lists(n, v.edges.iter().map(|e| e[r].as_slice()))
        });
        let capabilities: Vec<Arc<Capability>> = v
            .capabilities
            .into_iter()
            .map(|c| Arc::new(Capability::new(c)))
            .collect();
        let by_id = id_index::IdIndex::new(&capabilities);
        ProviderSnapshot::assemble(v.provider, authority, capabilities, by_id, forward, roots)
    }

    /// The snapshot of `provider` and its `capabilities` (in ID order, `by_id` their table) with
    /// the declared relation lists `forward` (parents, specializes, related, requires); the
    /// inverse lists and the static revision are derived here, the same way whatever the read.
    fn assemble(
        provider: ProviderRecord,
        authority: AuthorityKind,
        capabilities: Vec<Arc<Capability>>,
        by_id: id_index::IdIndex,
        forward: [Adjacency; 4],
        roots: DocumentRoots,
    ) -> ProviderSnapshot {
        let [parents, specializes, related, requires] = forward;
        let adjacency = [
            Adjacency::inverse_of(&parents),
            Adjacency::inverse_of(&specializes),
            Adjacency::inverse_of(&related),
            Adjacency::inverse_of(&requires),
        ];
        let [children, specialized_by, related_by, required_by] = adjacency;
        let relations = Adjacency::interleave([
            parents,
            children,
            specializes,
            specialized_by,
            related,
            related_by,
            requires,
            required_by,
        ]);
        let static_revision =
            revision::static_revision_of_snapshot(&provider, &capabilities, |node, kind| {
                relations.of(8 * node + kind as u32)
            });
        ProviderSnapshot {
            provider,
            authority,
            static_revision,
            by_id,
            capabilities,
            relations,
            roots,
        }
    }

    /// The snapshot this one becomes when each record of `changed` (by node, in increasing
    /// order, with its declared relation lists — parents, specializes, related, requires — as
    /// nodes) replaces its own while every capability ID stays where it is: the other
    /// capabilities are shared and the ID table copied, not rebuilt. The relation lists and the
    /// static revision are derived as [`ProviderSnapshot::build`] derives them.
    pub fn replaced(
        &self,
        provider: ProviderRecord,
        changed: Vec<ReplacedRecord>,
        roots: DocumentRoots,
    ) -> ProviderSnapshot {
        let n = self.capabilities.len();
        let forward: [Adjacency; 4] = std::array::from_fn(|r| {
            Adjacency::from_lists(
                n,
                (0..n as u32).map(|node| self.declared(&changed, node, r)),
            )
        });
        let mut capabilities = self.capabilities.clone();
        for (node, record, _) in changed {
            capabilities[node as usize] = Arc::new(Capability::new(record));
        }
        let by_id = self.by_id.clone();
        ProviderSnapshot::assemble(
            provider,
            self.authority,
            capabilities,
            by_id,
            forward,
            roots,
        )
    }

    /// The declared relation list `r` (parents, specializes, related, requires) of `node` once
    /// `changed` (see [`ProviderSnapshot::replaced`]) replaced its records.
    pub fn declared<'a>(&'a self, changed: &'a [ReplacedRecord], node: u32, r: usize) -> &'a [u32] {
        const KINDS: [Kind; 4] = [
            Kind::Parents,
            Kind::Specializes,
            Kind::Related,
            Kind::Requires,
        ];
        match changed.binary_search_by_key(&node, |c| c.0) {
            Ok(j) => &changed[j].2[r],
            Err(_) => self.neighbours(node, KINDS[r]),
        }
    }

    /// The snapshot of an inline definition without document roots, for unit tests.
    #[cfg(test)]
    pub fn of_inline(definition: &serde_json::Value) -> ProviderSnapshot {
        let roots = crate::definitions::Roots {
            aliases: &[],
            default_root: false,
        };
        let v = crate::definitions::validate_provider(definition, None, &roots).unwrap();
        ProviderSnapshot::build(v, AuthorityKind::Inline, DocumentRoots::default())
    }

    /// Closes the handles of every trusted root of this snapshot: nothing beneath them can be
    /// opened any more, even by a query still holding the snapshot.
    pub fn close_roots(&self) {
        let aliases = self.roots.aliases.iter().map(|(_, r)| &r.handle);
        for root in self.roots.default_root.iter().chain(aliases) {
            root.close();
        }
    }

    pub fn provider_id(&self) -> &str {
        &self.provider.provider_id
    }

    pub fn find(&self, capability_id: &str) -> Option<u32> {
        self.by_id.find(&self.capabilities, capability_id)
    }

    pub fn capability(&self, node: u32) -> &Capability {
        &self.capabilities[node as usize]
    }

    /// The validated record capability `node` was built from, as validation gave it: a reload
    /// that did not change the record takes it from here instead of checking it again.
    pub fn record(&self, node: u32) -> crate::definitions::model::CapabilityRecord {
        use crate::definitions::model::{CapabilityRecord, Relations};
        let c = &self.capabilities[node as usize];
        let ids = |kind: Kind| -> Vec<&str> {
            self.neighbours(node, kind)
                .iter()
                .map(|&t| self.capabilities[t as usize].id())
                .collect()
        };
        CapabilityRecord {
            texts: c.texts.clone(),
            examples: c.examples.iter().map(|e| e.to_string()).collect(),
            relations: Relations::new(&[
                ids(Kind::Parents),
                ids(Kind::Specializes),
                ids(Kind::Related),
                ids(Kind::Requires),
            ]),
            knowledge: c.knowledge.to_vec(),
        }
    }

    pub fn neighbours(&self, node: u32, kind: Kind) -> &[u32] {
        self.relations.of(8 * node + kind as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_lists_are_sorted_and_complete() {
        // 0 -> {1, 2}, 1 -> {2}, 3 -> {0}
        let lists: Vec<Vec<u32>> = vec![vec![1, 2], vec![2], vec![], vec![0]];
        let fwd = Adjacency::from_lists(4, lists.iter().map(|l| l.as_slice()));
        let inv = Adjacency::inverse_of(&fwd);
        assert_eq!(inv.of(0), &[3]);
        assert_eq!(inv.of(1), &[0]);
        assert_eq!(inv.of(2), &[0, 1]);
        assert_eq!(inv.of(3), &[] as &[u32]);
    }

    #[test]
    fn interleaved_lists_are_each_kind_s_own() {
        let lists = |seed: u32| -> Vec<Vec<u32>> {
            (0..5u32)
                .map(|i| (0..(i + seed) % 3).map(|j| (i + j + seed) % 5).collect())
                .collect()
        };
        let kinds: [Adjacency; 8] = std::array::from_fn(|k| {
            let l = lists(k as u32);
            Adjacency::from_lists(5, l.iter().map(|l| l.as_slice()))
        });
        let expected: Vec<Vec<Vec<u32>>> = (0..8).map(|k| lists(k as u32)).collect();
        let all = Adjacency::interleave(kinds);
        for node in 0..5u32 {
            for (k, lists) in expected.iter().enumerate() {
                assert_eq!(all.of(8 * node + k as u32), lists[node as usize].as_slice());
            }
        }
    }
}
