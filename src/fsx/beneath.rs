//! A trusted root held open as a directory handle, and everything beneath it reached through
//! that handle (SPEC §14 D17). A path is never checked and then opened again by name: every
//! component is opened relative to the directory the previous one produced, so the check and
//! the open are one step and a directory swapped for a symlink mid-read cannot redirect it.
//!
//! Symlinks keep the rule documents always had: a link whose target stays inside the root —
//! relative, or absolute under the root's real path — is followed beneath the handle; one that
//! leaves the root is refused. `..` never climbs above the root.

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// Why a path beneath a root could not be opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Nothing at that path (or a file used as a directory).
    NotFound,
    /// The path, or a link on it, leads outside the root.
    Outside,
    /// A directory, FIFO, socket or device where a regular file was wanted.
    NotRegular,
    /// A condition of the path that stays until someone changes it: permissions, a link loop
    /// or too many links, a name too long.
    Unreadable,
    /// A passing condition of the machine or the tree (out of descriptors or memory, an entry
    /// that kept changing, a closed root): the same read may work when tried again.
    Transient,
}

/// What a directory entry is, without following it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryType {
    Directory,
    Regular,
    Symlink,
    /// FIFOs, sockets, devices.
    Other,
}

/// Links followed for one path before giving up, as the kernel does.
const MAX_LINKS: usize = 40;
/// Times one component is looked at again when it changed between being looked at and opened.
const MAX_RETRIES: usize = 8;

/// An open trusted root: its real path (to place absolute in-root links) and, on Unix, the
/// directory handle everything is opened beneath.
#[derive(Debug)]
pub struct RootDir {
    real: PathBuf,
    /// What reads learnt of the files beneath: their content IDs by stamp.
    pub content_ids: super::ContentIds,
    /// `None` once closed.
    #[cfg(unix)]
    fd: std::sync::RwLock<Option<std::os::fd::OwnedFd>>,
    #[cfg(not(unix))]
    closed: std::sync::atomic::AtomicBool,
}

impl RootDir {
    /// Opens `path` (following links to reach it: the configured root is trusted) as a root.
    pub fn open(path: &Path) -> io::Result<RootDir> {
        let real = std::fs::canonicalize(path)?;
        imp::open_root(real)
    }

    /// The real path the root was opened at. For containment of absolute links and digests
    /// only; never for opening files.
    pub fn real_path(&self) -> &Path {
        &self.real
    }

    /// Opens the regular file at `rel` ('/'-separated) beneath the root, for reading, without
    /// blocking on a FIFO.
    pub fn open_file(&self, rel: &str) -> Result<File, Refusal> {
        imp::open_file(self, rel)
    }

    /// Lists the directory at `rel` (`""` is the root). No component may be a symlink: a tree
    /// walk never enters linked directories.
    pub fn list_dir(&self, rel: &str) -> io::Result<Vec<(OsString, EntryType)>> {
        imp::list_dir(self, rel)
    }

    /// What is at `rel`, without following a final symlink (`None` if nothing is).
    pub fn entry_type(&self, rel: &str) -> Option<EntryType> {
        imp::entry_type(self, rel)
    }

    /// The directory at `rel` through real directories only, to open many files in it without
    /// walking from the root each time.
    pub fn open_dir(&self, rel: &str) -> io::Result<Dir> {
        imp::open_dir(self, rel)
    }

    /// Releases the handle now, whoever still holds the root: later opens beneath it fail as
    /// unreadable. Waits for walks in progress (a few system calls each).
    pub fn close(&self) {
        imp::close(self);
    }

    /// The components of an absolute link target below the root, if it lies inside the root.
    /// A target spelled through another path to the root (say, a symlinked temp directory) is
    /// placed by its real path; the file is still opened beneath the handle, never by name.
    #[cfg_attr(not(unix), allow(dead_code))]
    fn inside(&self, target: &Path) -> Option<PathBuf> {
        if let Ok(rest) = target.strip_prefix(&self.real) {
            return Some(rest.to_path_buf());
        }
        let real = std::fs::canonicalize(target).ok()?;
        real.strip_prefix(&self.real).ok().map(Path::to_path_buf)
    }
}

/// A directory beneath a root (see [`RootDir::open_dir`]).
#[derive(Debug)]
pub struct Dir {
    #[cfg(unix)]
    fd: std::os::fd::OwnedFd,
}

impl Dir {
    /// Opens the entry `name` of this directory for reading unless it is a symlink, without
    /// blocking on a FIFO; `None` if it cannot (the caller then resolves the path beneath the
    /// root for the precise answer). What opened may be any kind of file: the caller checks it
    /// through the handle, which costs no extra look-up when it stats the file anyway.
    pub fn open_file(&self, name: &str) -> Option<File> {
        imp::open_in_dir(self, name)
    }
}

