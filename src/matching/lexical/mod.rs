//! The built-in lexical executor: ranked retrieval over a capability's fields, offline and
//! deterministic. Text becomes stemmed words and CJK unigrams and bigrams ([`tokenize`]);
//! fields are weighted (BM25F, [`index`]). A capability named by its dotted ID, or by its
//! multi-word name, is strong evidence. Otherwise a candidate is accepted when it covers enough
//! of the request's informative words; see [`confidence`].

mod index;
mod reason;
mod tokenize;

pub use index::gate as index_gate;
pub use index::LexicalIndex;
pub use tokenize::Tokenizer;

use super::mode::{keep_first, Mode, Wanted, MAX_NEAREST};
use crate::snapshot::ProviderSnapshot;
use index::Postings;
use std::cmp::Ordering;
use std::collections::BTreeMap;
pub(crate) use tokenize::is_cjk;
use tokenize::{is_cjk_bigram, is_cjk_term};

/// Default `minScore`: the confidence a capability needs to be selected.
pub const DEFAULT_MIN_SCORE: f64 = 0.3;

/// A selection after the first must score at least this share of the best one.
const RELATIVE_CUTOFF: f64 = 0.35;

/// Credit for a word that matches only by a shared stem prefix (`async` ~ `asynchron`).
const PREFIX_CREDIT: f64 = 0.6;
/// Shortest prefix that counts as a shared stem, and the least share of the longer stem it must
/// be (`rest` is not `restaur`).
const MIN_PREFIX: usize = 4;
const MIN_PREFIX_SHARE: f64 = 0.5;

/// For coverage, inverse document frequency is computed as if the catalog held at least this
/// many capabilities. In a catalog of three, a word every capability shares is still a word the
/// request chose; without a floor it would weigh nothing and nothing could be accepted. Ranking
/// uses the catalog's own frequencies: there, a word every capability shares tells nothing.
const MIN_CATALOG: f64 = 1000.0;

/// A request is never asked to be covered by more than this many of its words (by weight):
/// a long, descriptive request that clearly names what one capability does is accepted.
const LONG_REQUEST_TERMS: f64 = 4.0;

/// A ranked candidate.
#[derive(Clone, Debug, PartialEq)]
pub struct Ranked {
    pub provider: usize,
    pub node: u32,
    pub score: f64,
    /// In 0..=1; compared with `minScore`.
    pub confidence: f64,
    pub reason: String,
    by_id: bool,
    by_name: bool,
}

/// One distinct term of the request.
pub(super) struct QueryTerm {
    pub text: String,
    /// The request's word it came from, for reasons.
    pub word: String,
    /// How much of the request the word is in each provider of the scope (by position), for
    /// coverage: its inverse document frequency among that provider's capabilities (see
    /// [`MIN_CATALOG`]). A provider's capabilities are accepted as they would be alone.
    pub weights: Vec<f64>,
    /// Its inverse document frequency within each provider of the scope (by position), for
    /// ranking, times the provider's scale (see [`provider_scales`]).
    pub rank_weights: Vec<f64>,
    /// Whether it counts towards coverage (a CJK bigram does not: its characters do).
    pub unit: bool,
}

/// What a candidate earned.
#[derive(Default, Clone)]
struct Evidence {
    score: f64,
    covered: f64,
    /// How many of the request's words it contains.
    words: u32,
    /// Named by its dotted ID in the request.
    by_id: bool,
    /// Named by its multi-word name in the request.
    by_name: bool,
}

/// What a ranking found: the candidates kept, best first, ties by provider and capability ID,
/// and, when accept mode kept none, the refused candidates closest to fitting ([`MAX_NEAREST`]
/// at most, highest confidence first).
#[derive(Debug, Default)]
pub struct Ranking {
    pub selected: Vec<Ranked>,
    pub nearest: Vec<Ranked>,
}

