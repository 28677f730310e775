//! The per-snapshot lexical index: weighted field postings (BM25F), the sorted vocabulary for
//! shared-stem look-ups, and the multi-word capability names. A pure function of the snapshot.

use super::tokenize::{Piece, Tokenizer};
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
        Field::Name => vec![c.name()],
        Field::Id => vec![c.id()],
        Field::WhenToUse => vec![c.when_to_use()],
        Field::Description => vec![c.description()],
        Field::Examples => c.examples.iter().map(|e| &**e).collect(),
        Field::Distinction => c.distinction().into_iter().collect(),
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
            .map(|&p| s.capability(p).name())
            .collect(),
    }
}

/// Per-snapshot index, built once on first use. Every distinct term is stored once, in a sorted
/// arena; a term's ID is its rank in that order, so the vocabulary serves exact and prefix
/// look-ups alike (a binary search costs a match microseconds; a hash map of the terms would
/// take about six times the memory). The postings of all terms share two arrays.
#[derive(Debug, PartialEq)]
pub struct LexicalIndex {
    /// Every indexed term, sorted (bytewise) and concatenated.
    arena: Box<str>,
    /// Where each term ends in `arena`; term `t` starts where term `t - 1` ends.
    term_ends: Box<[u32]>,
    /// Where each term's postings end in `weights`, likewise.
    posting_ends: Box<[u32]>,
    /// Each posting's saturating weighted term frequency, term by term.
    weights: Box<[f32]>,
    /// Each posting's capability, term by term, ascending: the gap to the previous capability
    /// of the term (to 0 for the first) in LEB128. Most gaps of a frequent term fit in a byte.
    gaps: Box<[u8]>,
    /// Where each term's capabilities end in `gaps`.
    gap_ends: Box<[u32]>,
    /// The term IDs of every multi-word name, one run per entry of `names`.
    name_terms: Box<[u32]>,
    /// Capabilities with a multi-word name, ordered by their name's terms, then capability.
    names: Box<[Name]>,
    pub documents: u32,
}

/// A capability's multi-word name: `len` terms of `name_terms` from `start`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Name {
    start: u32,
    len: u32,
    doc: u32,
}

/// What one thread extracts from its range of capabilities: their terms, interned per range.
struct Chunk {
    /// Range-local term ID → term.
    terms: Vec<Box<str>>,
    /// Local term IDs of every capability in order, field by field.
    tokens: Vec<u32>,
    /// Terms per field, per capability.
    lengths: Vec<[u32; FIELDS]>,
    /// Capabilities containing each local term.
    df: Vec<u32>,
    /// Per local term: its first capability, its last + 1, and the LEB128 bytes of the gaps
    /// between its capabilities, so the postings' bytes are known before they are written.
    first: Vec<u32>,
    last: Vec<u32>,
    gap_bytes: Vec<u32>,
    /// Whether a capability's name is a multi-word (non-CJK) phrase.
    phrase: Vec<bool>,
}