fn components(rel: &str) -> impl Iterator<Item = &str> {
    rel.split('/')
        .filter(|part| !part.is_empty() && *part != ".")
}

#[cfg(unix)]
mod imp {
    use super::*;
    use rustix::fs::{openat, readlinkat, statat, AtFlags, FileType, Mode, OFlags};
    use rustix::io::Errno;
    use std::collections::VecDeque;
    use std::ffi::OsStr;
    use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
    use std::os::unix::ffi::{OsStrExt, OsStringExt};

    const DIR_FLAGS: OFlags = OFlags::RDONLY
        .union(OFlags::DIRECTORY)
        .union(OFlags::NOFOLLOW)
        .union(OFlags::CLOEXEC);
    const FILE_FLAGS: OFlags = OFlags::RDONLY
        .union(OFlags::NOFOLLOW)
        .union(OFlags::NONBLOCK)
        .union(OFlags::NOCTTY)
        .union(OFlags::CLOEXEC);

    pub fn open_root(real: PathBuf) -> io::Result<RootDir> {
        let fd = openat(rustix::fs::CWD, real.as_path(), DIR_FLAGS, Mode::empty())?;
        Ok(RootDir {
            real,
            content_ids: Default::default(),
            fd: std::sync::RwLock::new(Some(fd)),
        })
    }

    pub fn close(root: &RootDir) {
        root.fd.write().unwrap_or_else(|e| e.into_inner()).take();
    }

    /// Runs `f` with the root's handle, held open for as long as `f` runs.
    fn with_fd<T>(root: &RootDir, closed: T, f: impl FnOnce(BorrowedFd<'_>) -> T) -> T {
        let guard = root.fd.read().unwrap_or_else(|e| e.into_inner());
        match guard.as_ref() {
            Some(fd) => f(fd.as_fd()),
            None => closed,
        }
    }

    fn closed_error() -> io::Error {
        io::Error::other("root closed")
    }

    fn entry_of(file_type: FileType) -> EntryType {
        match file_type {
            FileType::Directory => EntryType::Directory,
            FileType::RegularFile => EntryType::Regular,
            FileType::Symlink => EntryType::Symlink,
            _ => EntryType::Other,
        }
    }

    fn refusal(errno: Errno) -> Refusal {
        match errno {
            Errno::NOENT | Errno::NOTDIR => Refusal::NotFound,
            e if crate::fsx::is_transient(e.raw_os_error()) => Refusal::Transient,
            _ => Refusal::Unreadable,
        }
    }

    /// The walk's position: the directories entered below the root, innermost last.
    struct Walk<'a> {
        root: &'a RootDir,
        root_fd: BorrowedFd<'a>,
        dirs: Vec<OwnedFd>,
        pending: VecDeque<OsString>,
        links: usize,
    }

    impl<'a> Walk<'a> {
        fn new(root: &'a RootDir, root_fd: BorrowedFd<'a>, rel: &str) -> Walk<'a> {
            Walk {
                root,
                root_fd,
                dirs: Vec::new(),
                pending: components(rel).map(OsString::from).collect(),
                links: 0,
            }
        }

