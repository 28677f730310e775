//! The per-snapshot lexical index: weighted field postings (BM25F), the sorted vocabulary for
//! shared-stem look-ups, and the multi-word capability names. A pure function of the snapshot.

use super::tokenize::{is_cjk_term, Tokenizer};
use crate::snapshot::{Capability, Kind, ProviderSnapshot};
use std::collections::HashMap;

/// BM25 saturation and length normalisation.
const K1: f32 = 1.2;
const B: f32 = 0.5;

/// The indexed fields of a capability.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Name,
    Id,
    WhenToUse,
    Description,
    Examples,
    Distinction,
    KnowledgeTitles,
    ParentNames,
}

pub const FIELDS: usize = 8;

impl Field {
    pub const ALL: [Field; FIELDS] = [
        Field::Name,
        Field::Id,
        Field::WhenToUse,
        Field::Description,
        Field::Examples,
        Field::Distinction,
        Field::KnowledgeTitles,
        Field::ParentNames,
    ];

    /// What a capability is called and when to use it count most. A distinction often names
    /// what the capability is *not*, and a parent's name is shared by all its children, so
    /// both count least.
    fn weight(self) -> f32 {
        match self {
            Field::Name => 3.0,
            Field::Id => 2.5,
            Field::WhenToUse => 2.0,
            Field::Description => 1.5,
            Field::Examples => 1.0,
            Field::KnowledgeTitles => 1.0,
            Field::ParentNames => 0.5,
            Field::Distinction => 0.3,
        }
    }

    /// The name a reason uses for the field.
    pub fn label(self) -> &'static str {
        match self {
            Field::Name => "name",
            Field::Id => "id",
            Field::WhenToUse => "whenToUse",
            Field::Description => "description",
            Field::Examples => "examples",
            Field::Distinction => "distinction",
            Field::KnowledgeTitles => "knowledge titles",
            Field::ParentNames => "parent names",
        }
    }
}

/// The texts of one field of capability `node`.
pub fn field_texts(s: &ProviderSnapshot, node: u32, field: Field) -> Vec<&str> {
    let c: &Capability = s.capability(node);
    match field {
        Field::Name => vec![&c.name],
        Field::Id => vec![&c.id],
        Field::WhenToUse => vec![&c.when_to_use],
        Field::Description => vec![&c.description],
        Field::Examples => c.examples.iter().map(String::as_str).collect(),
        Field::Distinction => c.distinction.as_deref().into_iter().collect(),
        Field::KnowledgeTitles => c
            .knowledge
            .iter()
            .filter_map(|k| match k {
                crate::definitions::model::KnowledgeRef::Document(d) => d.title.as_deref(),
                crate::definitions::model::KnowledgeRef::Collection(c) => c.title.as_deref(),
            })
            .collect(),
        Field::ParentNames => s
            .neighbours(node, Kind::Parents)
            .iter()
            .map(|&p| s.capability(p).name.as_str())
            .collect(),
    }
}

/// Per-snapshot index, built once on first use.
#[derive(Debug)]
pub struct LexicalIndex {
    /// term → (capability, saturating weighted term frequency)
    postings: HashMap<String, Vec<(u32, f32)>>,
    /// Every indexed term, sorted, for prefix look-ups.
    vocabulary: Vec<String>,
    /// The stemmed terms of a multi-word name, joined by spaces → the capabilities so named.
    pub(super) names: HashMap<String, Vec<u32>>,
    pub documents: u32,
}

type Fields = [Vec<String>; FIELDS];

fn tokenize(s: &ProviderSnapshot, nodes: std::ops::Range<u32>) -> Vec<(Fields, Option<String>)> {
    let tokenizer = Tokenizer::new();
    nodes
        .map(|node| {
            let mut f: Fields = Default::default();
            for field in Field::ALL {
                for text in field_texts(s, node, field) {
                    tokenizer.terms(text, &mut f[field as usize]);
                }
            }
            let name = &f[Field::Name as usize];
            let phrase =
                (name.len() >= 2 && !name.iter().any(|t| is_cjk_term(t))).then(|| name.join(" "));
            (f, phrase)
        })
        .collect()
}