fn tokenize(s: &ProviderSnapshot, nodes: std::ops::Range<u32>) -> Chunk {
    let tokenizer = Tokenizer::new();
    let mut ids: HashMap<Box<str>, u32> = HashMap::new();
    // Word → term ID: a catalog repeats its words, and stemming costs more than a look-up.
    let mut words: HashMap<Box<str>, u32> = HashMap::new();
    let mut chunk = Chunk {
        terms: Vec::new(),
        tokens: transient(0),
        lengths: transient(nodes.len()),
        df: Vec::new(),
        first: Vec::new(),
        last: Vec::new(),
        gap_bytes: Vec::new(),
        phrase: Vec::with_capacity(nodes.len()),
    };
    let mut intern = |term: &str, df: &mut Vec<u32>| match ids.get(term) {
        Some(&id) => id,
        None => {
            let id = ids.len() as u32;
            ids.insert(term.into(), id);
            df.push(0);
            id
        }
    };
    for node in nodes {
        let mut lengths = [0u32; FIELDS];
        let mut cjk_name = false;
        for field in Field::ALL {
            let before = chunk.tokens.len();
            for text in field_texts(s, node, field) {
                tokenizer.scan_pieces(text, |piece| {
                    let id = match piece {
                        Piece::Word(word) => match words.get(word) {
                            Some(&id) => id,
                            None => {
                                let id = intern(&tokenizer.stem(word), &mut chunk.df);
                                words.insert(word.into(), id);
                                id
                            }
                        },
                        Piece::Cjk(term) => {
                            cjk_name |= field == Field::Name;
                            intern(term, &mut chunk.df)
                        }
                    };
                    chunk.tokens.push(id);
                    let id = id as usize;
                    if id == chunk.last.len() {
                        chunk.first.push(node);
                        chunk.last.push(0);
                        chunk.gap_bytes.push(0);
                    }
                    if chunk.last[id] != node + 1 {
                        if chunk.last[id] != 0 {
                            chunk.gap_bytes[id] += gap_len(node + 1 - chunk.last[id]);
                        }
                        chunk.last[id] = node + 1;
                        chunk.df[id] += 1;
                    }
                });
            }
            lengths[field as usize] = (chunk.tokens.len() - before) as u32;
        }
        chunk
            .phrase
            .push(lengths[Field::Name as usize] >= 2 && !cjk_name);
        chunk.lengths.push(lengths);
    }
    chunk.terms = vec![Box::default(); ids.len()];
    for (term, id) in ids {
        chunk.terms[id as usize] = term;
    }
    chunk
}

/// A buffer for work that is dropped when the index is built, with room for at least `len`
/// items. Its capacity is at least [`MAPPED_BYTES`]: glibc's malloc maps a block this large on
/// its own and unmaps it when freed, where a smaller one would stay in the building thread's
/// arena (whose free top `malloc_trim` does not return). Untouched capacity costs no memory.
fn transient<T>(len: usize) -> Vec<T> {
    Vec::with_capacity(len.max(MAPPED_BYTES / std::mem::size_of::<T>()))
}

/// Above glibc's largest dynamic mmap threshold (32 MiB on 64-bit targets). Other allocators
/// return large blocks on their own.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MAPPED_BYTES: usize = 33 << 20;
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
const MAPPED_BYTES: usize = 0;

/// A term's postings, decoded as they are read.
#[derive(Default)]
pub(super) struct Postings<'a> {
    gaps: &'a [u8],
    weights: std::slice::Iter<'a, f32>,
    doc: u32,
}

impl Iterator for Postings<'_> {
    type Item = (u32, f32);

    fn next(&mut self) -> Option<(u32, f32)> {
        let &weight = self.weights.next()?;
        let mut gap = 0u32;
        let mut shift = 0;
        while let Some((&byte, rest)) = self.gaps.split_first() {
            self.gaps = rest;
            gap |= u32::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                break;
            }
            shift += 7;
        }
        self.doc += gap;
        Some((self.doc, weight))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.weights.size_hint()
    }
}

impl ExactSizeIterator for Postings<'_> {}

/// Bytes of `gap` in LEB128.
fn gap_len(gap: u32) -> u32 {
    match gap {
        0..=0x7f => 1,
        0x80..=0x3fff => 2,
        0x4000..=0x1f_ffff => 3,
        0x20_0000..=0xfff_ffff => 4,
        _ => 5,
    }
}

/// Writes `gap` in LEB128 at the start of `out`; returns its length.
fn write_gap(out: &mut [u8], mut gap: u32) -> u32 {
    let mut i = 0;
    while gap >= 0x80 {
        out[i] = (gap & 0x7f) as u8 | 0x80;
        gap >>= 7;
        i += 1;
    }
    out[i] = gap as u8;
    i as u32 + 1
}