        fn here(&self) -> BorrowedFd<'_> {
            self.dirs.last().map_or(self.root_fd, |d| d.as_fd())
        }

        /// Continues the walk at a link's target instead of the link; `false` if `name` is no
        /// longer a link (it changed since it was looked at).
        fn follow(&mut self, name: &OsStr) -> Result<bool, Refusal> {
            self.links += 1;
            if self.links > MAX_LINKS {
                return Err(Refusal::Unreadable);
            }
            let target = match readlinkat(self.here(), name, Vec::new()) {
                Ok(target) => target,
                Err(Errno::INVAL | Errno::NOENT) => return Ok(false),
                Err(e) => return Err(refusal(e)),
            };
            let target = PathBuf::from(OsString::from_vec(target.into_bytes()));
            let rest = if target.is_absolute() {
                let rest = self.root.inside(&target).ok_or(Refusal::Outside)?;
                self.dirs.clear();
                rest
            } else {
                target
            };
            let parts = rest.to_str().ok_or(Refusal::Unreadable)?;
            for part in components(parts).collect::<Vec<_>>().into_iter().rev() {
                self.pending.push_front(OsString::from(part));
            }
            Ok(true)
        }

        /// Resolves every component and opens the regular file the last one names.
        fn open(mut self) -> Result<File, Refusal> {
            let mut retries = 0;
            while let Some(name) = self.pending.pop_front() {
                if name == ".." {
                    // Climbing above the root is leaving it.
                    self.dirs.pop().ok_or(Refusal::Outside)?;
                    continue;
                }
                let last = self.pending.is_empty();
                let stat =
                    statat(self.here(), &name, AtFlags::SYMLINK_NOFOLLOW).map_err(refusal)?;
                let failed = match entry_of(FileType::from_raw_mode(stat.st_mode)) {
                    EntryType::Symlink => match self.follow(&name)? {
                        true => continue,
                        false => Errno::INVAL,
                    },
                    EntryType::Directory if !last => {
                        match openat(self.here(), &name, DIR_FLAGS, Mode::empty()) {
                            Ok(fd) => {
                                self.dirs.push(fd);
                                continue;
                            }
                            Err(e) => e,
                        }
                    }
                    EntryType::Regular if last => {
                        match openat(self.here(), &name, FILE_FLAGS, Mode::empty()) {
                            Ok(fd) => return regular(File::from(fd)),
                            Err(e) => e,
                        }
                    }
                    _ if last => return Err(Refusal::NotRegular),
                    _ => return Err(Refusal::NotFound),
                };
                // It changed between the look and the open (into a symlink, say): look again.
                if retries >= MAX_RETRIES {
                    return Err(match refusal(failed) {
                        Refusal::NotFound => Refusal::NotFound,
                        _ => Refusal::Transient,
                    });
                }
                retries += 1;
                self.pending.push_front(name);
            }
            // The path named the root or a directory.
            Err(Refusal::NotRegular)
        }
    }

    /// The open file must be what was looked at: a regular file (a FIFO swapped in opens
    /// without blocking and is refused here).
    fn regular(file: File) -> Result<File, Refusal> {
        match file.metadata() {
            Ok(meta) if meta.is_file() => Ok(file),
            Ok(_) => Err(Refusal::NotRegular),
            Err(_) => Err(Refusal::Transient),
        }
    }

    pub fn open_file(root: &RootDir, rel: &str) -> Result<File, Refusal> {
        with_fd(root, Err(Refusal::Transient), |fd| {
            Walk::new(root, fd, rel).open()
        })
    }

    /// The directory at `rel` through real directories only.
    fn open_dir_strict(root: &RootDir, rel: &str) -> io::Result<OwnedFd> {
        with_fd(root, Err(closed_error()), |root_fd| {
            let mut dir: Option<OwnedFd> = None;
            for part in components(rel) {
                let here = dir.as_ref().map_or(root_fd, |d| d.as_fd());
                dir = Some(openat(here, part, DIR_FLAGS, Mode::empty())?);
            }
            match dir {
                Some(dir) => Ok(dir),
                None => Ok(rustix::io::dup(root_fd)?),
            }
        })
    }

    pub fn open_dir(root: &RootDir, rel: &str) -> io::Result<Dir> {
        Ok(Dir {
            fd: open_dir_strict(root, rel)?,
        })
    }

    pub fn open_in_dir(dir: &Dir, name: &str) -> Option<File> {
        let fd = openat(&dir.fd, name, FILE_FLAGS, Mode::empty()).ok()?;
        Some(File::from(fd))
    }

    pub fn list_dir(root: &RootDir, rel: &str) -> io::Result<Vec<(OsString, EntryType)>> {
        let fd = open_dir_strict(root, rel)?;
        let mut entries = Vec::new();
        for entry in rustix::fs::Dir::read_from(&fd)? {
            let entry = entry?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            let kind = match entry.file_type() {
                FileType::Unknown => {
                    let stat = statat(&fd, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW)?;
                    entry_of(FileType::from_raw_mode(stat.st_mode))
                }
                known => entry_of(known),
            };
            entries.push((OsStr::from_bytes(name).to_os_string(), kind));
        }
        Ok(entries)
    }

    pub fn entry_type(root: &RootDir, rel: &str) -> Option<EntryType> {
        let (parent, name) = match rel.rsplit_once('/') {
            Some((parent, name)) => (parent, name),
            None => ("", rel),
        };
        let dir = open_dir_strict(root, parent).ok()?;
        let stat = statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW).ok()?;
        Some(entry_of(FileType::from_raw_mode(stat.st_mode)))
    }
}

/// Without `openat` the check and the open are two steps: the path is resolved, checked
/// against the root's real path, then opened. A swap between the two can redirect the read
/// (docs/documents.md, "Paths").
#[cfg(not(unix))]
mod imp {
    use super::*;
    use std::fs;