/// Ranks the capabilities of `snapshots` (the providers of the scope, in ID order, each with its
/// index in `indexes`) for `intent`. Accept mode keeps at most `limit` candidates whose
/// confidence is at least `min_score` and whose score is near the best; rank mode keeps the
/// best `limit` that share anything with the request. A request without an indexable word has
/// no evidence for any candidate: nothing is kept in either mode.
pub fn rank(
    snapshots: &[&ProviderSnapshot],
    indexes: &[&LexicalIndex],
    intent: &str,
    wanted: Wanted,
) -> Ranking {
    let (mut ranking, terms) = rank_unexplained(snapshots, indexes, intent, wanted);
    for r in ranking.selected.iter_mut().chain(&mut ranking.nearest) {
        r.reason = explain(snapshots, r, &terms);
    }
    ranking
}

/// The request's terms, to explain a ranking afterwards ([`explain`]).
pub struct Terms(Vec<QueryTerm>);

/// The `reason` of `r` (ranked by [`rank_unexplained`] with these `terms`).
pub fn explain(snapshots: &[&ProviderSnapshot], r: &Ranked, terms: &Terms) -> String {
    reason::reason(
        snapshots[r.provider],
        r.provider,
        r.node,
        r.by_id,
        r.by_name,
        &terms.0,
    )
}

/// Best score first; ties by provider ID, then capability ID: `snapshots` are in provider ID
/// order and a snapshot holds its capabilities sorted by ID, so positions order them alike.
fn by_score(a: &Ranked, b: &Ranked) -> Ordering {
    b.score
        .total_cmp(&a.score)
        .then_with(|| (a.provider, a.node).cmp(&(b.provider, b.node)))
}

/// Closest to fitting first: acceptance compares confidence with `minScore`.
fn by_confidence(a: &Ranked, b: &Ranked) -> Ordering {
    b.confidence
        .total_cmp(&a.confidence)
        .then_with(|| by_score(a, b))
}

