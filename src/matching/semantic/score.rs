//! Scoring: the cosine of the intent's vector with every capability's, plus half the lexical
//! executor's confidence where that confidence is high. A capability named by its dotted ID comes first whatever its
//! vector says; a request in CJK text that the lexical executor serves keeps its answer (an
//! English sentence encoder does not understand it). Whether to answer at all is decided on
//! the best capability alone (`minScore`); the ones after it need only [`FOLLOWER_SHARE`] of it.

use super::{cosine, quantise, Signals, Vectors, FOLLOWER_SHARE, LEXICAL_GATE, LEXICAL_WEIGHT};
use crate::matching::lexical::{self, LexicalIndex, Ranked};
use crate::matching::mode::{keep_first, Mode, Wanted, MAX_NEAREST};
use crate::snapshot::ProviderSnapshot;
use std::cmp::Ordering;
use std::collections::HashMap;

/// Lexical candidates whose confidence joins the fused score.
const LEXICAL_POOL: usize = 32;
const REASON_MAX_BYTES: usize = 256;
/// The description's words quoted in a reason.
const QUOTE_MAX_BYTES: usize = 96;

/// A selection of the semantic executor.
pub struct Scored {
    pub provider: usize,
    pub node: u32,
    pub confidence: f64,
    pub reason: String,
}

fn has_cjk(text: &str) -> bool {
    text.chars().any(lexical::is_cjk)
}

/// What the semantic executor found: its selections and, when accept mode found none, the
/// capabilities closest to the threshold ([`MAX_NEAREST`] at most, best first).
#[derive(Default)]
pub struct Ranking {
    pub selected: Vec<Scored>,
    pub nearest: Vec<Scored>,
}

/// A fused score with its capability (provider and node positions).
type Fused = (f64, usize, u32);

/// Best first; ties by provider and capability ID (positions order them alike).
fn by_score(a: &Fused, b: &Fused) -> Ordering {
    b.0.total_cmp(&a.0)
        .then_with(|| (a.1, a.2).cmp(&(b.1, b.2)))
}

