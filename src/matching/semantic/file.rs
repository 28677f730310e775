//! The vectors file a provider may ship beside `provider.json`: `vectors/<model-id>.bin`,
//! written by `capability-graph embed`. Never trusted: an entry is used only when its model
//! and the hash of the text it was embedded from match the capability's text today (see
//! [`super::text_hash`]); a file that does not parse is ignored whole.
//!
//! Layout, little-endian:
//! ```text
//! magic   8 bytes  "CGVECTS\0"
//! version u32      1
//! model   u32 length (1..=128), then the model ID (UTF-8)
//! dims    u32      (1..=4096)
//! count   u32      entries that follow
//! entry   u16 length (1..=512), then the capability ID (UTF-8)
//!         16 bytes  text hash
//!         f32       scale (finite, > 0): component = int8 × scale
//!         dims × i8 the vector
//! ```

use super::{TextHash, Vectors, MAX_DIMENSIONS};
use crate::snapshot::ProviderSnapshot;
use std::io::Read;

pub const MAGIC: &[u8; 8] = b"CGVECTS\0";
pub const VERSION: u32 = 1;
const MAX_MODEL_BYTES: usize = 128;
const MAX_ID_BYTES: usize = 512;
/// The most entries a file may hold.
const MAX_ENTRIES: u64 = 10_000_000;

/// What became of a provider's vectors file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileStatus {
    Absent,
    /// Read; `used` of its entries matched.
    Read {
        entries: u32,
    },
    /// Another model's or dimensions: ignored.
    Foreign,
    /// Not a vectors file, truncated or over its bounds: ignored.
    Corrupt,
}

impl FileStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            FileStatus::Absent => "absent",
            FileStatus::Read { .. } => "read",
            FileStatus::Foreign => "foreign",
            FileStatus::Corrupt => "corrupt",
        }
    }
}

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

pub fn file_name(model: &str) -> String {
    format!("vectors/{model}.bin")
}

/// The file's bytes for `vectors` of `snapshot`.
pub fn encode(snapshot: &ProviderSnapshot, vectors: &Vectors) -> Vec<u8> {
    let dims = vectors.dims;
    let mut out = Vec::with_capacity(32 + vectors.scales.len() * (dims + 64));
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(vectors.model.len() as u32).to_le_bytes());
    out.extend_from_slice(vectors.model.as_bytes());
    out.extend_from_slice(&(dims as u32).to_le_bytes());
    out.extend_from_slice(&(vectors.scales.len() as u32).to_le_bytes());
    for (i, c) in snapshot.capabilities.iter().enumerate() {
        out.extend_from_slice(&(c.id().len() as u16).to_le_bytes());
        out.extend_from_slice(c.id().as_bytes());
        out.extend_from_slice(&vectors.hashes[i]);
        out.extend_from_slice(&vectors.scales[i].to_le_bytes());
        out.extend(vectors.row(i).iter().map(|x| *x as u8));
    }
    out
}

struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }
    fn u32(&mut self) -> Option<u32> {
        self.take(4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap_or_default()))
    }
    fn u16(&mut self) -> Option<u16> {
        self.take(2)
            .map(|b| u16::from_le_bytes(b.try_into().unwrap_or_default()))
    }
}

/// Parses a file for `model` with `dims` dimensions: its entries as vectors keyed by text hash.
pub fn decode(bytes: &[u8], model: &str, dims: usize) -> Result<Vectors, FileStatus> {
    let corrupt = FileStatus::Corrupt;
    let mut c = Cursor(bytes);
    if c.take(8) != Some(&MAGIC[..]) || c.u32() != Some(VERSION) {
        return Err(corrupt);
    }
    let len = c.u32().ok_or(corrupt)? as usize;
    if len == 0 || len > MAX_MODEL_BYTES {
        return Err(corrupt);
    }
    let id = std::str::from_utf8(c.take(len).ok_or(corrupt)?).map_err(|_| corrupt)?;
    let file_dims = c.u32().ok_or(corrupt)? as u64;
    if file_dims == 0 || file_dims > MAX_DIMENSIONS {
        return Err(corrupt);
    }
    let count = c.u32().ok_or(corrupt)? as u64;
    if count > MAX_ENTRIES {
        return Err(corrupt);
    }
    if id != model || file_dims as usize != dims {
        return Err(FileStatus::Foreign);
    }
    // Entries need at least this many bytes each: a count the file cannot hold allocates nothing.
    if count * (2 + 1 + 16 + 4 + dims as u64) > c.0.len() as u64 {
        return Err(corrupt);
    }
    let n = count as usize;
    let mut v = Vectors {
        model: model.to_owned(),
        dims,
        data: Vec::with_capacity(n * dims),
        scales: Vec::with_capacity(n),
        hashes: Vec::with_capacity(n),
    };
    for _ in 0..n {
        let len = c.u16().ok_or(corrupt)? as usize;
        if len == 0 || len > MAX_ID_BYTES {
            return Err(corrupt);
        }
        std::str::from_utf8(c.take(len).ok_or(corrupt)?).map_err(|_| corrupt)?;
        let hash: TextHash = c.take(16).ok_or(corrupt)?.try_into().map_err(|_| corrupt)?;
        let scale = f32::from_le_bytes(c.take(4).ok_or(corrupt)?.try_into().map_err(|_| corrupt)?);
        if !(scale.is_finite() && scale > 0.0 && scale <= 1.0) {
            return Err(corrupt);
        }
        v.data
            .extend(c.take(dims).ok_or(corrupt)?.iter().map(|b| *b as i8));
        v.scales.push(scale);
        v.hashes.push(hash);
    }
    if !c.0.is_empty() {
        return Err(corrupt);
    }
    Ok(v)
}

/// The most bytes a file of `count` entries of `dims` dimensions can hold.
fn max_bytes(count: u64, dims: u64) -> u64 {
    8 + 4 + 4 + MAX_MODEL_BYTES as u64 + 8 + count * (2 + MAX_ID_BYTES as u64 + 16 + 4 + dims)
}

/// Reads the provider's vectors file for `model` beneath its root, if it has one; reads at most
/// what a file of its capabilities' count could hold (twice over, for renamed capabilities).
pub fn read(
    snapshot: &ProviderSnapshot,
    model: &str,
    dims: usize,
) -> (Option<Vectors>, FileStatus) {
    let Some(root) = snapshot.roots.default_root.as_ref() else {
        return (None, FileStatus::Absent);
    };
    if snapshot.authority != crate::snapshot::AuthorityKind::File || !is_model_id(model) {
        return (None, FileStatus::Absent);
    }
    let Ok(file) = root.open_file(&file_name(model)) else {
        return (None, FileStatus::Absent);
    };
    let limit = max_bytes(2 * snapshot.capabilities.len() as u64 + 16, dims as u64);
    let mut bytes = Vec::new();
    match file.take(limit + 1).read_to_end(&mut bytes) {
        Ok(_) if bytes.len() as u64 <= limit => {}
        _ => return (None, FileStatus::Corrupt),
    }
    match decode(&bytes, model, dims) {
        Ok(v) => {
            let entries = v.scales.len() as u32;
            (Some(v), FileStatus::Read { entries })
        }
        Err(status) => (None, status),
    }
}