/// [`rank`] without reasons (each costs a pass over the candidate's fields): for a caller that
/// explains only the candidates it keeps.
pub fn rank_unexplained(
    snapshots: &[&ProviderSnapshot],
    indexes: &[&LexicalIndex],
    intent: &str,
    wanted: Wanted,
) -> (Ranking, Terms) {
    let Wanted {
        limit,
        min_score,
        mode,
    } = wanted;
    let tokenizer = Tokenizer::new();
    let mut sequence: Vec<String> = Vec::new();
    let mut words: BTreeMap<String, String> = BTreeMap::new();
    tokenizer.scan(intent, |term, word| {
        words.entry(term.clone()).or_insert_with(|| word.to_owned());
        sequence.push(term);
    });
    let total_docs: usize = indexes.iter().map(|i| i.documents as usize).sum();
    let scales = provider_scales(indexes, total_docs);
    let terms: Vec<QueryTerm> = words
        .into_iter()
        .map(|(text, word)| {
            let dfs: Vec<usize> = indexes.iter().map(|i| i.df(&text)).collect();
            QueryTerm {
                weights: indexes
                    .iter()
                    .zip(&dfs)
                    .map(|(i, &df)| idf(f64::from(i.documents).max(MIN_CATALOG), df as f64))
                    .collect(),
                rank_weights: indexes
                    .iter()
                    .zip(&dfs)
                    .zip(&scales)
                    .map(|((i, &df), scale)| idf(f64::from(i.documents), df as f64) * scale)
                    .collect(),
                unit: !is_cjk_bigram(&text),
                text,
                word,
            }
        })
        .collect();
    let intent_weights: Vec<f64> = (0..indexes.len())
        .map(|p| terms.iter().filter(|t| t.unit).map(|t| t.weights[p]).sum())
        .collect();
    if !intent_weights.iter().any(|&w| w > 0.0) {
        return (Ranking::default(), Terms(terms));
    }
    let by_id = named_by_id(snapshots, intent);
    let by_name = named_by_name(indexes, &sequence);
    let needed: Vec<f64> = intent_weights
        .iter()
        .map(|&w| needed_weight(w, &terms))
        .collect();
    // Candidates are judged as their evidence is complete. In accept mode only what is accepted
    // and close to the best so far is kept (the best only rises, so nothing dropped could come
    // back), and the refused closest to fitting beside it; in rank mode everything with
    // evidence, cut back to the best `limit` as the list grows.
    let mut ranked: Vec<Ranked> = Vec::new();
    let mut refused: Vec<Ranked> = Vec::new();
    let mut top = 0.0f64;
    let roomy = |n: usize| n.saturating_mul(2).max(PRUNE_AT);
    // Judges a candidate; true when the request names it.
    let mut judge = |(provider, node): (usize, u32), mut e: Evidence| -> bool {
        e.by_id = by_id.binary_search(&(provider, node)).is_ok();
        e.by_name = by_name.binary_search(&(provider, node)).is_ok();
        let named = e.by_id || e.by_name;
        if !(named || e.score > 0.0 || e.covered > 0.0) {
            return false;
        }
        let confidence = confidence(&e, needed[provider]);
        // Naming a capability outranks any amount of shared vocabulary.
        let bonus = scales[provider]
            * if e.by_id {
                2.0 * intent_weights[provider]
            } else if e.by_name {
                0.5 * intent_weights[provider]
            } else {
                0.0
            };
        let candidate = Ranked {
            provider,
            node,
            score: e.score + bonus,
            confidence,
            reason: String::new(),
            by_id: e.by_id,
            by_name: e.by_name,
        };
        let accepted = confidence >= min_score && confidence > 0.0;
        match mode {
            Mode::Rank => {
                ranked.push(candidate);
                if ranked.len() >= roomy(limit) {
                    keep_first(&mut ranked, limit, by_score);
                }
            }
            Mode::Accept if accepted => {
                top = top.max(candidate.score);
                if candidate.score >= top * RELATIVE_CUTOFF {
                    ranked.push(candidate);
                }
            }
            Mode::Accept => {
                refused.push(candidate);
                if refused.len() >= roomy(MAX_NEAREST) {
                    keep_first(&mut refused, MAX_NEAREST, by_confidence);
                }
            }
        }
        named
    };
    let mut named_with_words: Vec<(usize, u32)> = Vec::new();
    term_evidence(indexes, &terms, &mut |key, e| {
        if judge(key, e) {
            named_with_words.push(key);
        }
    });
    // Named candidates that share no word with the request still count.
    let mut unworded: Vec<(usize, u32)> = by_id.iter().chain(&by_name).copied().collect();
    unworded.sort_unstable();
    unworded.dedup();
    unworded.retain(|key| named_with_words.binary_search(key).is_err());
    for key in unworded {
        judge(key, Evidence::default());
    }
    if mode == Mode::Accept {
        ranked.retain(|r| r.score >= top * RELATIVE_CUTOFF);
    }
    // A large catalog can leave many candidates near the best: sort only the first `limit`.
    keep_first(&mut ranked, limit, by_score);
    if ranked.is_empty() {
        keep_first(&mut refused, MAX_NEAREST, by_confidence);
    } else {
        refused.clear();
    }
    let ranking = Ranking {
        selected: ranked,
        nearest: refused,
    };
    (ranking, Terms(terms))
}

/// A candidate list is cut back to what it keeps once it holds this many (or twice what it
/// keeps): memory stays bounded whatever the catalog's size.
const PRUNE_AT: usize = 4096;

/// What each provider's scores are multiplied by so that scores compare across providers: a
/// capability is scored with its own provider's word frequencies, as it would be alone, and
/// the scale makes a word only one capability uses weigh the same in every provider. A
/// provider's words are judged by how it uses them: mixed into a large catalog that never says
/// "payment", a provider whose every other capability takes payments would otherwise find
/// "payment" as telling as its rarest word, and rank by it. With one provider the scale is 1.
fn provider_scales(indexes: &[&LexicalIndex], total_docs: usize) -> Vec<f64> {
    let rarest = idf(total_docs as f64, 1.0);
    indexes
        .iter()
        .map(|index| match f64::from(index.documents) {
            // No postings to weigh.
            0.0 => 1.0,
            n => rarest / idf(n, 1.0),
        })
        .collect()
}