/// The sorted union of the chunks' terms as one arena with end offsets, and for each chunk the
/// global ID of each of its local terms. Frees the chunks' own copies of the terms.
fn merge_vocabularies(chunks: &mut [Chunk]) -> (String, Vec<u32>, Vec<Vec<u32>>) {
    let mut all: Vec<(&str, u32, u32)> = transient(chunks.iter().map(|c| c.terms.len()).sum());
    all.extend(chunks.iter().enumerate().flat_map(|(c, chunk)| {
        chunk
            .terms
            .iter()
            .enumerate()
            .map(move |(l, t)| (&**t, c as u32, l as u32))
    }));
    all.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let mut maps: Vec<Vec<u32>> = chunks.iter().map(|c| vec![0; c.terms.len()]).collect();
    let mut arena = String::new();
    let mut ends: Vec<u32> = Vec::new();
    let mut previous: Option<&str> = None;
    for (term, c, l) in all {
        if previous != Some(term) {
            arena.push_str(term);
            ends.push(arena.len() as u32);
            previous = Some(term);
        }
        maps[c as usize][l as usize] = ends.len() as u32 - 1;
    }
    for chunk in chunks.iter_mut() {
        chunk.terms = Vec::new();
    }
    (arena, ends, maps)
}

/// A gate every index build passes first, for tests of what waits for a build: while it is
/// held, builds wait at their start (see the `holdLexicalIndexBuilds` binding); it also counts
/// the builds started, so a test can tell an index reused from one built again.
pub mod gate {
    use std::sync::{Condvar, Mutex};

    struct Gate {
        held: bool,
        builds: u64,
    }

    static GATE: Mutex<Gate> = Mutex::new(Gate {
        held: false,
        builds: 0,
    });
    static OPENED: Condvar = Condvar::new();

    /// Holds (or releases) the builds; returns how many builds have started so far.
    pub fn hold(held: bool) -> u64 {
        let mut gate = GATE.lock().unwrap_or_else(|e| e.into_inner());
        gate.held = held;
        OPENED.notify_all();
        gate.builds
    }