/// The best `wanted.limit` capabilities of `snapshots` (with their lexical `indexes` and their
/// `vectors`) for `intent`, whose vector is `query`; `None` when `query` is not a vector of the
/// model's dimensions. Accept mode answers when the best reaches `minScore`; rank mode keeps
/// every capability with a positive fused score (the evidence an embedding gives). With
/// [`Signals::Dense`] the lexical executor is not asked: the cosine alone ranks and accepts.
pub fn rank(
    snapshots: &[&ProviderSnapshot],
    indexes: &[&LexicalIndex],
    vectors: &[&Vectors],
    intent: &str,
    query: &[f32],
    wanted: Wanted,
    signals: Signals,
) -> Option<Ranking> {
    let Wanted {
        limit,
        min_score,
        mode,
    } = wanted;
    let dims = vectors.first().map_or(query.len(), |v| v.dims);
    if query.len() != dims || vectors.iter().any(|v| v.dims != dims) {
        return None;
    }
    let (qscale, q) = quantise(query)?;
    let pool = Wanted {
        limit: LEXICAL_POOL.max(limit),
        min_score: 0.0,
        mode: Mode::Accept,
    };
    let asked = (signals == Signals::Fused)
        .then(|| lexical::rank_unexplained(snapshots, indexes, intent, pool));
    let lexical: &[Ranked] = asked.as_ref().map_or(&[], |(l, _)| &l.selected);
    let explain = |r: &Ranked| {
        asked
            .as_ref()
            .map(|(_, terms)| lexical::explain(snapshots, r, terms))
            .unwrap_or_default()
    };
    let mut out: Vec<Scored> = lexical
        .iter()
        .filter(|r| r.by_id())
        .map(|r| Scored {
            provider: r.provider,
            node: r.node,
            confidence: 1.0,
            reason: explain(r),
        })
        .collect();
    if has_cjk(intent)
        && lexical
            .iter()
            .any(|r| r.confidence >= lexical::DEFAULT_MIN_SCORE)
    {
        out.extend(
            lexical
                .iter()
                .filter(|r| !r.by_id() && r.confidence >= lexical::DEFAULT_MIN_SCORE)
                .take(limit.saturating_sub(out.len()))
                .map(|r| Scored {
                    provider: r.provider,
                    node: r.node,
                    confidence: r.confidence,
                    reason: explain(r),
                }),
        );
        out.truncate(limit);
        // Rank mode fills what is left by meaning.
        if mode == Mode::Accept {
            return Some(Ranking {
                selected: out,
                nearest: Vec::new(),
            });
        }
    }
    let by_key: HashMap<(usize, u32), &Ranked> =
        lexical.iter().map(|r| ((r.provider, r.node), r)).collect();
    // Every capability's fused score from `floor` of cosine up, kept from `least` (and above 0).
    let scan = |floor: f64, least: f64| -> Vec<Fused> {
        let mut fused = Vec::new();
        for (p, v) in vectors.iter().enumerate() {
            for (i, (row, scale)) in v.data.chunks_exact(v.dims).zip(&v.scales).enumerate() {
                let cos = cosine(&q, qscale, row, *scale);
                if cos < floor {
                    continue;
                }
                let node = i as u32;
                let lex = by_key
                    .get(&(p, node))
                    .map_or(0.0, |r| r.confidence)
                    .max(0.0);
                let lex = if lex >= LEXICAL_GATE { lex } else { 0.0 };
                let score = cos + LEXICAL_WEIGHT * lex;
                if score >= least && score > 0.0 {
                    fused.push((score, p, node));
                }
            }
        }
        fused
    };
    let described = |(score, p, node): Fused| Scored {
        provider: p,
        node,
        confidence: score.clamp(0.0, 1.0),
        reason: reason(
            snapshots[p],
            node,
            by_key.get(&(p, node)).map(|r| explain(r)).as_deref(),
        ),
    };
    let mut fused = match mode {
        Mode::Rank => scan(f64::NEG_INFINITY, 0.0),
        Mode::Accept => {
            let follower = min_score * FOLLOWER_SHARE;
            // Lexical evidence adds at most LEXICAL_WEIGHT: a capability further below the
            // followers' threshold than that is out whatever its words, and is never looked up.
            scan(follower - LEXICAL_WEIGHT, follower)
        }
    };
    // The answer stands on its best capability: below `minScore` it is no match (a named ID
    // still answers), and the nearest are the best of every capability.
    let mut nearest = Vec::new();
    if mode == Mode::Accept && !fused.iter().any(|f| f.0 >= min_score) {
        fused.clear();
        if out.is_empty() {
            let mut all = scan(f64::NEG_INFINITY, 0.0);
            keep_first(&mut all, MAX_NEAREST, by_score);
            nearest = all.into_iter().map(described).collect();
        }
    }
    keep_first(&mut fused, limit, by_score);
    for f in fused {
        if out.len() >= limit {
            break;
        }
        if out.iter().any(|s| (s.provider, s.node) == (f.1, f.2)) {
            continue;
        }
        out.push(described(f));
    }
    out.truncate(limit);
    Some(Ranking {
        selected: out,
        nearest,
    })
}

/// "close in meaning to \"<description words>\"", then what the lexical executor matched.
fn reason(s: &ProviderSnapshot, node: u32, words: Option<&str>) -> String {
    let c = s.capability(node);
    let text = if c.description().trim().is_empty() {
        c.name()
    } else {
        c.description()
    };
    let mut quote = super::cut(text.trim(), QUOTE_MAX_BYTES).to_owned();
    if quote.len() < text.trim().len() {
        // End on a whole word where there is one.
        if let Some(at) = quote.rfind(' ').filter(|at| *at > QUOTE_MAX_BYTES / 2) {
            quote.truncate(at);
        }
        quote.push('…');
    }
    let quote = quote.replace('"', "'");
    let mut out = format!("close in meaning to \"{quote}\"");
    if let Some(w) = words {
        let joined = format!("{out}; {w}");
        out = super::cut(&joined, REASON_MAX_BYTES).to_owned();
    }
    super::cut(&out, REASON_MAX_BYTES).to_owned()
}