/// BM25's inverse document frequency of a term in `df` of `n` capabilities.
fn idf(n: f64, df: f64) -> f64 {
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

impl Ranked {
    /// Whether the request names it by its dotted ID.
    pub fn by_id(&self) -> bool {
        self.by_id
    }
}

/// The weight of request words a candidate must cover to be fully confident: the whole request,
/// but never more than [`LONG_REQUEST_TERMS`] words' worth of its mean weight.
fn needed_weight(intent_weight: f64, terms: &[QueryTerm]) -> f64 {
    let units = terms.iter().filter(|t| t.unit).count();
    let mean = intent_weight / units.max(1) as f64;
    intent_weight.min(LONG_REQUEST_TERMS * mean)
}

/// How sure the executor is that a candidate is what the request asks for, in 0..=1.
///
/// Named by its dotted ID: 1. Otherwise the share of the request's informative words (each
/// weighted by how rare it is in the catalog) that the candidate contains, where a request is
/// never asked to be covered by more than [`LONG_REQUEST_TERMS`] words' worth of weight; a
/// multi-word name in the request counts as at least half. One shared word is weak evidence
/// (a request about chess rules is not about lifecycle rules): it counts half.
fn confidence(e: &Evidence, needed: f64) -> f64 {
    if e.by_id {
        return 1.0;
    }
    let mut covered = (e.covered / needed).min(1.0);
    if e.words < 2 {
        covered *= 0.5;
    }
    if e.by_name {
        covered.max(0.5)
    } else {
        covered
    }
}

/// One posting list feeding a request term: the term's own postings, a shared-stem relative's,
/// or (for a CJK character) those of a request bigram that contains it.
struct Feed<'a> {
    postings: Postings<'a>,
    /// The list's current capability and its saturating term frequency; `None` once read.
    head: Option<(u32, f32)>,
    /// The request term (its position) the list offers credit for.
    term: usize,
    /// Score per unit of saturating term frequency.
    score: f64,
    /// Covered weight offered to every capability on the list.
    covered: f64,
}

impl<'a> Feed<'a> {
    fn new(mut postings: Postings<'a>, term: usize, score: f64, covered: f64) -> Self {
        Feed {
            head: postings.next(),
            postings,
            term,
            score,
            covered,
        }
    }
}

/// The posting lists that credit each request term in `index`, in request-term order.
fn feeds<'a>(index: &'a LexicalIndex, p: usize, terms: &'a [QueryTerm]) -> Vec<Feed<'a>> {
    let mut feeds = Vec::new();
    for (k, term) in terms.iter().enumerate() {
        let cover = if term.unit { term.weights[p] } else { 0.0 };
        let rank_weight = term.rank_weights[p];
        feeds.push(Feed::new(index.postings(&term.text), k, rank_weight, cover));
        if term.unit && is_cjk_term(&term.text) {
            for bigram in terms
                .iter()
                .filter(|t| !t.unit && t.text.contains(term.text.as_str()))
            {
                feeds.push(Feed::new(
                    index.postings(&bigram.text),
                    k,
                    0.0,
                    term.weights[p],
                ));
            }
        } else if term.unit && term.text.len() >= MIN_PREFIX {
            let (rank, w) = (rank_weight * PREFIX_CREDIT, term.weights[p] * PREFIX_CREDIT);
            for relative in index.prefix_relatives(&term.text, MIN_PREFIX, MIN_PREFIX_SHARE) {
                feeds.push(Feed::new(index.postings(relative), k, rank, w));
            }
        }
    }
    feeds
}

/// Capabilities scored together: the accumulators of a window stay in the processor's cache,
/// where one accumulator per capability of a large catalog would make every posting a miss.
const WINDOW: u32 = 4096;