impl LexicalIndex {
    pub fn build(s: &ProviderSnapshot) -> LexicalIndex {
        let n = s.capabilities.len() as u32;
        // Tokenising and stemming dominate; large providers use every core.
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(8) as u32;
        let docs: Vec<(Fields, Option<String>)> = if n < 4096 || threads < 2 {
            tokenize(s, 0..n)
        } else {
            let chunk = n.div_ceil(threads);
            std::thread::scope(|scope| {
                let parts: Vec<_> = (0..threads)
                    .map(|t| {
                        let range = (t * chunk).min(n)..((t + 1) * chunk).min(n);
                        scope.spawn(move || tokenize(s, range))
                    })
                    .collect();
                parts
                    .into_iter()
                    .flat_map(|h| h.join().unwrap_or_default())
                    .collect()
            })
        };
        let mut total_len = [0f32; FIELDS];
        for (f, _) in &docs {
            for (i, terms) in f.iter().enumerate() {
                total_len[i] += terms.len() as f32;
            }
        }
        let count = docs.len().max(1) as f32;
        let avg: Vec<f32> = total_len.iter().map(|t| (t / count).max(1.0)).collect();
        let mut postings: HashMap<String, Vec<(u32, f32)>> = HashMap::new();
        let mut names: HashMap<String, Vec<u32>> = HashMap::new();
        let mut weighted: HashMap<&str, f32> = HashMap::new();
        for (doc, (f, phrase)) in docs.iter().enumerate() {
            weighted.clear();
            for field in Field::ALL {
                let terms = &f[field as usize];
                let norm = 1.0 - B + B * terms.len() as f32 / avg[field as usize];
                for t in terms {
                    *weighted.entry(t.as_str()).or_default() += field.weight() / norm;
                }
            }
            // Sorted, so postings and vocabulary do not depend on hash order.
            let mut entries: Vec<(&str, f32)> = weighted.iter().map(|(t, w)| (*t, *w)).collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            for (t, wtf) in entries {
                let entry = (doc as u32, wtf / (K1 + wtf));
                // Look up first: most terms are already known, and a key costs an allocation.
                match postings.get_mut(t) {
                    Some(list) => list.push(entry),
                    None => {
                        postings.insert(t.to_owned(), vec![entry]);
                    }
                }
            }
            if let Some(p) = phrase {
                names.entry(p.clone()).or_default().push(doc as u32);
            }
        }
        let mut vocabulary: Vec<String> = postings.keys().cloned().collect();
        vocabulary.sort_unstable();
        LexicalIndex {
            postings,
            vocabulary,
            names,
            documents: n,
        }
    }

    pub(super) fn postings(&self, term: &str) -> &[(u32, f32)] {
        self.postings.get(term).map_or(&[], Vec::as_slice)
    }

    pub(super) fn df(&self, term: &str) -> usize {
        self.postings(term).len()
    }

    /// Index terms that share a stem prefix with `q` (each direction), without `q` itself: the
    /// shorter is at least `min` bytes long and at least `share` of the longer.
    pub(super) fn prefix_relatives<'a>(
        &'a self,
        q: &'a str,
        min: usize,
        share: f64,
    ) -> impl Iterator<Item = &'a str> + 'a {
        let close = move |a: usize, b: usize| a.min(b) as f64 >= share * a.max(b) as f64;
        let longer = {
            let start = self.vocabulary.partition_point(|t| t.as_str() < q);
            self.vocabulary[start..]
                .iter()
                .take_while(move |t| t.starts_with(q))
                .map(String::as_str)
                .filter(move |t| *t != q && close(t.len(), q.len()))
        };
        let shorter = (min..q.len())
            .filter(move |&n| q.is_char_boundary(n) && close(n, q.len()))
            .map(move |n| &q[..n])
            .filter(move |p| self.postings.contains_key(*p));
        longer.chain(shorter)
    }
}
