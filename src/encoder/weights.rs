//! The encoder's weights file, `model.bin` (written by `scripts/build-model-package.mjs`; the
//! format is documented in `packages/minilm/README.md`). All numbers little-endian:
//!
//! ```text
//! magic "CGENCODE" · u32 version (1) · u16 name length · name (UTF-8)
//! u32 × 7: vocab, hidden, layers, heads, intermediate, max positions, token types · f32 eps
//! u32 CRC-32 of vocab.txt · u32 tensor count
//! per tensor: u16 name length · name · u8 kind (0 f32, 1 int8) · u8 dims · u32 × dims
//!   kind 0: f32 × product(dims)
//!   kind 1 (2 dims): u32 group (divides dims[1]) · f32 scale × dims[0]·dims[1]/group ·
//!     i8 × dims[0]·dims[1]; a weight is its i8 times the scale of its group (`group`
//!     consecutive weights of one row)
//! u32 CRC-32 of every byte before it
//! ```
//!
//! Matrices of the layers are dequantised to f32 here, once; the word embeddings stay int8
//! (one row is dequantised per token), which keeps ~35 MB out of the resident set.

use std::collections::HashMap;
use std::fmt;
use std::io::Read;
use std::path::Path;

const MAGIC: &[u8; 8] = b"CGENCODE";
/// The file format's version; part of the encoder's id.
pub const FORMAT_VERSION: u32 = 1;
/// A weights file larger than this is not ours (the MiniLM file is ~23 MB).
const MAX_FILE_BYTES: u64 = 256 << 20;
/// A vocabulary larger than this is not ours (MiniLM's is 232 KB).
const MAX_VOCAB_BYTES: u64 = 8 << 20;

/// Why [`crate::encoder::Encoder::load`] failed. Its text never names a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// `model.bin` or `vocab.txt` is not there.
    Missing,
    /// The files are there but are not a model this encoder can run.
    Corrupt { reason: &'static str },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Missing => f.write_str("the encoder's weights are not installed"),
            LoadError::Corrupt { reason } => {
                write!(f, "the encoder's weights are unusable: {reason}")
            }
        }
    }
}

impl std::error::Error for LoadError {}

fn corrupt(reason: &'static str) -> LoadError {
    LoadError::Corrupt { reason }
}

/// The architecture a weights file declares.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    pub vocab: usize,
    pub hidden: usize,
    pub layers: usize,
    pub heads: usize,
    pub intermediate: usize,
    pub max_positions: usize,
    pub token_types: usize,
    pub eps: f32,
}

/// `y = x · wᵀ + b` with `w` row-major `out × inp` (the layout the checkpoint stores).
pub(crate) struct Linear {
    pub w: Vec<f32>,
    pub b: Vec<f32>,
    pub out: usize,
    pub inp: usize,
}

pub(crate) struct Norm {
    pub gamma: Vec<f32>,
    pub beta: Vec<f32>,
}

pub(crate) struct Layer {
    /// Query, key and value stacked (`3 × hidden` outputs): one matrix product for all three.
    pub qkv: Linear,
    pub attn_out: Linear,
    pub attn_norm: Norm,
    pub inter: Linear,
    pub out: Linear,
    pub out_norm: Norm,
}

/// Word embeddings kept int8, dequantised a row at a time.
pub(crate) struct QuantRows {
    pub scales: Vec<f32>,
    pub data: Vec<i8>,
    pub cols: usize,
    pub group: usize,
}

impl QuantRows {
    pub fn row_into(&self, row: usize, out: &mut [f32]) {
        let src = &self.data[row * self.cols..(row + 1) * self.cols];
        let scales = &self.scales[row * self.cols / self.group..];
        for ((o, q), s) in out
            .chunks_mut(self.group)
            .zip(src.chunks(self.group))
            .zip(scales)
        {
            for (o, &q) in o.iter_mut().zip(q) {
                *o = s * f32::from(q);
            }
        }
    }
}

pub(crate) struct Weights {
    pub name: String,
    pub config: Config,
    pub checksum: u32,
    pub words: QuantRows,
    pub positions: Vec<f32>,
    pub token_type: Vec<f32>,
    pub emb_norm: Norm,
    pub layers: Vec<Layer>,
}

/// Reads `model.bin` and `vocab.txt` from `dir`, each bounded; returns the weights and the
/// vocabulary's text.
pub(crate) fn read_dir(dir: &Path) -> Result<(Weights, String), LoadError> {
    let bin = read_bounded(&dir.join("model.bin"), MAX_FILE_BYTES)?;
    let vocab = read_bounded(&dir.join("vocab.txt"), MAX_VOCAB_BYTES)?;
    let (weights, vocab_crc) = parse(&bin)?;
    if crc32(&vocab) != vocab_crc {
        return Err(corrupt("the vocabulary does not belong to these weights"));
    }
    let vocab = String::from_utf8(vocab).map_err(|_| corrupt("the vocabulary is not UTF-8"))?;
    Ok((weights, vocab))
}