/// Per-candidate accumulator: totals over terms, and the best credit of the current term.
#[derive(Clone, Copy, Default)]
struct Slot {
    score: f64,
    covered: f64,
    words: u32,
    /// Which term `term_score` and `term_covered` belong to (its position + 1).
    stamp: u32,
    term_score: f64,
    term_covered: f64,
}

/// Hands `judge` the score and covered weight of every candidate sharing a term with the
/// request, by provider and capability ascending. Each unit term adds the best credit any of
/// its forms earns in a candidate: itself, a shared-stem relative, or (for a CJK character) a
/// matching bigram of the request that contains it; bigrams add score only. Terms are added in
/// request order, a window of capabilities at a time.
fn term_evidence(
    indexes: &[&LexicalIndex],
    terms: &[QueryTerm],
    judge: &mut impl FnMut((usize, u32), Evidence),
) {
    let mut slots = vec![Slot::default(); WINDOW as usize];
    let mut local: Vec<u32> = Vec::new();
    // The window's candidates, one bit each: read in order, they need no sorting.
    let mut touched = [0u64; WINDOW as usize / 64];
    for (p, index) in indexes.iter().enumerate() {
        let mut feeds = feeds(index, p, terms);
        // Windows no list reaches are skipped.
        while let Some(first) = feeds
            .iter()
            .filter_map(|f| f.head)
            .map(|(doc, _)| doc)
            .min()
        {
            let base = first - first % WINDOW;
            let end = base.saturating_add(WINDOW);
            for group in feeds.chunk_by_mut(|a, b| a.term == b.term) {
                let stamp = group[0].term as u32 + 1;
                for feed in group {
                    while let Some((doc, sat)) = feed.head.filter(|&(doc, _)| doc < end) {
                        let s = &mut slots[(doc - base) as usize];
                        if s.stamp != stamp {
                            s.stamp = stamp;
                            s.term_score = 0.0;
                            s.term_covered = 0.0;
                            local.push(doc - base);
                        }
                        s.term_score = s.term_score.max(feed.score * f64::from(sat));
                        s.term_covered = s.term_covered.max(feed.covered);
                        feed.head = feed.postings.next();
                    }
                }
                for at in local.drain(..) {
                    let s = &mut slots[at as usize];
                    touched[at as usize / 64] |= 1 << (at % 64);
                    s.score += s.term_score;
                    s.covered += s.term_covered;
                    if s.term_covered > 0.0 {
                        s.words += 1;
                    }
                }
            }
            for (w, bits) in touched.iter_mut().enumerate() {
                while *bits != 0 {
                    let at = w as u32 * 64 + bits.trailing_zeros();
                    *bits &= *bits - 1;
                    let s = std::mem::take(&mut slots[at as usize]);
                    let e = Evidence {
                        score: s.score,
                        covered: s.covered,
                        words: s.words,
                        ..Evidence::default()
                    };
                    judge((p, base + at), e);
                }
            }
        }
    }
}

/// Dotted capability IDs written in the request (`objects.checksum`, `eval.objstore::objects.get`,
/// or the ID behind leading words such as a provider name: `objstore.objects.get`). A single
/// word is never taken for an ID: it is an ordinary word of the request.
fn named_by_id(snapshots: &[&ProviderSnapshot], intent: &str) -> Vec<(usize, u32)> {
    let mut found = Vec::new();
    let is_id_char = |c: char| c.is_alphanumeric() || matches!(c, '.' | '-' | '_' | ':');
    for token in intent.split(|c: char| !is_id_char(c)) {
        let token = token.trim_matches(|c: char| matches!(c, '.' | '-' | '_' | ':'));
        let (provider, id) = match token.split_once("::") {
            Some((p, id)) => (Some(p), id),
            None => (None, token),
        };
        if !id.contains('.') {
            continue;
        }
        for (p, s) in snapshots.iter().enumerate() {
            if provider.is_some_and(|want| want != s.provider_id()) {
                continue;
            }
            let mut rest = id;
            while rest.contains('.') {
                if let Some(node) = s.find(rest) {
                    found.push((p, node));
                    break;
                }
                rest = match rest.split_once('.') {
                    Some((_, r)) => r,
                    None => break,
                };
            }
        }
    }
    found.sort_unstable();
    found.dedup();
    found
}

