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

use super::{TextHash, Vectors};
use crate::config::model::{is_model_id, MAX_DIMENSIONS, MAX_MODEL_BYTES};
use crate::snapshot::ProviderSnapshot;
use std::io::Read;

pub const MAGIC: &[u8; 8] = b"CGVECTS\0";
pub const VERSION: u32 = 1;
use crate::ids::ID_MAX_BYTES as MAX_ID_BYTES;
/// The most entries a file may hold.
const MAX_ENTRIES: u64 = 10_000_000;

/// Why a provider's precomputed vectors (its file, or its view's `vectors()`) were ignored whole:
/// the provider is then embedded as if it had none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ignored {
    /// Not vectors as documented: a bad header, entry or page.
    Corrupt,
    /// Ends before the entries it announces.
    Truncated,
    /// Another model's or dimensions' vectors.
    Foreign,
    /// More entries or bytes than the provider's capabilities can need, or than the read's
    /// bounds allow.
    TooLarge,
    /// The view's `vectors()` threw or rejected.
    Failed,
    /// The view's `vectors()` missed a deadline of `budgets.database`.
    Timeout,
}

impl Ignored {
    pub fn as_str(self) -> &'static str {
        match self {
            Ignored::Corrupt => "corrupt",
            Ignored::Truncated => "truncated",
            Ignored::Foreign => "foreign",
            Ignored::TooLarge => "too_large",
            Ignored::Failed => "failed",
            Ignored::Timeout => "timeout",
        }
    }
}

/// Where a provider's precomputed vectors come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    File,
    View,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::File => "file",
            Source::View => "view",
        }
    }
}

/// What a provider offered for a snapshot: nothing, entries (each still to be matched by its
/// text hash), or vectors ignored whole.
#[derive(Debug)]
pub enum Offered {
    Absent,
    Entries(Vectors),
    Ignored(Ignored),
}

/// What became of a provider's precomputed vectors at its current snapshot's build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Status {
    /// `None` when the provider offered none.
    pub source: Option<Source>,
    pub ignored: Option<Ignored>,
    /// Entries read; `used` of them matched a capability's text today, `stale` none.
    pub entries: u32,
    pub used: u32,
    pub stale: u32,
    /// Capabilities the snapshot had to embed: neither the entries nor an earlier snapshot's
    /// vectors held their text.
    pub embedded: u32,
}

impl Status {
    /// `used` (every entry current), `partial` (some stale), `stale` (none current), `ignored`
    /// (see `reason`) or `absent`.
    pub fn state(&self) -> &'static str {
        match (self.source, self.ignored) {
            (_, Some(_)) => "ignored",
            (None, None) => "absent",
            _ if self.entries == 0 => "absent",
            _ if self.stale == 0 => "used",
            _ if self.used == 0 => "stale",
            _ => "partial",
        }
    }

    /// The documented JSON of `graph.status()`: never a path or a raw message.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "source": self.source.map(Source::as_str),
            "state": self.state(),
            "reason": self.ignored.map(Ignored::as_str),
            "entries": self.entries,
            "used": self.used,
            "stale": self.stale,
            "embedded": self.embedded,
        })
    }

    /// The internal stats' word for a vectors file (`absent` for other sources).
    pub fn file_word(&self) -> &'static str {
        match (self.source, self.ignored) {
            (Some(Source::File), Some(reason)) => reason.as_str(),
            (Some(Source::File), None) => "read",
            _ => "absent",
        }
    }
}

/// The rules of one entry, in a file or a view's page, kept once: a capability ID, after the
/// entry before it (`after`: IDs strictly increase, so no capability has two entries), a scale
/// that is finite, positive and at most 1, and exactly `dims` components (another length is
/// another model's vector).
pub fn push_entry(
    v: &mut Vectors,
    (id, after): (&str, Option<&str>),
    hash: TextHash,
    scale: f32,
    vector: &[u8],
) -> Result<(), Ignored> {
    if !crate::ids::is_id(id) || after.is_some_and(|last| last >= id) {
        return Err(Ignored::Corrupt);
    }
    if !(scale.is_finite() && scale > 0.0 && scale <= 1.0) {
        return Err(Ignored::Corrupt);
    }
    if vector.len() != v.dims {
        return Err(Ignored::Foreign);
    }
    v.data.extend(vector.iter().map(|b| *b as i8));
    v.scales.push(scale);
    v.hashes.push(hash);
    Ok(())
}