/// The model ID and dimensions the weights in `dir` name, from the header and the checksum
/// of `model.bin` alone (a few hundred bytes read, nothing checked): what the engine asks a
/// database view's precomputed vectors for before the encoder has loaded. An ID named wrongly
/// costs nothing but those vectors, whose text hashes then match no text of the loaded model.
pub(crate) fn peek_id(dir: &Path) -> Option<(String, usize)> {
    use std::io::{Seek, SeekFrom};
    let mut file = std::fs::File::open(dir.join("model.bin")).ok()?;
    let mut head = Vec::new();
    (&mut file)
        .take(MAGIC.len() as u64 + 4 + 2 + 65_535 + 8)
        .read_to_end(&mut head)
        .ok()?;
    if !head.starts_with(MAGIC) {
        return None;
    }
    let mut c = Cursor {
        bytes: &head,
        at: MAGIC.len(),
    };
    if c.u32().ok()? != FORMAT_VERSION {
        return None;
    }
    let name = c.name().ok()?.to_owned();
    let _vocab = c.size().ok()?;
    let hidden = c.size().ok()?;
    file.seek(SeekFrom::End(-4)).ok()?;
    let mut tail = [0u8; 4];
    file.read_exact(&mut tail).ok()?;
    let checksum = u32::from_le_bytes(tail);
    Some((model_id(&name, checksum), hidden))
}

/// The model's identity: its name, the file format's version and the weights file's CRC-32.
pub(crate) fn model_id(name: &str, checksum: u32) -> String {
    format!("{name}/int8-{FORMAT_VERSION}-{checksum:08x}")
}

fn read_bounded(path: &Path, max: u64) -> Result<Vec<u8>, LoadError> {
    let file = std::fs::File::open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory => LoadError::Missing,
        _ => corrupt("a model file cannot be read"),
    })?;
    let mut bytes = Vec::new();
    // Counted to max + 1 whatever the file claims to be, so a lying size cannot make us
    // reserve or read more.
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|_| corrupt("a model file cannot be read"))?;
    if bytes.len() as u64 > max {
        return Err(corrupt("a model file is too large"));
    }
    Ok(bytes)
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], LoadError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or(corrupt("the weights file is truncated"))?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, LoadError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, LoadError> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().unwrap()))
    }
    fn u32(&mut self) -> Result<u32, LoadError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn f32(&mut self) -> Result<f32, LoadError> {
        Ok(f32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn size(&mut self) -> Result<usize, LoadError> {
        Ok(self.u32()? as usize)
    }
    fn name(&mut self) -> Result<&'a str, LoadError> {
        let n = self.u16()? as usize;
        std::str::from_utf8(self.take(n)?).map_err(|_| corrupt("a name is not UTF-8"))
    }
    fn f32s(&mut self, n: usize) -> Result<Vec<f32>, LoadError> {
        let bytes = self.take(n.checked_mul(4).ok_or(corrupt("a tensor is too large"))?)?;
        let v: Vec<f32> = bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        if v.iter().any(|x| !x.is_finite()) {
            return Err(corrupt("a tensor holds a value that is not finite"));
        }
        Ok(v)
    }
}

enum Tensor {
    F32 {
        dims: Vec<usize>,
        data: Vec<f32>,
    },
    Int8 {
        dims: Vec<usize>,
        group: usize,
        scales: Vec<f32>,
        data: Vec<i8>,
    },
}

impl Tensor {
    fn dims(&self) -> &[usize] {
        match self {
            Tensor::F32 { dims, .. } | Tensor::Int8 { dims, .. } => dims,
        }
    }
}

