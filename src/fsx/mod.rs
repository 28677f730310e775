//! File system primitives shared by definition loading and document reads: files reached only
//! beneath a trusted root's handle (never blocking on a FIFO), and the identity of an open file.

pub mod beneath;

/// Whether the OS error `errno` is a passing condition of the machine rather than of the file:
/// out of descriptors or memory, try again, interrupted. Such a failure is worth a retry
/// (SPEC §14 D20); every other one stays until someone changes the file or the tree.
pub fn is_transient(errno: i32) -> bool {
    #[cfg(unix)]
    {
        use rustix::io::Errno;
        [
            Errno::MFILE,
            Errno::NFILE,
            Errno::NOMEM,
            Errno::AGAIN,
            Errno::INTR,
            Errno::NOBUFS,
            Errno::BUSY,
        ]
        .iter()
        .any(|e| e.raw_os_error() == errno)
    }
    #[cfg(not(unix))]
    {
        // ERROR_TOO_MANY_OPEN_FILES, ERROR_NOT_ENOUGH_MEMORY, ERROR_OUTOFMEMORY,
        // ERROR_SHARING_VIOLATION, ERROR_LOCK_VIOLATION
        [4, 8, 14, 32, 33].contains(&errno)
    }
}

/// [`is_transient`] of an I/O error (one without an OS code is not).
pub fn is_transient_io(e: &std::io::Error) -> bool {
    e.raw_os_error().is_some_and(is_transient)
}

/// Who a file is and how it looked: device, inode, size, and its modification, change and (where
/// the platform records it) birth times. Two equal stamps mean the same, unchanged file: a
/// rewrite that restores the size and the modification time (`touch -r`) still moves the change
/// time, which no one can set back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Stamp {
    pub dev: u64,
    pub ino: u64,
    pub len: u64,
    pub mtime_ns: i128,
    pub ctime_ns: i128,
    /// 0 where the platform or file system does not say.
    pub btime_ns: i128,
}

fn nanos(t: std::io::Result<std::time::SystemTime>) -> i128 {
    t.ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i128)
}

impl Stamp {
    pub fn of(meta: &std::fs::Metadata) -> Stamp {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
            Stamp {
                dev: meta.dev(),
                ino: meta.ino(),
                len: meta.len(),
                mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
                ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
                btime_ns: nanos(meta.created()),
            }
        }
        #[cfg(not(unix))]
        {
            // Windows has no change time through std; its creation time is the birth time.
            Stamp {
                dev: 0,
                ino: 0,
                len: meta.len(),
                mtime_ns: nanos(meta.modified()),
                ctime_ns: 0,
                btime_ns: nanos(meta.created()),
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
        h.update(&self.ctime_ns.to_le_bytes());
        h.update(&self.btime_ns.to_le_bytes());
        h.finalize().to_hex()[..16].to_owned()
    }
}

/// The content IDs of files beneath one root, by stamp: a document hashed once is known by its
/// stamp from then on, so a later page of it reads only its own bytes. Bounded; the oldest
/// entry gives way.
#[derive(Debug, Default)]
pub struct ContentIds {
    known: std::sync::Mutex<(
        std::collections::HashMap<Stamp, String>,
        std::collections::VecDeque<Stamp>,
    )>,
}

/// Files remembered per root: a few hundred KiB at most.
const CONTENT_IDS_KEPT: usize = 1024;

impl ContentIds {
    pub fn get(&self, stamp: &Stamp) -> Option<String> {
        self.known.lock().ok()?.0.get(stamp).cloned()
    }

    pub fn insert(&self, stamp: Stamp, content_id: &str) {
        let Ok(mut known) = self.known.lock() else {
            return;
        };
        let (map, order) = &mut *known;
        if map.insert(stamp, content_id.to_owned()).is_none() {
            order.push_back(stamp);
            if order.len() > CONTENT_IDS_KEPT {
                if let Some(oldest) = order.pop_front() {
                    map.remove(&oldest);
                }
            }
        }
    }
}
