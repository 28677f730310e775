//! The semantic executor (SPEC §14 D21): capability vectors, built once per snapshot in the
//! background and cached by a hash of (model, text), scored in Rust on int8 vectors and fused
//! with the lexical evidence. Vectors come from the first-party encoder (on engine threads) or
//! from a host embedder (on the JS thread, in batches the engine hands out and judges); both feed
//! the same builds and the same scoring.

pub mod build;
pub mod file;
mod score;

pub use build::{Batch, Semantic};
pub use score::{rank, Ranking, Scored};

use crate::config::model::MODEL_PACKAGE;
use crate::snapshot::Capability;

/// Default `minScore`: the fused score (cosine + [`LEXICAL_WEIGHT`] × lexical confidence, that
/// confidence counted from [`LEXICAL_GATE`]) the best capability needs for an answer; the ones
/// after it need [`FOLLOWER_SHARE`] of it. The weight, the gate and the threshold were chosen on
/// the tuning half of the match evaluation.
pub const DEFAULT_MIN_SCORE: f64 = 0.3;
/// Once the best capability reaches `minScore`, the ones after it need this share of
/// `minScore`. The encoder places many a paraphrase's capability just below the threshold
/// beside a neighbour just above it: listing it costs the host a few lines, where holding it
/// back loses the answer. On the tuning half any share up to two thirds gave the same figures
/// (top-3 +1.8 points at provider size, no-match answers unchanged); half is in the middle.
pub const FOLLOWER_SHARE: f64 = 0.5;
/// How much the lexical executor's confidence adds to the cosine.
pub const LEXICAL_WEIGHT: f64 = 0.5;
/// The least lexical confidence that adds anything: a request covered by the capability's own
/// words is strong evidence, a word or two in common is not (it misleads more paraphrases than
/// it helps).
pub const LEXICAL_GATE: f64 = 0.7;
/// What ranks: the cosine fused with the lexical evidence (the executor), or the cosine alone.
/// `Dense` is an evaluation option (`signals: 'dense'`): it measures the encoder on its own, with
/// no named ID, CJK answer or lexical confidence; hosts keep `Fused`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signals {
    Fused,
    Dense,
}

impl Signals {
    pub fn name(self) -> &'static str {
        match self {
            Signals::Fused => "fused",
            Signals::Dense => "dense",
        }
    }
}

/// The first-party encoder's package is not installed: `CG_MODEL_UNAVAILABLE` / `check_config`
/// naming it (SPEC §14 D18).
pub fn package_missing(package: &str) -> crate::error::GraphError {
    let error = crate::error::GraphError::new(crate::error::Code::ModelUnavailable)
        .with_action(crate::error::NextAction::CheckConfig)
        .detail("reason", "model_package_missing");
    crate::error::with_missing_package(error, Some(package))
}

/// Loads the first-party encoder from its package's folder: files missing are the package
/// missing; files that are not a model this encoder runs are a broken package (its reason, never
/// a path).
pub fn load_encoder(dir: &std::path::Path) -> crate::error::Result<std::sync::Arc<dyn Embed>> {
    use crate::encoder::{Encoder, LoadError};
    match Encoder::load(dir) {
        Ok(encoder) => Ok(std::sync::Arc::new(encoder)),
        Err(LoadError::Missing) => Err(package_missing(MODEL_PACKAGE)),
        Err(LoadError::Corrupt { .. }) => {
            Err(package_missing(MODEL_PACKAGE).detail("reason", "model_package_corrupt"))
        }
    }
}

impl Embed for crate::encoder::Encoder {
    fn id(&self) -> &str {
        crate::encoder::Encoder::id(self)
    }
    fn dimensions(&self) -> usize {
        crate::encoder::Encoder::dimensions(self)
    }
    fn embed(
        &self,
        texts: &[&str],
        threads: usize,
        cancelled: &dyn Fn() -> bool,
    ) -> Option<Vec<f32>> {
        crate::encoder::Encoder::embed(self, texts, threads, cancelled)
    }
}

/// Where vectors come from: the first-party encoder, or a test's own.
pub trait Embed: Send + Sync {
    fn id(&self) -> &str;
    fn dimensions(&self) -> usize;
    /// L2-normalised rows, texts × dimensions; `None` when it failed or was cancelled.
    fn embed(
        &self,
        texts: &[&str],
        threads: usize,
        cancelled: &dyn Fn() -> bool,
    ) -> Option<Vec<f32>>;
}