fn parse(bytes: &[u8]) -> Result<(Weights, u32), LoadError> {
    if bytes.len() < MAGIC.len() + 8 || &bytes[..MAGIC.len()] != MAGIC {
        return Err(corrupt("not an encoder weights file"));
    }
    let (body, tail) = bytes.split_at(bytes.len() - 4);
    let checksum = u32::from_le_bytes(tail.try_into().unwrap());
    if crc32(body) != checksum {
        return Err(corrupt("the weights file's checksum does not match"));
    }
    let mut c = Cursor {
        bytes: body,
        at: MAGIC.len(),
    };
    if c.u32()? != FORMAT_VERSION {
        return Err(corrupt("the weights file's version is not supported"));
    }
    let name = c.name()?.to_owned();
    let config = Config {
        vocab: c.size()?,
        hidden: c.size()?,
        layers: c.size()?,
        heads: c.size()?,
        intermediate: c.size()?,
        max_positions: c.size()?,
        token_types: c.size()?,
        eps: c.f32()?,
    };
    check_config(&config)?;
    let vocab_crc = c.u32()?;
    let count = c.size()?;
    let mut tensors = HashMap::new();
    for _ in 0..count {
        let tname = c.name()?.to_owned();
        let kind = c.u8()?;
        let ndims = c.u8()? as usize;
        let mut dims = Vec::with_capacity(ndims);
        for _ in 0..ndims {
            dims.push(c.size()?);
        }
        let n = dims
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .filter(|&n| n <= body.len())
            .ok_or(corrupt("a tensor is larger than the file"))?;
        let tensor = match kind {
            0 => Tensor::F32 {
                data: c.f32s(n)?,
                dims,
            },
            1 if dims.len() == 2 => {
                let group = c.size()?;
                if group == 0 || !dims[1].is_multiple_of(group) {
                    return Err(corrupt("a tensor's scale groups do not divide its rows"));
                }
                let scales = c.f32s(n / group)?;
                let data = bytemuck_i8(c.take(n)?);
                Tensor::Int8 {
                    dims,
                    group,
                    scales,
                    data,
                }
            }
            _ => return Err(corrupt("a tensor has an unknown kind")),
        };
        if tensors.insert(tname, tensor).is_some() {
            return Err(corrupt("a tensor appears twice"));
        }
    }
    if c.at != body.len() {
        return Err(corrupt("the weights file has trailing bytes"));
    }
    let weights = assemble(name, config, checksum, tensors)?;
    Ok((weights, vocab_crc))
}

/// The bytes as i8, copied in one go.
fn bytemuck_i8(bytes: &[u8]) -> Vec<i8> {
    // Safety: u8 and i8 have the same size and alignment, and every bit pattern is valid.
    unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<i8>(), bytes.len()) }.to_vec()
}

fn check_config(c: &Config) -> Result<(), LoadError> {
    let sane = c.hidden > 0
        && c.heads > 0
        && c.hidden.is_multiple_of(c.heads)
        && c.hidden <= 4096
        && c.layers > 0
        && c.layers <= 64
        && c.intermediate > 0
        && c.intermediate <= 16384
        && c.vocab > 0
        && c.vocab <= 1_000_000
        && c.max_positions >= super::tokenizer::MAX_TOKENS
        && c.max_positions <= 8192
        && c.token_types > 0
        && c.token_types <= 16
        && c.eps.is_finite()
        && c.eps > 0.0;
    if sane {
        Ok(())
    } else {
        Err(corrupt(
            "the weights file declares an unsupported architecture",
        ))
    }
}

struct Take {
    tensors: HashMap<String, Tensor>,
}

impl Take {
    fn get(&mut self, name: &str, dims: &[usize]) -> Result<Tensor, LoadError> {
        let t = self
            .tensors
            .remove(name)
            .ok_or(corrupt("a tensor is missing"))?;
        if t.dims() != dims {
            return Err(corrupt("a tensor has the wrong shape"));
        }
        Ok(t)
    }
    /// An f32 tensor, or an int8 one dequantised.
    fn dense(&mut self, name: &str, dims: &[usize]) -> Result<Vec<f32>, LoadError> {
        Ok(match self.get(name, dims)? {
            Tensor::F32 { data, .. } => data,
            Tensor::Int8 {
                group,
                scales,
                data,
                ..
            } => {
                let mut out = vec![0f32; data.len()];
                for ((o, q), &s) in out
                    .chunks_exact_mut(group)
                    .zip(data.chunks_exact(group))
                    .zip(&scales)
                {
                    for (o, &q) in o.iter_mut().zip(q) {
                        *o = s * f32::from(q);
                    }
                }
                out
            }
        })
    }
    fn linear(&mut self, prefix: &str, out: usize, inp: usize) -> Result<Linear, LoadError> {
        Ok(Linear {
            w: self.dense(&format!("{prefix}.weight"), &[out, inp])?,
            b: self.dense(&format!("{prefix}.bias"), &[out])?,
            out,
            inp,
        })
    }
    fn norm(&mut self, prefix: &str, n: usize) -> Result<Norm, LoadError> {
        Ok(Norm {
            gamma: self.dense(&format!("{prefix}.weight"), &[n])?,
            beta: self.dense(&format!("{prefix}.bias"), &[n])?,
        })
    }
}