/// Capabilities whose multi-word name appears, word for word, in the request.
fn named_by_name(indexes: &[&LexicalIndex], sequence: &[String]) -> Vec<(usize, u32)> {
    let mut found = Vec::new();
    for (p, index) in indexes.iter().enumerate() {
        if !index.has_names() {
            continue;
        }
        for start in 0..sequence.len() {
            let mut phrase: Vec<&str> = vec![&sequence[start]];
            for next in sequence.iter().skip(start + 1).take(5) {
                phrase.push(next);
                found.extend(index.named(&phrase).map(|d| (p, d)));
            }
        }
    }
    found.sort_unstable();
    found.dedup();
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn provider(id: &str, capabilities: Vec<Value>) -> ProviderSnapshot {
        ProviderSnapshot::of_inline(&json!({
            "providerId": id, "name": id, "version": "1", "capabilities": capabilities
        }))
    }

    fn cap(id: &str, name: &str, description: &str) -> Value {
        json!({ "capabilityId": id, "name": name, "description": description,
                "whenToUse": format!("Use {name}.") })
    }

    /// A shop where "payment" is in most capabilities and "callback" in two.
    fn shop() -> ProviderSnapshot {
        provider(
            "shop",
            vec![
                cap(
                    "payments.checkout",
                    "Payment checkout",
                    "Takes a payment through the payment processor.",
                ),
                cap(
                    "payments.refunds",
                    "Payment refunds",
                    "Returns a payment to the buyer.",
                ),
                cap(
                    "payments.plans",
                    "Recurring payment plans",
                    "Takes a payment every month.",
                ),
                cap(
                    "payments.invoices",
                    "Payment invoices",
                    "Bills a payment that is due later.",
                ),
                cap(
                    "webhooks.signature",
                    "Webhook signatures",
                    "Verifies that incoming callbacks are genuine.",
                ),
                cap(
                    "webhooks.incoming",
                    "Incoming webhooks",
                    "Receives callbacks from other services.",
                ),
                cap("mail.send", "Send mail", "Sends transactional mail."),
            ],
        )
    }

    /// A large provider that shares none of the shop's words.
    fn crowd(n: usize) -> ProviderSnapshot {
        let capabilities = (0..n)
            .map(|i| {
                cap(
                    &format!("area{}.item{i}", i / 40),
                    &format!("Gadget {} widget", i % 97),
                    &format!("Frobnicates quux{} with zorb{}.", i % 13, i % 29),
                )
            })
            .collect();
        provider("crowd", capabilities)
    }

    fn accept(limit: usize) -> Wanted {
        Wanted {
            limit,
            min_score: DEFAULT_MIN_SCORE,
            mode: Mode::Accept,
        }
    }

    /// Each snapshot's index, as matching builds it.
    fn indexes(snapshots: &[&ProviderSnapshot]) -> Vec<LexicalIndex> {
        snapshots.iter().map(|s| LexicalIndex::build(s)).collect()
    }

    fn top(snapshots: &[&ProviderSnapshot], intent: &str) -> Vec<String> {
        let built = indexes(snapshots);
        let indexes: Vec<&LexicalIndex> = built.iter().collect();
        rank(snapshots, &indexes, intent, accept(3))
            .selected
            .iter()
            .map(|r| {
                format!(
                    "{}::{}",
                    snapshots[r.provider].provider_id(),
                    snapshots[r.provider].capability(r.node).id()
                )
            })
            .collect()
    }

    #[test]
    fn a_provider_mixed_into_a_large_catalog_ranks_its_own_capabilities_as_alone() {
        let (shop, crowd) = (shop(), crowd(2000));
        let intent = "verify callbacks claiming to come from the payment processor";
        let alone = top(&[&shop], intent);
        assert_eq!(alone[0], "shop::webhooks.signature");
        // A word most of the shop's capabilities share tells as little beside 2,000 others
        // that never use it as it does in the shop alone.
        assert_eq!(top(&[&crowd, &shop], intent), alone);
    }

    #[test]
    fn a_provider_accepts_alike_alone_and_in_a_large_catalog() {
        let (shop, crowd) = (shop(), crowd(2000));
        let judged = |snapshots: &[&ProviderSnapshot], intent: &str| -> Vec<(String, String)> {
            let built = indexes(snapshots);
            let indexes: Vec<&LexicalIndex> = built.iter().collect();
            rank(snapshots, &indexes, intent, accept(10))
                .selected
                .iter()
                .map(|r| {
                    let s = snapshots[r.provider];
                    (
                        s.capability(r.node).id().to_owned(),
                        format!("{:.6}", r.confidence),
                    )
                })
                .collect()
        };
        for intent in [
            "verify callbacks claiming to come from the payment processor",
            "send the buyer a transactional mail once the payment is refunded",
            "bill the invoice later",
        ] {
            let alone = judged(&[&shop], intent);
            assert!(!alone.is_empty(), "{intent}");
            // How much of the request a capability covers is judged by its provider's words:
            // a catalog of 2,000 others that never use them neither raises nor lowers it.
            assert_eq!(judged(&[&crowd, &shop], intent), alone, "{intent}");
        }
    }

    fn ids(snapshot: &ProviderSnapshot, found: &[Ranked]) -> Vec<String> {
        found
            .iter()
            .map(|r| snapshot.capability(r.node).id().to_owned())
            .collect()
    }

    #[test]
    fn rank_mode_keeps_the_best_limit_that_accept_mode_refuses() {
        let shop = shop();
        let built = indexes(&[&shop]);
        let indexes: Vec<&LexicalIndex> = built.iter().collect();
        // One shared word each: weak evidence, refused in accept mode.
        let intent = "payment for a chess tournament";
        let accepted = rank(&[&shop], &indexes, intent, accept(5));
        assert!(accepted.selected.is_empty());
        let ranked = rank(
            &[&shop],
            &indexes,
            intent,
            Wanted {
                limit: 2,
                min_score: DEFAULT_MIN_SCORE,
                mode: Mode::Rank,
            },
        );
        assert_eq!(
            ranked.selected.len(),
            2,
            "the best `limit`, whatever their score"
        );
        assert!(ranked.nearest.is_empty(), "rank mode refuses nothing");
        assert!(ranked.selected[0].score >= ranked.selected[1].score);
        assert!(ranked.selected.iter().all(|r| !r.reason.is_empty()));
        // What accept mode refused closest to fitting is what rank mode ranks, by confidence.
        assert_eq!(accepted.nearest.len(), 3, "at most three of the four");
        assert!(accepted
            .nearest
            .windows(2)
            .all(|w| w[0].confidence >= w[1].confidence));
        assert!(accepted
            .nearest
            .iter()
            .all(|r| r.confidence < DEFAULT_MIN_SCORE && r.reason.contains("payment")));
    }

    #[test]
    fn an_answer_lists_no_nearest_and_a_request_without_words_has_no_evidence() {
        let shop = shop();
        let built = indexes(&[&shop]);
        let indexes: Vec<&LexicalIndex> = built.iter().collect();
        let found = rank(&[&shop], &indexes, "send transactional mail", accept(5));
        assert_eq!(ids(&shop, &found.selected), ["mail.send"]);
        assert!(found.nearest.is_empty());
        for mode in [Mode::Accept, Mode::Rank] {
            let wanted = Wanted {
                limit: 5,
                min_score: DEFAULT_MIN_SCORE,
                mode,
            };
            for intent in ["the of and", "zzzz qqqq"] {
                let none = rank(&[&shop], &indexes, intent, wanted);
                assert!(
                    none.selected.is_empty() && none.nearest.is_empty(),
                    "{intent}"
                );
            }
        }
    }
}
