//! File system primitives shared by definition loading and document reads: files reached only
//! beneath a trusted root's handle (never blocking on a FIFO), and the identity of an open file.

pub mod beneath;

/// Who a file is and how it looked: device, inode, size and modification time. Two equal
/// stamps mean the same, unchanged file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    pub dev: u64,
    pub ino: u64,
    pub len: u64,
    pub mtime_ns: i128,
}

impl Stamp {
    pub fn of(meta: &std::fs::Metadata) -> Stamp {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Stamp {
                dev: meta.dev(),
                ino: meta.ino(),
                len: meta.len(),
                mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
            }
        }
        #[cfg(not(unix))]
        {
            let mtime_ns = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos() as i128);
            Stamp {
                dev: 0,
                ino: 0,
                len: meta.len(),
                mtime_ns,
            }
        }
    }

    /// A short stable digest, for binding cursors to this exact file.
    pub fn digest(&self) -> String {
        let mut h = blake3::Hasher::new();
        h.update(&self.dev.to_le_bytes());
        h.update(&self.ino.to_le_bytes());
        h.update(&self.len.to_le_bytes());
        h.update(&self.mtime_ns.to_le_bytes());
        h.finalize().to_hex()[..16].to_owned()
    }
}
