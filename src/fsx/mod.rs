//! File system primitives shared by definition loading and document reads: opening that never
//! blocks on a FIFO, files reached only beneath a trusted root's handle, and the identity of an
//! open file.

pub mod beneath;

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

/// Without libc the flag has to be spelled out. Where its value is not known for sure it stays 0,
/// and the type check made before opening remains the guard against blocking on a FIFO.
#[cfg(unix)]
const O_NONBLOCK: i32 = if cfg!(any(
    target_os = "macos",
    target_os = "ios",
    target_os = "freebsd",
    target_os = "openbsd",
    target_os = "netbsd",
    target_os = "dragonfly"
)) {
    0x0004
} else if cfg!(all(
    any(target_os = "linux", target_os = "android"),
    any(
        target_arch = "x86",
        target_arch = "x86_64",
        target_arch = "arm",
        target_arch = "aarch64",
        target_arch = "riscv64",
        target_arch = "powerpc64",
        target_arch = "s390x",
        target_arch = "loongarch64"
    )
)) {
    0o4000
} else {
    0
};

/// Opens for reading, non-blocking where the flag is known, in case the path became a FIFO
/// after it was checked.
pub fn open_nonblocking(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(O_NONBLOCK);
    }
    options.open(path)
}

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
