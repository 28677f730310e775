//! The engine's own accounting of what a snapshot keeps on the heap: the capacity of every
//! string and list it owns, and its indexes. Allocator overhead is not counted, so a process's
//! resident memory grows by somewhat more than this.

use super::{Adjacency, Capability, ProviderSnapshot};
use crate::definitions::model::{DocumentRef, KnowledgeRef, Locator};
use std::mem::size_of;
use std::sync::Arc;

fn text(s: &String) -> usize {
    s.capacity()
}

fn opt(s: &Option<String>) -> usize {
    s.as_ref().map_or(0, text)
}

fn document(d: &DocumentRef) -> usize {
    let locator = match &d.locator {
        Locator::RelativeFile { path, root, .. } => text(path) + opt(root),
        Locator::Http { url, .. } => text(url),
    };
    size_of::<DocumentRef>()
        + opt(&d.canonical_url)
        + text(&d.knowledge_id)
        + opt(&d.locale)
        + locator
        + text(&d.role)
        + opt(&d.summary)
        + opt(&d.title)
}

fn knowledge(k: &KnowledgeRef) -> usize {
    match k {
        KnowledgeRef::Document(d) => {
            document(d) + size_of::<KnowledgeRef>() - size_of::<DocumentRef>()
        }
        KnowledgeRef::Collection(c) => {
            size_of::<KnowledgeRef>()
                + text(&c.knowledge_id)
                + opt(&c.summary)
                + opt(&c.title)
                + c.members.iter().map(document).sum::<usize>()
        }
    }
}

fn capability(c: &Capability) -> usize {
    c.texts_bytes()
        + c.examples.len() * size_of::<Box<str>>()
        + c.examples.iter().map(|e| e.len()).sum::<usize>()
        + c.knowledge.iter().map(knowledge).sum::<usize>()
}

fn adjacency(a: &Adjacency) -> usize {
    (a.offsets.capacity() + a.targets.capacity()) * size_of::<u32>()
}

/// Heap bytes a snapshot keeps: records, the ID table and relation lists (what is derived from
/// it is counted apart).
pub fn snapshot_bytes(s: &ProviderSnapshot) -> usize {
    let records: usize = s.capabilities.capacity() * size_of::<Arc<Capability>>()
        + s.capabilities.len() * (size_of::<Capability>() + 2 * size_of::<usize>())
        + s.capabilities.iter().map(|c| capability(c)).sum::<usize>();
    let relations = adjacency(&s.relations);
    records + s.by_id.bytes() + relations
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definitions::model::{CapabilityRecord, ProviderRecord, Texts};
    use crate::definitions::ValidatedProvider;
    use crate::snapshot::{AuthorityKind, DocumentRoots};

    fn provider(n: usize, description: &str) -> ProviderSnapshot {
        let capabilities = (0..n)
            .map(|i| CapabilityRecord {
                texts: Texts::new(&format!("c{i:05}"), "Name", description, "When.", None),
                examples: vec!["An example.".into()],
                relations: Default::default(),
                knowledge: Vec::new(),
            })
            .collect();
        let v = ValidatedProvider {
            provider: ProviderRecord {
                name: "P".into(),
                provider_id: "p".into(),
                specification: None,
                version: "1".into(),
            },
            capabilities,
            edges: vec![Default::default(); n],
        };
        ProviderSnapshot::build(v, AuthorityKind::Inline, DocumentRoots::default())
    }

    #[test]
    fn the_accounting_grows_with_what_the_snapshot_holds() {
        let small = snapshot_bytes(&provider(100, "short"));
        let long = snapshot_bytes(&provider(100, &"x".repeat(1000)));
        let more = snapshot_bytes(&provider(1000, "short"));
        assert!(long >= small + 100 * 995, "{small} {long}");
        assert!(more > 9 * small, "{small} {more}");
        // Records, index and relation lists: more than the bare text, within a small factor.
        let text_only = 100 * ("c00000".len() + "Name".len() + 1000 + "When.".len() + 11);
        assert!(
            long > text_only && long < 3 * text_only,
            "{long} vs {text_only}"
        );
    }
}