fn assemble(
    name: String,
    config: Config,
    checksum: u32,
    tensors: HashMap<String, Tensor>,
) -> Result<Weights, LoadError> {
    let h = config.hidden;
    let mut t = Take { tensors };
    let words = match t.get("embeddings.word_embeddings.weight", &[config.vocab, h])? {
        Tensor::Int8 {
            group,
            scales,
            data,
            ..
        } => QuantRows {
            scales,
            data,
            cols: h,
            group,
        },
        Tensor::F32 { .. } => return Err(corrupt("the word embeddings are not int8")),
    };
    let positions = t.dense(
        "embeddings.position_embeddings.weight",
        &[config.max_positions, h],
    )?;
    let token_type = t.dense(
        "embeddings.token_type_embeddings.weight",
        &[config.token_types, h],
    )?;
    let emb_norm = t.norm("embeddings.LayerNorm", h)?;
    let mut layers = Vec::with_capacity(config.layers);
    for i in 0..config.layers {
        let p = format!("encoder.layer.{i}");
        let q = t.linear(&format!("{p}.attention.self.query"), h, h)?;
        let k = t.linear(&format!("{p}.attention.self.key"), h, h)?;
        let v = t.linear(&format!("{p}.attention.self.value"), h, h)?;
        let qkv = Linear {
            w: [q.w, k.w, v.w].concat(),
            b: [q.b, k.b, v.b].concat(),
            out: 3 * h,
            inp: h,
        };
        layers.push(Layer {
            qkv,
            attn_out: t.linear(&format!("{p}.attention.output.dense"), h, h)?,
            attn_norm: t.norm(&format!("{p}.attention.output.LayerNorm"), h)?,
            inter: t.linear(&format!("{p}.intermediate.dense"), config.intermediate, h)?,
            out: t.linear(&format!("{p}.output.dense"), h, config.intermediate)?,
            out_norm: t.norm(&format!("{p}.output.LayerNorm"), h)?,
        });
    }
    if !t.tensors.is_empty() {
        return Err(corrupt(
            "the weights file holds tensors this encoder does not know",
        ));
    }
    Ok(Weights {
        name,
        config,
        checksum,
        words,
        positions,
        token_type,
        emb_norm,
        layers,
    })
}

/// CRC-32 tables for four bytes a step ("slicing by 4"): the check of a 23 MB file costs a
/// quarter of the steps, which matters in unoptimised test builds.
const CRC_TABLES: [[u32; 256]; 4] = {
    let mut t = [[0u32; 256]; 4];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        t[0][i] = c;
        i += 1;
    }
    let mut i = 0;
    while i < 256 {
        let mut s = 1;
        while s < 4 {
            let prev = t[s - 1][i];
            t[s][i] = (prev >> 8) ^ t[0][(prev & 0xFF) as usize];
            s += 1;
        }
        i += 1;
    }
    t
};

/// CRC-32 (IEEE), the same as zlib's: the build script computes it with Node's zlib.
pub(crate) fn crc32(bytes: &[u8]) -> u32 {
    let t = &CRC_TABLES;
    let mut c = !0u32;
    let mut words = bytes.chunks_exact(4);
    for w in &mut words {
        c ^= u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        c = t[3][(c & 0xFF) as usize]
            ^ t[2][((c >> 8) & 0xFF) as usize]
            ^ t[1][((c >> 16) & 0xFF) as usize]
            ^ t[0][(c >> 24) as usize];
    }
    for &b in words.remainder() {
        c = t[0][((c ^ u32::from(b)) & 0xFF) as usize] ^ (c >> 8);
    }
    !c
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn crc32_is_zlibs() {
        assert_eq!(crc32(b""), 0);
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        // Every length around the four-byte steps.
        let text = b"The quick brown fox jumps over the lazy dog";
        assert_eq!(crc32(text), 0x414F_A339);
        assert_eq!(crc32(&text[..42]), 0x44B3_29EA);
        assert_eq!(crc32(&text[..41]), 0xB86E_E925);
        assert_eq!(crc32(&text[..40]), 0xDC26_5A75);
    }

    #[test]
    fn refuses_what_is_not_ours() {
        let err = |b: &[u8]| parse(b).err().unwrap();
        assert_eq!(
            err(b"not a model at all"),
            corrupt("not an encoder weights file")
        );
        let mut bytes = b"CGENCODE".to_vec();
        bytes.extend_from_slice(&2u32.to_le_bytes());
        let crc = crc32(&bytes);
        bytes.extend_from_slice(&crc.to_le_bytes());
        assert_eq!(
            err(&bytes),
            corrupt("the weights file's version is not supported")
        );
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        assert_eq!(
            err(&bytes),
            corrupt("the weights file's checksum does not match")
        );
    }

    #[test]
    fn errors_name_no_path() {
        let dir = std::env::temp_dir().join("cg-encoder-missing-dir");
        let e = read_dir(&dir).err().unwrap();
        assert_eq!(e, LoadError::Missing);
        assert!(!e.to_string().contains("cg-encoder-missing-dir"));
        let c = corrupt("a tensor is missing").to_string();
        assert_eq!(c, "the encoder's weights are unusable: a tensor is missing");
    }
}