/// No entries yet, for `model` with `dims` dimensions.
pub fn empty(model: &str, dims: usize) -> Vectors {
    Vectors {
        model: model.to_owned(),
        dims,
        data: Vec::new(),
        scales: Vec::new(),
        hashes: Vec::new(),
    }
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
pub fn decode(bytes: &[u8], model: &str, dims: usize) -> Result<Vectors, Ignored> {
    decode_with(bytes, model, dims, |_| ())
}

/// [`decode`], telling `id_of` each entry's capability ID in order.
fn decode_with(
    bytes: &[u8],
    model: &str,
    dims: usize,
    mut id_of: impl FnMut(&str),
) -> Result<Vectors, Ignored> {
    let (corrupt, short) = (Ignored::Corrupt, Ignored::Truncated);
    let mut c = Cursor(bytes);
    if c.take(8) != Some(&MAGIC[..]) || c.u32() != Some(VERSION) {
        return Err(corrupt);
    }
    let len = c.u32().ok_or(short)? as usize;
    if len == 0 || len > MAX_MODEL_BYTES {
        return Err(corrupt);
    }
    let id = std::str::from_utf8(c.take(len).ok_or(short)?).map_err(|_| corrupt)?;
    let file_dims = c.u32().ok_or(short)? as u64;
    if file_dims == 0 || file_dims > MAX_DIMENSIONS {
        return Err(corrupt);
    }
    let count = c.u32().ok_or(short)? as u64;
    if count > MAX_ENTRIES {
        return Err(corrupt);
    }
    if id != model || file_dims as usize != dims {
        return Err(Ignored::Foreign);
    }
    // Entries need at least this many bytes each: a count the file cannot hold allocates nothing.
    if count * (2 + 1 + 16 + 4 + dims as u64) > c.0.len() as u64 {
        return Err(short);
    }
    let n = count as usize;
    let mut v = empty(model, dims);
    let mut last: Option<&str> = None;
    v.data.reserve(n * dims);
    v.scales.reserve(n);
    v.hashes.reserve(n);
    for _ in 0..n {
        let len = c.u16().ok_or(short)? as usize;
        if len == 0 || len > MAX_ID_BYTES {
            return Err(corrupt);
        }
        let id = std::str::from_utf8(c.take(len).ok_or(short)?).map_err(|_| corrupt)?;
        let hash: TextHash = c.take(16).ok_or(short)?.try_into().map_err(|_| corrupt)?;
        let scale = f32::from_le_bytes(c.take(4).ok_or(short)?.try_into().map_err(|_| corrupt)?);
        let vector = c.take(dims).ok_or(short)?;
        push_entry(&mut v, (id, last), hash, scale, vector)?;
        last = Some(id);
        id_of(id);
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
pub fn read(snapshot: &ProviderSnapshot, model: &str, dims: usize) -> Offered {
    let Some(root) = snapshot.roots.default_root.as_ref() else {
        return Offered::Absent;
    };
    if snapshot.authority != crate::snapshot::AuthorityKind::File || !is_model_id(model) {
        return Offered::Absent;
    }
    let Ok(file) = root.open_file(&file_name(model)) else {
        return Offered::Absent;
    };
    let limit = max_bytes(2 * snapshot.capabilities.len() as u64 + 16, dims as u64);
    let mut bytes = Vec::new();
    match file.take(limit + 1).read_to_end(&mut bytes) {
        Ok(_) if bytes.len() as u64 <= limit => {}
        Ok(_) => return Offered::Ignored(Ignored::TooLarge),
        Err(_) => return Offered::Ignored(Ignored::Corrupt),
    }
    match decode(&bytes, model, dims) {
        Ok(v) => Offered::Entries(v),
        Err(reason) => Offered::Ignored(reason),
    }
}

/// One entry of a view's `vectors()` page: the file's entry as JSON, its text hash as 32
/// lowercase hex digits and its vector as the base64 of its int8 components.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PageEntry<'a> {
    #[serde(rename = "capabilityId", borrow)]
    capability_id: std::borrow::Cow<'a, str>,
    #[serde(rename = "textHash", borrow)]
    text_hash: std::borrow::Cow<'a, str>,
    scale: f32,
    #[serde(borrow)]
    vector: std::borrow::Cow<'a, str>,
}

fn hex_hash(text: &str) -> Option<TextHash> {
    let bytes = text.as_bytes();
    if bytes.len() != 32 {
        return None;
    }
    let digit = |b: u8| match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; 16];
    for (i, pair) in bytes.chunks_exact(2).enumerate() {
        out[i] = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(out)
}

/// The text hash as a view's page gives it.
pub fn hash_hex(hash: &TextHash) -> String {
    hash.iter().map(|b| format!("{b:02x}")).collect()
}

/// The file's entries as a view's page items give them (`{ capabilityId, textHash, scale,
/// vector }`), for adapters that store what `capability-graph embed` wrote: the model ID, the
/// dimensions and the items as JSON.
pub fn entries_json(bytes: &[u8]) -> Result<serde_json::Value, Ignored> {
    use base64::Engine as _;
    let (model, dims) = header(bytes).ok_or(Ignored::Corrupt)?;
    let mut ids = Vec::new();
    let v = decode_with(bytes, &model, dims, |id| ids.push(id.to_owned()))?;
    let mut items = Vec::with_capacity(v.scales.len());
    for (i, id) in ids.iter().enumerate() {
        let vector: Vec<u8> = v.row(i).iter().map(|x| *x as u8).collect();
        items.push(serde_json::json!({
            "capabilityId": id,
            "textHash": hash_hex(&v.hashes[i]),
            "scale": v.scales[i],
            "vector": base64::engine::general_purpose::STANDARD.encode(vector),
        }));
    }
    Ok(serde_json::json!({ "modelId": model, "dimensions": dims, "entries": items }))
}

/// A file's model ID and dimensions, from its header.
fn header(bytes: &[u8]) -> Option<(String, usize)> {
    let mut c = Cursor(bytes);
    if c.take(8)? != &MAGIC[..] || c.u32()? != VERSION {
        return None;
    }
    let len = c.u32()? as usize;
    (1..=MAX_MODEL_BYTES).contains(&len).then_some(())?;
    let id = std::str::from_utf8(c.take(len)?).ok()?.to_owned();
    Some((id, c.u32()? as usize))
}

/// Adds a view's page of entries to `v`: each one the file's entry rules hold (see
/// [`push_entry`]) after `last`, the page's last entry before, which it moves on.
pub fn push_page(
    v: &mut Vectors,
    items: &[&serde_json::value::RawValue],
    last: &mut Option<String>,
) -> Result<(), Ignored> {
    use base64::Engine as _;
    for item in items {
        let e: PageEntry = serde_json::from_str(item.get()).map_err(|_| Ignored::Corrupt)?;
        let hash = hex_hash(&e.text_hash).ok_or(Ignored::Corrupt)?;
        // A vector of another length is another model's: judged by its length before decoding.
        if e.vector.len() != v.dims.div_ceil(3) * 4 {
            return Err(Ignored::Foreign);
        }
        let vector = base64::engine::general_purpose::STANDARD
            .decode(e.vector.as_bytes())
            .map_err(|_| Ignored::Corrupt)?;
        push_entry(
            v,
            (&e.capability_id, last.as_deref()),
            hash,
            e.scale,
            &vector,
        )?;
        *last = Some(e.capability_id.into_owned());
    }
    Ok(())
}