/// The quantised vectors of one snapshot, a row per capability: 1 byte per dimension and a
/// scale per row (≤ 512 B per capability for 384 dimensions, with the text hash).
#[derive(Debug)]
pub struct Vectors {
    pub model: String,
    pub dims: usize,
    pub data: Vec<i8>,
    pub scales: Vec<f32>,
    pub hashes: Vec<TextHash>,
}

impl Vectors {
    pub fn row(&self, i: usize) -> &[i8] {
        &self.data[i * self.dims..(i + 1) * self.dims]
    }

    pub fn memory_bytes(&self) -> usize {
        self.data.capacity() + 4 * self.scales.capacity() + 16 * self.hashes.capacity()
    }
}

/// What identifies one embedded text: blake3 of the model, its dimensions and the text,
/// cut to 16 bytes.
pub type TextHash = [u8; 16];

pub fn text_hash(model: &str, dims: usize, text: &str) -> TextHash {
    let mut h = blake3::Hasher::new();
    h.update(&(model.len() as u64).to_le_bytes());
    h.update(model.as_bytes());
    h.update(&(dims as u64).to_le_bytes());
    h.update(text.as_bytes());
    let mut out = [0u8; 16];
    out.copy_from_slice(&h.finalize().as_bytes()[..16]);
    out
}

/// `text` cut to at most `max` bytes, at a character boundary.
pub fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// What is embedded for a capability: its name, description, whenToUse and examples; never a
/// document body. Its ID's words are left to the lexical evidence and its distinction (what it
/// is not) out: on the tuning half both moved paraphrases away from their capability.
pub fn capability_text(c: &Capability, max_bytes: usize) -> String {
    let mut parts: Vec<&str> = vec![c.name(), c.description(), c.when_to_use()];
    parts.extend(c.examples.iter().map(|e| &**e));
    let mut text = String::new();
    for p in parts.iter().map(|p| p.trim()).filter(|p| !p.is_empty()) {
        if text.ends_with(['.', '!', '?', '。', '！', '？']) {
            text.push(' ');
        } else if !text.is_empty() {
            text.push_str(". ");
        }
        text.push_str(p);
        if text.len() >= max_bytes {
            break;
        }
    }
    let end = cut(&text, max_bytes).trim_end().len();
    text.truncate(end);
    text
}

/// A row as int8 with its scale, after L2 normalisation; `None` for a row that is not a
/// direction (non-finite values, all zero).
pub fn quantise(row: &[f32]) -> Option<(f32, Vec<i8>)> {
    let norm = row
        .iter()
        .map(|x| f64::from(*x) * f64::from(*x))
        .sum::<f64>()
        .sqrt();
    if !norm.is_finite() || norm <= f64::MIN_POSITIVE {
        return None;
    }
    let max = row
        .iter()
        .map(|x| (f64::from(*x) / norm).abs())
        .fold(0.0, f64::max);
    let scale = max / 127.0;
    let q = row
        .iter()
        .map(|x| {
            ((f64::from(*x) / norm) / scale)
                .round()
                .clamp(-127.0, 127.0) as i8
        })
        .collect();
    Some((scale as f32, q))
}

/// The cosine of two quantised rows.
pub fn cosine(a: &[i8], scale_a: f32, b: &[i8], scale_b: f32) -> f64 {
    let dot: i32 = a
        .iter()
        .zip(b)
        .map(|(x, y)| i32::from(*x) * i32::from(*y))
        .sum();
    f64::from(dot) * f64::from(scale_a) * f64::from(scale_b)
}

/// A deterministic embedder for tests: hashed bags of words and character trigrams.
#[cfg(test)]
pub mod testing {
    pub struct Hashed(pub usize);

    impl super::Embed for Hashed {
        fn id(&self) -> &str {
            "hashed-test"
        }
        fn dimensions(&self) -> usize {
            self.0
        }
        fn embed(
            &self,
            texts: &[&str],
            _: usize,
            cancelled: &dyn Fn() -> bool,
        ) -> Option<Vec<f32>> {
            let mut out = vec![0f32; texts.len() * self.0];
            for (i, t) in texts.iter().enumerate() {
                if cancelled() {
                    return None;
                }
                for w in t.to_lowercase().split(|c: char| !c.is_alphanumeric()) {
                    if w.len() < 3 {
                        continue;
                    }
                    let h = blake3::hash(&w.as_bytes()[..w.len().min(5)]);
                    let k = u32::from_le_bytes(h.as_bytes()[..4].try_into().unwrap()) as usize;
                    out[i * self.0 + k % self.0] += 1.0;
                }
                out[i * self.0] += 0.01;
            }
            Some(out)
        }
    }
}

#[cfg(test)]
mod tests;