    pub fn open_root(real: PathBuf) -> io::Result<RootDir> {
        if fs::metadata(&real)?.is_dir() {
            Ok(RootDir {
                real,
                content_ids: Default::default(),
                closed: std::sync::atomic::AtomicBool::new(false),
            })
        } else {
            Err(io::Error::other("not a directory"))
        }
    }

    fn join(root: &RootDir, rel: &str) -> PathBuf {
        let mut path = root.real.clone();
        components(rel).for_each(|part| path.push(part));
        path
    }

    fn entry_of(file_type: fs::FileType) -> EntryType {
        if file_type.is_symlink() {
            EntryType::Symlink
        } else if file_type.is_dir() {
            EntryType::Directory
        } else if file_type.is_file() {
            EntryType::Regular
        } else {
            EntryType::Other
        }
    }

    pub fn close(root: &RootDir) {
        root.closed
            .store(true, std::sync::atomic::Ordering::Release);
    }

    fn is_closed(root: &RootDir) -> bool {
        root.closed.load(std::sync::atomic::Ordering::Acquire)
    }

    pub fn open_file(root: &RootDir, rel: &str) -> Result<File, Refusal> {
        if is_closed(root) {
            return Err(Refusal::Transient);
        }
        let real = fs::canonicalize(join(root, rel)).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => Refusal::NotFound,
            _ if crate::fsx::is_transient(e.raw_os_error().unwrap_or(0)) => Refusal::Transient,
            _ => Refusal::Unreadable,
        })?;
        if !real.starts_with(&root.real) {
            return Err(Refusal::Outside);
        }
        match fs::metadata(&real) {
            Ok(meta) if meta.is_file() => {}
            Ok(_) => return Err(Refusal::NotRegular),
            Err(_) => return Err(Refusal::Transient),
        }
        let file = File::open(&real).map_err(|_| Refusal::Transient)?;
        match file.metadata() {
            Ok(meta) if meta.is_file() => Ok(file),
            _ => Err(Refusal::NotRegular),
        }
    }

    pub fn open_dir(root: &RootDir, _rel: &str) -> io::Result<Dir> {
        if is_closed(root) {
            return Err(io::Error::other("root closed"));
        }
        Ok(Dir {})
    }

    pub fn open_in_dir(_dir: &Dir, _name: &str) -> Option<File> {
        None
    }

    pub fn list_dir(root: &RootDir, rel: &str) -> io::Result<Vec<(OsString, EntryType)>> {
        if is_closed(root) {
            return Err(io::Error::other("root closed"));
        }
        fs::read_dir(join(root, rel))?
            .map(|entry| {
                let entry = entry?;
                Ok((entry.file_name(), entry_of(entry.file_type()?)))
            })
            .collect()
    }

    pub fn entry_type(root: &RootDir, rel: &str) -> Option<EntryType> {
        fs::symlink_metadata(join(root, rel))
            .ok()
            .map(|meta| entry_of(meta.file_type()))
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::fs;
    use std::io::Read;
    use std::os::unix::fs::symlink;

    struct Tree(PathBuf);

    impl Tree {
        fn new(name: &str) -> Tree {
            let dir =
                std::env::temp_dir().join(format!("cg-beneath-{}-{name}", std::process::id()));
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(dir.join("root/docs/deep")).unwrap();
            fs::create_dir_all(dir.join("outside")).unwrap();
            fs::write(dir.join("root/docs/a.md"), "inside").unwrap();
            fs::write(dir.join("root/docs/deep/b.md"), "deep").unwrap();
            fs::write(dir.join("outside/secret.md"), "outside").unwrap();
            Tree(dir)
        }
        fn root(&self) -> RootDir {
            RootDir::open(&self.0.join("root")).unwrap()
        }
        fn path(&self, rel: &str) -> PathBuf {
            self.0.join(rel)
        }
    }

    impl Drop for Tree {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn read(root: &RootDir, rel: &str) -> Result<String, Refusal> {
        let mut text = String::new();
        root.open_file(rel)?.read_to_string(&mut text).unwrap();
        Ok(text)
    }

    #[test]
    fn files_and_in_root_links_are_opened() {
        let t = Tree::new("inside");
        symlink("a.md", t.path("root/docs/rel.md")).unwrap();
        symlink(t.path("root/docs/deep"), t.path("root/abs-dir")).unwrap();
        symlink("../a.md", t.path("root/docs/deep/up.md")).unwrap();
        let root = t.root();
        assert_eq!(read(&root, "docs/a.md").unwrap(), "inside");
        assert_eq!(read(&root, "docs/rel.md").unwrap(), "inside");
        assert_eq!(read(&root, "abs-dir/b.md").unwrap(), "deep");
        assert_eq!(read(&root, "abs-dir/up.md").unwrap(), "inside");
        assert_eq!(read(&root, "docs/deep/../a.md").unwrap(), "inside");
    }

    #[test]
    fn absolute_links_spelled_through_another_path_to_the_root_are_placed_by_real_path() {
        let t = Tree::new("spelled");
        symlink(t.path("root"), t.path("alias")).unwrap();
        symlink(t.path("alias/docs/a.md"), t.path("root/via-alias.md")).unwrap();
        symlink(
            t.path("alias/../outside/secret.md"),
            t.path("root/via-alias-out.md"),
        )
        .unwrap();
        let root = RootDir::open(&t.path("alias")).unwrap();
        assert_eq!(root.real_path(), fs::canonicalize(t.path("root")).unwrap());
        assert_eq!(read(&root, "via-alias.md").unwrap(), "inside");
        assert_eq!(read(&root, "via-alias-out.md"), Err(Refusal::Outside));
    }

    #[test]
    fn leaving_the_root_is_refused() {
        let t = Tree::new("outside");
        symlink(t.path("outside"), t.path("root/docs/out")).unwrap();
        symlink("../../outside/secret.md", t.path("root/docs/rel-out.md")).unwrap();
        let root = t.root();
        assert_eq!(read(&root, "docs/out/secret.md"), Err(Refusal::Outside));
        assert_eq!(read(&root, "docs/rel-out.md"), Err(Refusal::Outside));
        assert_eq!(read(&root, "../outside/secret.md"), Err(Refusal::Outside));
        assert_eq!(read(&root, "docs/missing.md"), Err(Refusal::NotFound));
        assert_eq!(read(&root, "docs/a.md/x"), Err(Refusal::NotFound));
        assert_eq!(read(&root, "docs"), Err(Refusal::NotRegular));
    }

    #[test]
    fn link_loops_and_fifos_are_refused_without_blocking() {
        let t = Tree::new("loops");
        symlink("loop.md", t.path("root/loop.md")).unwrap();
        std::process::Command::new("mkfifo")
            .arg(t.path("root/pipe.md"))
            .status()
            .unwrap();
        let root = t.root();
        assert_eq!(read(&root, "loop.md"), Err(Refusal::Unreadable));
        assert_eq!(read(&root, "pipe.md"), Err(Refusal::NotRegular));
    }

    #[test]
    fn the_handle_keeps_serving_the_directory_it_opened() {
        let t = Tree::new("moved");
        let root = t.root();
        fs::rename(t.path("root"), t.path("moved")).unwrap();
        symlink(t.path("outside"), t.path("root")).unwrap();
        assert_eq!(read(&root, "docs/a.md").unwrap(), "inside");
    }

    #[test]
    fn a_directory_opens_its_entries_but_never_a_link() {
        let t = Tree::new("dir");
        symlink("a.md", t.path("root/docs/link.md")).unwrap();
        let root = t.root();
        let docs = root.open_dir("docs").unwrap();
        let mut text = String::new();
        docs.open_file("a.md")
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(text, "inside");
        assert!(docs.open_file("link.md").is_none());
        assert!(docs.open_file("missing.md").is_none());
        let deep = docs.open_file("deep").unwrap();
        assert!(
            deep.metadata().unwrap().is_dir(),
            "the caller sees what it opened"
        );
        symlink(t.path("outside"), t.path("root/out")).unwrap();
        assert!(root.open_dir("out").is_err());
    }

    #[test]
    fn a_closed_root_opens_nothing() {
        let t = Tree::new("closed");
        let root = t.root();
        assert_eq!(read(&root, "docs/a.md").unwrap(), "inside");
        root.close();
        assert_eq!(read(&root, "docs/a.md"), Err(Refusal::Transient));
        assert!(root.list_dir("").is_err());
        assert_eq!(root.entry_type("docs"), None);
    }

    #[test]
    fn listing_never_enters_links() {
        let t = Tree::new("list");
        symlink(t.path("outside"), t.path("root/linked")).unwrap();
        let root = t.root();
        let mut names = root.list_dir("").unwrap();
        names.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(
            names,
            vec![
                (OsString::from("docs"), EntryType::Directory),
                (OsString::from("linked"), EntryType::Symlink)
            ]
        );
        assert!(root.list_dir("linked").is_err());
        assert_eq!(root.entry_type("docs/a.md"), Some(EntryType::Regular));
        assert_eq!(root.entry_type("linked"), Some(EntryType::Symlink));
        assert_eq!(root.entry_type("nothing"), None);
    }
}