    pub(super) fn pass() {
        let mut gate = GATE.lock().unwrap_or_else(|e| e.into_inner());
        gate.builds += 1;
        while gate.held {
            gate = OPENED.wait(gate).unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl LexicalIndex {
    pub fn build(s: &ProviderSnapshot) -> LexicalIndex {
        gate::pass();
        // Tokenising and stemming dominate; large providers use every core.
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(8) as u32;
        let threads = if s.capabilities.len() < 4096 {
            1
        } else {
            threads
        };
        LexicalIndex::build_in(s, threads)
    }

    /// Builds with `threads` tokenizing threads, each over its range of capabilities. Each
    /// thread keeps its capabilities' terms as IDs of its own small vocabulary, never as strings.
    fn build_in(s: &ProviderSnapshot, threads: u32) -> LexicalIndex {
        let n = s.capabilities.len() as u32;
        let mut chunks: Vec<Chunk> = if threads < 2 {
            vec![tokenize(s, 0..n)]
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
                    .map(|h| h.join().expect("tokenizing does not panic"))
                    .collect()
            })
        };
        let (arena, term_ends, maps) = merge_vocabularies(&mut chunks);

        // Field lengths are summed in capability order: a float sum depends on its order.
        let mut total_len = [0f32; FIELDS];
        for chunk in &chunks {
            for lengths in &chunk.lengths {
                for (i, &len) in lengths.iter().enumerate() {
                    total_len[i] += len as f32;
                }
            }
        }
        let count = (n as usize).max(1) as f32;
        let avg: Vec<f32> = total_len.iter().map(|t| (t / count).max(1.0)).collect();

        // Postings are placed term by term: `cursor` starts at each term's first slot and ends
        // at its last + 1, which is where the term's postings end.
        let mut cursor: Vec<u32> = vec![0; term_ends.len()];
        for (chunk, map) in chunks.iter().zip(&maps) {
            for (l, &df) in chunk.df.iter().enumerate() {
                cursor[map[l] as usize] += df;
            }
        }
        let mut total: u32 = 0;
        for c in cursor.iter_mut() {
            let df = *c;
            *c = total;
            total += df;
        }
        // Likewise for the gaps' bytes. `previous` is each term's last capability placed so far
        // (0 before the first, whose gap is the capability itself).
        let mut gap_cursor: Vec<u32> = vec![0; term_ends.len()];
        let mut previous: Vec<u32> = vec![0; term_ends.len()];
        for (chunk, map) in chunks.iter().zip(&maps) {
            for (l, &g) in map.iter().enumerate() {
                let g = g as usize;
                gap_cursor[g] += gap_len(chunk.first[l] - previous[g]) + chunk.gap_bytes[l];
                previous[g] = chunk.last[l] - 1;
            }
        }
        let mut gap_total: u32 = 0;
        for c in gap_cursor.iter_mut() {
            let bytes = *c;
            *c = gap_total;
            gap_total += bytes;
        }
        previous.fill(0);
        let mut gaps: Vec<u8> = vec![0; gap_total as usize];
        let mut weights: Vec<f32> = vec![0.0; total as usize];
        let mut name_terms: Vec<u32> = Vec::new();
        let mut names: Vec<Name> = Vec::new();
        let mut doc: u32 = 0;
        for (chunk, map) in chunks.into_iter().zip(&maps) {
            // Per capability, each term's weight in the order its occurrences come (fields in
            // order), so the float sums are those of a term-by-term accumulation.
            let mut weighted: Vec<f32> = vec![0.0; map.len()];
            let mut touched: Vec<u32> = Vec::new();
            let mut pos = 0usize;
            for (lengths, phrase) in chunk.lengths.iter().zip(&chunk.phrase) {
                if *phrase {
                    let len = lengths[Field::Name as usize];
                    names.push(Name {
                        start: name_terms.len() as u32,
                        len,
                        doc,
                    });
                    name_terms.extend(
                        chunk.tokens[pos..pos + len as usize]
                            .iter()
                            .map(|&l| map[l as usize]),
                    );
                }
                for field in Field::ALL {
                    let len = lengths[field as usize] as usize;
                    let norm = 1.0 - B + B * len as f32 / avg[field as usize];
                    for &l in &chunk.tokens[pos..pos + len] {
                        crate::opcount::tick(crate::opcount::Op::IndexPosting);
                        let w = &mut weighted[l as usize];
                        // Every addend is positive: zero means not seen yet.
                        if *w == 0.0 {
                            touched.push(l);
                        }
                        *w += field.weight() / norm;
                    }
                    pos += len;
                }
                for l in touched.drain(..) {
                    let wtf = std::mem::take(&mut weighted[l as usize]);
                    let g = map[l as usize] as usize;
                    weights[cursor[g] as usize] = wtf / (K1 + wtf);
                    cursor[g] += 1;
                    let at = gap_cursor[g] as usize;
                    gap_cursor[g] += write_gap(&mut gaps[at..], doc - previous[g]);
                    previous[g] = doc;
                }
                doc += 1;
            }
        }
        drop(previous);
        let name_of = |e: &Name| &name_terms[e.start as usize..(e.start + e.len) as usize];
        names.sort_unstable_by(|a, b| name_of(a).cmp(name_of(b)).then(a.doc.cmp(&b.doc)));
        LexicalIndex {
            arena: arena.into_boxed_str(),
            term_ends: term_ends.into_boxed_slice(),
            posting_ends: cursor.into_boxed_slice(),
            weights: weights.into_boxed_slice(),
            gaps: gaps.into_boxed_slice(),
            gap_ends: gap_cursor.into_boxed_slice(),
            name_terms: name_terms.into_boxed_slice(),
            names: names.into_boxed_slice(),
            documents: n,
        }
    }

    /// Heap bytes the index holds (its own accounting, by capacity).
    pub fn memory_bytes(&self) -> usize {
        use std::mem::size_of_val;
        size_of_val(&*self.arena)
            + size_of_val(&*self.term_ends)
            + size_of_val(&*self.posting_ends)
            + size_of_val(&*self.weights)
            + size_of_val(&*self.gaps)
            + size_of_val(&*self.gap_ends)
            + size_of_val(&*self.name_terms)
            + size_of_val(&*self.names)
    }

    fn term(&self, t: usize) -> &str {
        let start = if t == 0 { 0 } else { self.term_ends[t - 1] };
        &self.arena[start as usize..self.term_ends[t] as usize]
    }

    /// The first term not less than `q`.
    fn lower_bound(&self, q: &str) -> usize {
        let (mut lo, mut hi) = (0, self.term_ends.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.term(mid) < q {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    fn id(&self, term: &str) -> Option<usize> {
        let t = self.lower_bound(term);
        (t < self.term_ends.len() && self.term(t) == term).then_some(t)
    }

    /// (capability, saturating weighted term frequency) of every capability containing
    /// `term`, capabilities ascending.
    pub(super) fn postings(&self, term: &str) -> Postings<'_> {
        let Some(t) = self.id(term) else {
            return Postings::default();
        };
        let end = |ends: &[u32]| ends[t] as usize;
        let start = |ends: &[u32]| if t == 0 { 0 } else { ends[t - 1] as usize };
        Postings {
            gaps: &self.gaps[start(&self.gap_ends)..end(&self.gap_ends)],
            weights: self.weights[start(&self.posting_ends)..end(&self.posting_ends)].iter(),
            doc: 0,
        }
    }

    pub(super) fn df(&self, term: &str) -> usize {
        self.postings(term).len()
    }

    pub(super) fn has_names(&self) -> bool {
        !self.names.is_empty()
    }

    /// The capabilities whose multi-word name is exactly `phrase`, ascending.
    pub(super) fn named(&self, phrase: &[&str]) -> impl Iterator<Item = u32> + '_ {
        let ids: Option<Vec<u32>> = phrase
            .iter()
            .map(|t| self.id(t).map(|t| t as u32))
            .collect();
        let ids = ids.unwrap_or_default();
        let name_of = |e: &Name| &self.name_terms[e.start as usize..(e.start + e.len) as usize];
        let (start, end) = if ids.is_empty() {
            (0, 0)
        } else {
            (
                self.names.partition_point(|e| name_of(e) < ids.as_slice()),
                self.names.partition_point(|e| name_of(e) <= ids.as_slice()),
            )
        };
        self.names[start..end].iter().map(|e| e.doc)
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
        let longer = (self.lower_bound(q)..self.term_ends.len())
            .map(move |t| self.term(t))
            .take_while(move |t| t.starts_with(q))
            .filter(move |t| *t != q && close(t.len(), q.len()));
        let shorter = (min..q.len())
            .filter(move |&n| q.is_char_boundary(n) && close(n, q.len()))
            .map(move |n| &q[..n])
            .filter(move |p| self.id(p).is_some());
        longer.chain(shorter)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tokenize::is_cjk_term;
    use super::*;
    use serde_json::{json, Value};
    use std::collections::BTreeSet;

    fn snapshot(capabilities: Value) -> ProviderSnapshot {
        ProviderSnapshot::of_inline(&json!({
            "providerId": "acme", "name": "Acme", "version": "1", "capabilities": capabilities
        }))
    }

    fn cap(id: &str, name: &str, description: &str) -> Value {
        json!({ "capabilityId": id, "name": name, "description": description,
                "whenToUse": format!("When {name} is needed.") })
    }

    fn billing() -> ProviderSnapshot {
        snapshot(json!([
            cap("billing", "Billing", "Charging customers."),
            {
                "capabilityId": "billing.invoices", "name": "Send invoices",
                "description": "Issues invoices with line items and tax.",
                "whenToUse": "Send a customer a bill.", "parents": ["billing"],
                "examples": ["Invoice the order"], "distinction": "Not refunds."
            },
            cap("billing.refunds", "Issue refunds", "Returns money for an invoice."),
            cap("mail.send", "发送邮件", "Sends mail."),
        ]))
    }

    #[test]
    fn postings_vocabulary_and_names_answer_by_term() {
        let s = billing();
        let index = LexicalIndex::build(&s);
        let docs = |t: &str| index.postings(t).map(|p| p.0).collect::<Vec<_>>();
        assert_eq!(docs("invoic"), [1, 2]);
        assert_eq!(index.df("custom"), 2);
        assert_eq!(index.df("nowher"), 0);
        assert!(index.postings("invoic").all(|p| p.1 > 0.0 && p.1 < 1.0));
        let mut relatives: Vec<&str> = index.prefix_relatives("billing", 4, 0.5).collect();
        relatives.sort_unstable();
        assert_eq!(relatives, ["bill"]);
        assert_eq!(index.named(&["send", "invoic"]).collect::<Vec<_>>(), [1]);
        assert_eq!(index.named(&["issu", "refund"]).collect::<Vec<_>>(), [2]);
        assert_eq!(index.named(&["send", "refund"]).count(), 0);
        assert_eq!(index.named(&["send", "unknown"]).count(), 0);
        // A CJK name is no phrase.
        assert_eq!(index.named(&["发送", "邮件"]).count(), 0);
    }

    #[test]
    fn threads_build_the_same_index() {
        let caps: Vec<Value> = (0..50)
            .map(|i| {
                cap(
                    &format!("area{}.cap{i}", i % 4),
                    &format!("Validate stored payloads {}", i % 7),
                    &format!(
                        "Validates {} payloads and invoices {i}.",
                        ["signed", "nested"][i % 2]
                    ),
                )
            })
            .collect();
        let s = snapshot(Value::Array(caps));
        let one = LexicalIndex::build_in(&s, 1);
        for threads in [2, 3, 8] {
            assert_eq!(
                LexicalIndex::build_in(&s, threads),
                one,
                "{threads} threads"
            );
        }
    }

    #[test]
    fn memory_bytes_counts_every_part_once() {
        let s = billing();
        let index = LexicalIndex::build(&s);
        let tokenizer = Tokenizer::new();
        let mut vocabulary = BTreeSet::new();
        let (mut postings, mut names, mut name_terms) = (0, 0, 0);
        for node in 0..s.capabilities.len() as u32 {
            let mut own = BTreeSet::new();
            for field in Field::ALL {
                for text in field_texts(&s, node, field) {
                    let mut terms = Vec::new();
                    tokenizer.terms(text, &mut terms);
                    if field == Field::Name
                        && terms.len() >= 2
                        && !terms.iter().any(|t| is_cjk_term(t))
                    {
                        names += 1;
                        name_terms += terms.len();
                    }
                    own.extend(terms);
                }
            }
            postings += own.len();
            vocabulary.extend(own);
        }
        let arena: usize = vocabulary.iter().map(String::len).sum();
        // Per term: its end in the arena, in the weights and in the gaps; per posting: a weight
        // and, with fewer than 128 capabilities, a one-byte gap.
        let expected = arena
            + 3 * 4 * vocabulary.len()
            + (4 + 1) * postings
            + 4 * name_terms
            + std::mem::size_of::<Name>() * names;
        assert_eq!((names, name_terms), (2, 4));
        assert_eq!(index.memory_bytes(), expected);
    }

    #[test]
    fn gaps_round_trip_at_every_width() {
        let docs = [
            0,
            1,
            127,
            128,
            16_383,
            16_384,
            3_000_000,
            300_000_000,
            u32::MAX,
        ];
        let mut gaps = [0u8; 64];
        let mut at = 0;
        let mut previous = 0;
        let mut widths = Vec::new();
        for &doc in &docs {
            let written = write_gap(&mut gaps[at..], doc - previous);
            assert_eq!(written, gap_len(doc - previous));
            widths.push(written);
            at += written as usize;
            previous = doc;
        }
        assert_eq!(widths, [1, 1, 1, 1, 2, 1, 4, 5, 5]);
        let weights: Vec<f32> = (0..docs.len()).map(|i| i as f32).collect();
        let read: Vec<(u32, f32)> = Postings {
            gaps: &gaps[..at],
            weights: weights.iter(),
            doc: 0,
        }
        .collect();
        assert_eq!(
            read,
            docs.iter()
                .zip(weights)
                .map(|(&d, w)| (d, w))
                .collect::<Vec<_>>()
        );
        assert_eq!(Postings::default().count(), 0);
    }
}
