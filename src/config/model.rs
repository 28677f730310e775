//! What a model is to the config and to the vectors built with it: its ID (also a file name),
//! its dimensions, and the package of the first-party encoder's weights.

/// The most dimensions an embedder may give a vector.
pub const MAX_DIMENSIONS: u64 = 4096;

/// The optional package holding the first-party encoder's weights.
pub const MODEL_PACKAGE: &str = "@devcodex/capability-graph-minilm";

/// The longest model ID, in bytes.
pub const MAX_MODEL_BYTES: usize = 128;

/// A model ID that names a file: `/`-separated segments of letters, digits, `.`, `_` and `-`,
/// each starting with a letter or digit (so none is `.` or `..`), at most 128 bytes in all
/// (the first-party encoder's is `all-MiniLM-L6-v2/int8-1-<crc>`).
pub fn is_model_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_MODEL_BYTES
        && id.split('/').all(|segment| {
            segment.starts_with(|c: char| c.is_ascii_alphanumeric())
                && segment
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        })
}
