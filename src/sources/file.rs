//! The file source: finds a file-based provider's definition files under its root, reads each one
//! within a fixed budget and parses it as JSON. Schema validation happens elsewhere; this layer
//! only guarantees that what it hands over came whole and unchanged from regular files inside the
//! root, and that every failure names a relative file and a stable reason, never an absolute path
//! or a parser message. The root is opened once as a directory handle; every directory listed
//! and every file read is reached beneath it, never by a path re-resolved after a check.

use crate::config::Layout;
use crate::error::{Code, GraphError, NextAction, Phase};
use crate::fsx::beneath::{Dir, EntryType, Refusal, RootDir};
use crate::fsx::Stamp;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashSet;
use std::ffi::OsStr;
use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

/// The largest definition or manifest file that is read at all: the record limit of the
/// definitions it holds.
const RECORD_MAX_BYTES: u64 = crate::definitions::fields::RECORD_MAX_BYTES as u64;

/// One definition file and what was made of it when it was read.
#[derive(Clone, Debug, PartialEq)]
pub struct DefinitionFile<T> {
    /// Relative to the root, '/'-separated.
    pub file: String,
    pub value: T,
}

/// A provider's manifest, parsed but not validated, and its definition files.
#[derive(Clone, Debug, PartialEq)]
pub struct ProviderFiles<T> {
    pub provider: Value,
    /// Sorted by `file` in byte order.
    pub definitions: Vec<DefinitionFile<T>>,
}

/// Definition files parsed but not validated.
pub type RawProviderFiles = ProviderFiles<Value>;

const MANIFEST: &str = "provider.json";
const CAPABILITIES_DIR: &str = "capabilities";
const KNOWLEDGE_DIR: &str = "knowledge";
const BARE_CAPABILITY: &str = "capability.json";
const LEGACY_SUFFIX: &str = ".capability.json";
const JSON_SUFFIX: &str = ".json";
const SKIPPED_DIRS: [&str; 7] = [
    ".git",
    "node_modules",
    "dist",
    "dist-test",
    "coverage",
    ".cache",
    ".tmp",
];
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";
/// Below this many files per thread, spawning costs more than it saves.
const FILES_PER_WORKER_MIN: usize = 64;

/// Opens a provider's root as the handle its files are read beneath; it must be a listable
/// directory. `config_path` is the config path of the root for error details, e.g.
/// `"providers[0].authority.rootDir"`.
pub fn open_root(root: &Path, config_path: &str) -> Result<RootDir, GraphError> {
    let opened = RootDir::open(root).and_then(|dir| dir.list_dir("").map(|_| dir));
    opened.map_err(|e| match crate::fsx::is_transient_io(&e) {
        // Out of descriptors or memory: the root is fine, the machine is busy.
        true => root_error(config_path)
            .with_action(NextAction::Retry)
            .detail("reason", "temporarily_unreadable"),
        false => root_error(config_path),
    })
}

/// Reads the manifest and every definition file of the provider beneath `root`.
pub fn read_provider_dir(
    root: &RootDir,
    layout: Layout,
    provider_id: &str,
) -> Result<RawProviderFiles, GraphError> {
    read_provider_dir_with(root, layout, provider_id, &|_, value| value)
}

/// Like [`read_provider_dir`], handing each parsed definition file to `each` on the thread that
/// read it, so a parsed tree lives no longer than its own file. The first failure to read (in
/// sorted order) is reported whatever `each` made of the files.
pub fn read_provider_dir_with<T: Send>(
    root: &RootDir,
    layout: Layout,
    provider_id: &str,
    each: &(dyn Fn(&str, Value) -> T + Sync),
) -> Result<ProviderFiles<T>, GraphError> {
    let fail = |file: &str, reason: Reason| definition_error(provider_id, file, reason);
    let (provider, found) = manifest_and_candidates(root, layout, provider_id)?;
    let definitions =
        read_definitions(root, found, each).map_err(|(file, reason)| fail(&file, reason))?;
    Ok(ProviderFiles {
        provider,
        definitions,
    })
}

/// Like [`read_provider_dir_with`], but a definition file that cannot be read or parsed is
/// handed to `each` as its error and the others are still read (for `doctor`, which lists
/// every problem). The files are read one after the other.
pub fn read_provider_dir_each<T>(
    root: &RootDir,
    layout: Layout,
    provider_id: &str,
    each: &dyn Fn(&str, Result<Value, GraphError>) -> T,
) -> Result<ProviderFiles<T>, GraphError> {
    let (provider, found) = manifest_and_candidates(root, layout, provider_id)?;
    let mut reader = Reader::new(root);
    let definitions = found
        .into_iter()
        .map(|candidate| {
            let value = reader
                .read(&candidate.rel, candidate.kind)
                .map_err(|reason| definition_error(provider_id, &candidate.rel, reason));
            DefinitionFile {
                value: each(&candidate.rel, value),
                file: candidate.rel,
            }
        })
        .collect();
    Ok(ProviderFiles {
        provider,
        definitions,
    })
}

/// The parsed manifest and the definition files the layout finds, or the first reason the
/// provider's files cannot be read at all.
fn manifest_and_candidates(
    root: &RootDir,
    layout: Layout,
    provider_id: &str,
) -> Result<(Value, Vec<Candidate>), GraphError> {
    let fail = |file: &str, reason: Reason| definition_error(provider_id, file, reason);
    let provider = read_manifest(root).map_err(|reason| fail(MANIFEST, reason))?;
    if layout == Layout::Directory
        && root.entry_type(CAPABILITIES_DIR) != Some(EntryType::Directory)
    {
        return Err(fail(CAPABILITIES_DIR, Reason::DefinitionDirectoryRequired));
    }
    let found = collect_candidates(root, layout).map_err(|(file, reason)| fail(&file, reason))?;
    if let Some(index) = first_case_collision(&found) {
        return Err(fail(&found[index].rel, Reason::DefinitionCaseCollision));
    }
    Ok((provider, found))
}

/// The definition files of a provider tree, relative to its root and sorted, and the
/// `providerId` its manifest names (for `migrate`, which then opens the tree under that ID).
pub fn definition_files(
    root: &Path,
    layout: Layout,
) -> Result<(Option<String>, Vec<String>), GraphError> {
    let files = read_provider_dir_with(&open_root(root, "rootDir")?, layout, "", &|_, _| ())?;
    let provider_id = files
        .provider
        .get("providerId")
        .and_then(Value::as_str)
        .map(str::to_owned);
    Ok((
        provider_id,
        files.definitions.into_iter().map(|d| d.file).collect(),
    ))
}

/// Why a provider's files were refused; the string form is the `reason` detail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reason {
    DefinitionDirectoryRequired,
    NestedProviderManifest,
    UseDirectoryLayoutOrCapabilitySuffix,
    MixedDefinitionLayout,
    DefinitionSymlinkUnsupported,
    DefinitionCaseCollision,
    DirectoryUnreadable,
    InvalidFileName,
    ProviderManifestRequired,
    FileUnreadable,
    /// Out of descriptors or memory: a condition of the machine, never of the definitions.
    TemporarilyUnreadable,
    OutsideRoot,
    NotRegularFile,
    FileTooLarge,
    FileChangedWhileReading,
    InvalidUtf8,
    InvalidJson,
}

impl Reason {
    fn as_str(self) -> &'static str {
        match self {
            Reason::DefinitionDirectoryRequired => "definition_directory_required",
            Reason::NestedProviderManifest => "nested_provider_manifest",
            Reason::UseDirectoryLayoutOrCapabilitySuffix => {
                "use_directory_layout_or_capability_suffix"
            }
            Reason::MixedDefinitionLayout => "mixed_definition_layout",
            Reason::DefinitionSymlinkUnsupported => "definition_symlink_unsupported",
            Reason::DefinitionCaseCollision => "definition_case_collision",
            Reason::DirectoryUnreadable => "directory_unreadable",
            Reason::InvalidFileName => "invalid_file_name",
            Reason::ProviderManifestRequired => "provider_manifest_required",
            Reason::FileUnreadable => "file_unreadable",
            Reason::TemporarilyUnreadable => "temporarily_unreadable",
            Reason::OutsideRoot => "outside_root",
            Reason::NotRegularFile => "not_regular_file",
            Reason::FileTooLarge => "file_too_large",
            Reason::FileChangedWhileReading => "file_changed_while_reading",
            Reason::InvalidUtf8 => "invalid_utf8",
            Reason::InvalidJson => "invalid_json",
        }
    }
}

fn root_error(config_path: &str) -> GraphError {
    GraphError::new(Code::ConfigInvalid)
        .with_phase(Phase::Load)
        .detail("path", config_path)
        .detail("expected", "readable directory")
}

fn definition_error(provider_id: &str, file: &str, reason: Reason) -> GraphError {
    // Nothing is wrong with the definitions then: the same load may work when tried again.
    let error = if reason == Reason::TemporarilyUnreadable {
        GraphError::new(Code::ConfigInvalid)
            .with_phase(Phase::Load)
            .with_action(NextAction::Retry)
    } else {
        GraphError::new(Code::DefinitionInvalid)
    };
    let error = error
        .detail("providerId", provider_id)
        .detail("file", file)
        .detail("reason", reason.as_str());
    if reason == Reason::FileTooLarge {
        error.detail("maxBytes", RECORD_MAX_BYTES)
    } else {
        error
    }
}

// ---------------------------------------------------------------------------------------------
// Finding files

/// A file the layout says is a definition.
struct Candidate {
    rel: String,
    /// What the walk saw, without following it: never a directory.
    kind: EntryType,
}

/// The part of the tree a directory belongs to, which changes which names are allowed in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Area {
    Plain,
    Capabilities,
    Knowledge,
}

struct PendingDir {
    /// Empty for the root.
    rel: String,
    area: Area,
}

impl PendingDir {
    fn child(&self, name: &str) -> String {
        if self.rel.is_empty() {
            return name.to_owned();
        }
        let mut rel = String::with_capacity(self.rel.len() + 1 + name.len());
        rel.push_str(&self.rel);
        rel.push('/');
        rel.push_str(name);
        rel
    }

    fn display_rel(&self) -> &str {
        if self.rel.is_empty() {
            "."
        } else {
            &self.rel
        }
    }
}

enum Action {
    Ignore,
    Collect,
    Refuse(Reason),
}

/// An iterative walk, so deep trees cannot exhaust the stack.
struct Walk<'a> {
    root: &'a RootDir,
    layout: Layout,
    pending: Vec<PendingDir>,
    found: Vec<Candidate>,
    /// Only the smallest offending path is kept: the report is the same whatever order the file
    /// system lists entries in, and memory stays bounded however broken the tree is.
    violation: Option<(String, Reason)>,
}

/// Every definition candidate sorted by relative path, or the first layout violation.
fn collect_candidates(root: &RootDir, layout: Layout) -> Result<Vec<Candidate>, (String, Reason)> {
    let mut walk = Walk {
        root,
        layout,
        pending: vec![PendingDir {
            rel: String::new(),
            area: Area::Plain,
        }],
        found: Vec::new(),
        violation: None,
    };
    while let Some(dir) = walk.pending.pop() {
        walk.visit_dir(&dir);
    }
    if let Some(violation) = walk.violation {
        return Err(violation);
    }
    walk.found.sort_unstable_by(|a, b| a.rel.cmp(&b.rel));
    Ok(walk.found)
}

impl Walk<'_> {
    fn visit_dir(&mut self, dir: &PendingDir) {
        // Listing goes through real directories only, so a linked directory is never entered
        // (and one swapped in since it was seen is unreadable, not followed).
        let entries = match self.root.list_dir(&dir.rel) {
            Ok(entries) => entries,
            Err(e) if crate::fsx::is_transient_io(&e) => {
                return self.refuse(dir.display_rel().to_owned(), Reason::TemporarilyUnreadable)
            }
            Err(_) => {
                return self.refuse(dir.display_rel().to_owned(), Reason::DirectoryUnreadable)
            }
        };
        for (name, kind) in entries {
            self.visit_entry(dir, &name, kind);
        }
    }

    fn visit_entry(&mut self, dir: &PendingDir, name: &OsStr, kind: EntryType) {
        let Some(name) = name.to_str() else {
            return self.visit_undecodable(dir, name, kind);
        };
        if let Some(reason) = self.name_violation(dir, name) {
            return self.refuse(dir.child(name), reason);
        }
        if kind == EntryType::Directory {
            return self.descend(dir, name);
        }
        match self.file_action(dir.area, name, kind) {
            Action::Ignore => {}
            Action::Collect => self.found.push(Candidate {
                rel: dir.child(name),
                kind,
            }),
            Action::Refuse(reason) => self.refuse(dir.child(name), reason),
        }
    }

    /// Relative paths are reported and sorted as strings, which a non-UTF-8 name cannot be, so
    /// such a name is refused wherever it could hide a definition.
    fn visit_undecodable(&mut self, dir: &PendingDir, name: &OsStr, kind: EntryType) {
        if kind == EntryType::Directory || name.as_encoded_bytes().ends_with(JSON_SUFFIX.as_bytes())
        {
            self.refuse(dir.child(&name.to_string_lossy()), Reason::InvalidFileName);
        }
    }

    /// Names that are wrong whatever kind of entry carries them.
    fn name_violation(&self, dir: &PendingDir, name: &str) -> Option<Reason> {
        let nested_manifest =
            name == MANIFEST && !dir.rel.is_empty() && dir.area != Area::Knowledge;
        if nested_manifest {
            return Some(Reason::NestedProviderManifest);
        }
        let definition_name_allowed =
            self.layout == Layout::Directory && dir.area == Area::Capabilities;
        if name == BARE_CAPABILITY && !definition_name_allowed {
            return Some(Reason::UseDirectoryLayoutOrCapabilitySuffix);
        }
        None
    }

    fn descend(&mut self, dir: &PendingDir, name: &str) {
        if SKIPPED_DIRS.contains(&name) {
            return;
        }
        let area = match (dir.rel.is_empty(), name) {
            (true, CAPABILITIES_DIR) => Area::Capabilities,
            (true, KNOWLEDGE_DIR) => Area::Knowledge,
            _ => dir.area,
        };
        self.pending.push(PendingDir {
            rel: dir.child(name),
            area,
        });
    }

    /// Non-regular entries with a definition's name are collected rather than ignored, so that a
    /// FIFO or socket posing as a definition is reported instead of silently dropped.
    fn file_action(&self, area: Area, name: &str, kind: EntryType) -> Action {
        match (self.layout, area) {
            (Layout::Legacy, _) if name.ends_with(LEGACY_SUFFIX) => Action::Collect,
            (Layout::Legacy, _) => Action::Ignore,
            (Layout::Directory, Area::Capabilities) if kind == EntryType::Symlink => {
                Action::Refuse(Reason::DefinitionSymlinkUnsupported)
            }
            (Layout::Directory, Area::Capabilities) if name.ends_with(JSON_SUFFIX) => {
                Action::Collect
            }
            (Layout::Directory, Area::Capabilities) => Action::Ignore,
            (Layout::Directory, _) if name.ends_with(LEGACY_SUFFIX) => {
                Action::Refuse(Reason::MixedDefinitionLayout)
            }
            (Layout::Directory, _) => Action::Ignore,
        }
    }

    fn refuse(&mut self, rel: String, reason: Reason) {
        let smaller = match &self.violation {
            Some((current, _)) => rel < *current,
            None => true,
        };
        if smaller {
            self.violation = Some((rel, reason));
        }
    }
}

/// The later of the first two paths that differ only by case, since such definitions would
/// overwrite each other on case-insensitive file systems.
fn first_case_collision(found: &[Candidate]) -> Option<usize> {
    let mut seen = HashSet::with_capacity(found.len());
    found
        .iter()
        .position(|candidate| !seen.insert(fold_case(&candidate.rel)))
}

/// Borrows the common all-lowercase ASCII path instead of allocating a copy.
fn fold_case(rel: &str) -> Cow<'_, str> {
    if rel.bytes().any(|b| b.is_ascii_uppercase() || !b.is_ascii()) {
        Cow::Owned(rel.to_lowercase())
    } else {
        Cow::Borrowed(rel)
    }
}

// ---------------------------------------------------------------------------------------------
// Reading files

/// The manifest gets its own reasons: a missing one is required, anything else unreadable.
fn read_manifest(root: &RootDir) -> Result<Value, Reason> {
    let file = root.open_file(MANIFEST).map_err(|refusal| match refusal {
        Refusal::NotFound => Reason::ProviderManifestRequired,
        Refusal::Outside => Reason::OutsideRoot,
        Refusal::NotRegular | Refusal::Unreadable => Reason::FileUnreadable,
        Refusal::Transient => Reason::TemporarilyUnreadable,
    })?;
    let mut bytes = Vec::new();
    read_whole(&file, &mut bytes)?;
    parse_json(&bytes)
}

/// Reads all candidates, in parallel when there are enough, and pairs them with their paths.
fn read_definitions<T: Send>(
    root: &RootDir,
    found: Vec<Candidate>,
    each: &(dyn Fn(&str, Value) -> T + Sync),
) -> Result<Vec<DefinitionFile<T>>, (String, Reason)> {
    let values = match read_all(root, &found, each) {
        Ok(values) => values,
        Err((index, reason)) => return Err((found[index].rel.clone(), reason)),
    };
    Ok(found
        .into_iter()
        .zip(values)
        .map(|(candidate, value)| DefinitionFile {
            file: candidate.rel,
            value,
        })
        .collect())
}

enum ChunkError {
    Failed(usize, Reason),
    /// Stopped because a file earlier in sorted order already failed.
    Abandoned,
}

/// Contiguous chunks, one per worker. Each chunk stops at its own first failure, and every chunk
/// stops once a lower index has failed, so the lowest failing index is always found and reported
/// whatever the thread timing.
fn read_all<T: Send>(
    root: &RootDir,
    found: &[Candidate],
    each: &(dyn Fn(&str, Value) -> T + Sync),
) -> Result<Vec<T>, (usize, Reason)> {
    let outcomes = read_chunks(root, found, worker_count(found.len()), each);
    let failure = outcomes
        .iter()
        .filter_map(|outcome| match outcome {
            Err(ChunkError::Failed(index, reason)) => Some((*index, *reason)),
            _ => None,
        })
        .min_by_key(|(index, _)| *index);
    if let Some(failure) = failure {
        return Err(failure);
    }
    // Abandoning needs an earlier failure, so without one every chunk is complete.
    Ok(outcomes
        .into_iter()
        .flat_map(Result::unwrap_or_default)
        .collect())
}

type ChunkOutcome<T> = Result<Vec<T>, ChunkError>;

/// One outcome per chunk, in chunk order.
fn read_chunks<T: Send>(
    root: &RootDir,
    found: &[Candidate],
    workers: usize,
    each: &(dyn Fn(&str, Value) -> T + Sync),
) -> Vec<ChunkOutcome<T>> {
    let chunk_len = found.len().div_ceil(workers).max(1);
    let first_failure = &AtomicUsize::new(usize::MAX);
    thread::scope(|scope| {
        let started: Vec<_> = found
            .chunks(chunk_len)
            .enumerate()
            .map(|(n, chunk)| {
                let job = move || read_chunk(root, chunk, n * chunk_len, first_failure, each);
                let handle = if workers > 1 {
                    thread::Builder::new().spawn_scoped(scope, job).ok()
                } else {
                    None
                };
                (job, handle)
            })
            .collect();
        // A chunk whose thread could not be spawned is read here instead: a busy system should
        // slow loading down, not fail it.
        started
            .into_iter()
            .map(|(job, handle)| match handle {
                Some(handle) => handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                None => job(),
            })
            .collect()
    })
}

fn worker_count(files: usize) -> usize {
    let cores = thread::available_parallelism().map_or(1, |n| n.get());
    cores.min(files / FILES_PER_WORKER_MIN).max(1)
}

fn read_chunk<T>(
    root: &RootDir,
    chunk: &[Candidate],
    offset: usize,
    first_failure: &AtomicUsize,
    each: &(dyn Fn(&str, Value) -> T + Sync),
) -> Result<Vec<T>, ChunkError> {
    let mut reader = Reader::new(root);
    let mut values = Vec::with_capacity(chunk.len());
    for (index, candidate) in (offset..).zip(chunk) {
        if first_failure.load(Ordering::Relaxed) < index {
            return Err(ChunkError::Abandoned);
        }
        match reader.read(&candidate.rel, candidate.kind) {
            Ok(value) => values.push(each(&candidate.rel, value)),
            Err(reason) => {
                first_failure.fetch_min(index, Ordering::Relaxed);
                return Err(ChunkError::Failed(index, reason));
            }
        }
    }
    Ok(values)
}

/// Per-thread scratch space, reused so a file costs no buffer allocation of its own, and the
/// directory of the last file read: files come in sorted order, so most share it.
struct Reader<'a> {
    root: &'a RootDir,
    bytes: Vec<u8>,
    dir: Option<(String, Dir)>,
}

impl<'a> Reader<'a> {
    fn new(root: &'a RootDir) -> Reader<'a> {
        Reader {
            root,
            bytes: Vec::new(),
            dir: None,
        }
    }

    fn read(&mut self, rel: &str, kind: EntryType) -> Result<Value, Reason> {
        let file = self.open(rel, kind)?;
        read_whole(&file, &mut self.bytes)?;
        parse_json(&self.bytes)
    }

    /// A FIFO, socket or device posing as a definition is refused without being opened. The
    /// file is opened beneath the root: a symlink is followed only while it stays inside.
    fn open(&mut self, rel: &str, kind: EntryType) -> Result<File, Reason> {
        if !matches!(kind, EntryType::Regular | EntryType::Symlink) {
            return Err(Reason::NotRegularFile);
        }
        if kind == EntryType::Regular {
            if let Some(file) = self.open_in_dir(rel) {
                return Ok(file);
            }
        }
        self.root.open_file(rel).map_err(|refusal| match refusal {
            Refusal::Outside => Reason::OutsideRoot,
            Refusal::NotRegular => Reason::NotRegularFile,
            Refusal::NotFound | Refusal::Unreadable => Reason::FileUnreadable,
            Refusal::Transient => Reason::TemporarilyUnreadable,
        })
    }

    /// The common case in one `openat`: an entry in the directory of the previous file, never
    /// a link (anything else is left to the full walk beneath the root). Its type is checked by
    /// `read_whole` through the handle; only FIFOs could block, and they open without blocking.
    fn open_in_dir(&mut self, rel: &str) -> Option<File> {
        let (parent, name) = rel.rsplit_once('/').unwrap_or(("", rel));
        if self.dir.as_ref().is_none_or(|(p, _)| p != parent) {
            self.dir = Some((parent.to_owned(), self.root.open_dir(parent).ok()?));
        }
        self.dir.as_ref()?.1.open_file(name)
    }
}

/// The file's stamp through the open handle; it must be a regular file.
fn stamp_of(file: &File) -> Result<Stamp, Reason> {
    let meta = file.metadata().map_err(|e| io_reason(&e))?;
    if !meta.is_file() {
        return Err(Reason::NotRegularFile);
    }
    Ok(Stamp::of(&meta))
}

/// Reads the whole file into `bytes`, refusing it if it is too large or was written to while
/// being read. One byte past the budget is requested so that growth during the read shows.
fn read_whole(file: &File, bytes: &mut Vec<u8>) -> Result<(), Reason> {
    let before = stamp_of(file)?;
    if before.len > RECORD_MAX_BYTES {
        return Err(Reason::FileTooLarge);
    }
    bytes.clear();
    file.take(RECORD_MAX_BYTES + 1)
        .read_to_end(bytes)
        .map_err(|e| io_reason(&e))?;
    let after = stamp_of(file)?;
    if after != before || bytes.len() as u64 != before.len {
        return Err(Reason::FileChangedWhileReading);
    }
    Ok(())
}

fn io_reason(e: &std::io::Error) -> Reason {
    if crate::fsx::is_transient_io(e) {
        Reason::TemporarilyUnreadable
    } else {
        Reason::FileUnreadable
    }
}

/// Parser messages are dropped on purpose: they can quote file content.
fn parse_json(bytes: &[u8]) -> Result<Value, Reason> {
    let bytes = bytes.strip_prefix(UTF8_BOM).unwrap_or(bytes);
    let text = std::str::from_utf8(bytes).map_err(|_| Reason::InvalidUtf8)?;
    serde_json::from_str(text).map_err(|_| Reason::InvalidJson)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::fs;
    use std::path::PathBuf;
    use std::sync::atomic::AtomicU64;
    use std::sync::mpsc;
    use std::time::{Duration, UNIX_EPOCH};

    const CONFIG_PATH: &str = "providers[0].authority.rootDir";

    fn read_at(root: &Path, layout: Layout) -> Result<RawProviderFiles, GraphError> {
        read_provider_dir(&open_root(root, CONFIG_PATH)?, layout, "demo")
    }

    /// A unique directory under the system temp dir, removed on drop.
    struct Fixture {
        root: PathBuf,
    }

    impl Fixture {
        fn new() -> Fixture {
            static COUNTER: AtomicU64 = AtomicU64::new(0);
            let nanos = std::time::SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            let name = format!(
                "cg-file-source-{}-{}-{nanos}",
                std::process::id(),
                COUNTER.fetch_add(1, Ordering::Relaxed)
            );
            let root = std::env::temp_dir().join(name);
            fs::create_dir(&root).unwrap();
            Fixture { root }
        }

        /// A provider root with its manifest.
        fn provider() -> Fixture {
            let fixture = Fixture::new();
            fixture.write(MANIFEST, r#"{"id":"demo"}"#);
            fixture
        }

        fn path(&self, rel: &str) -> PathBuf {
            let mut path = self.root.clone();
            rel.split('/').for_each(|part| path.push(part));
            path
        }

        fn write(&self, rel: &str, contents: impl AsRef<[u8]>) -> &Fixture {
            let path = self.path(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, contents).unwrap();
            self
        }

        fn mkdir(&self, rel: &str) -> &Fixture {
            fs::create_dir_all(self.path(rel)).unwrap();
            self
        }

        #[cfg(unix)]
        fn symlink(&self, target: &Path, rel: &str) -> &Fixture {
            let path = self.path(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(target, path).unwrap();
            self
        }

        #[cfg(unix)]
        fn fifo(&self, rel: &str) -> &Fixture {
            let path = self.path(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            let status = std::process::Command::new("mkfifo")
                .arg(&path)
                .status()
                .unwrap();
            assert!(status.success());
            self
        }

        fn read(&self, layout: Layout) -> Result<RawProviderFiles, GraphError> {
            read_at(&self.root, layout)
        }

        fn files(&self, layout: Layout) -> Vec<String> {
            let files = self.read(layout).unwrap();
            files.definitions.into_iter().map(|d| d.file).collect()
        }

        /// The error, checked to carry no absolute path.
        fn error(&self, layout: Layout) -> GraphError {
            let error = self.read(layout).expect_err("expected a failure");
            assert_no_absolute_path(&error, &self.root);
            error
        }

        /// `(file, reason)` of a definition error.
        fn failure(&self, layout: Layout) -> (String, String) {
            let error = self.error(layout);
            assert_eq!(error.code(), Code::DefinitionInvalid);
            assert_eq!(error.phase(), Phase::Load);
            let details = error.details().unwrap();
            let keys: Vec<&str> = details.keys().map(String::as_str).collect();
            assert_eq!(&keys[..3], ["providerId", "file", "reason"]);
            assert_eq!(details["providerId"], "demo");
            let text = |key: &str| details[key].as_str().unwrap().to_owned();
            (text("file"), text("reason"))
        }
    }

    impl Drop for Fixture {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.root);
        }
    }

    fn assert_no_absolute_path(error: &GraphError, root: &Path) {
        let json = error.to_json();
        let mut forbidden = vec![
            root.to_string_lossy().into_owned(),
            std::env::temp_dir().to_string_lossy().into_owned(),
        ];
        if let Ok(real) = fs::canonicalize(root) {
            forbidden.push(real.to_string_lossy().into_owned());
        }
        for path in forbidden {
            assert!(!json.contains(&path), "{json} contains {path}");
        }
    }

    fn expect(file: &str, reason: &str) -> (String, String) {
        (file.to_owned(), reason.to_owned())
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    // Happy paths -------------------------------------------------------------------------------

    #[cfg(unix)]
    #[test]
    fn a_file_unreadable_for_a_passing_reason_is_no_definition_error() {
        let busy = std::io::Error::from_raw_os_error(rustix::io::Errno::MFILE.raw_os_error());
        let e = definition_error("demo", "capabilities/a.json", io_reason(&busy));
        assert_eq!(
            (e.code(), e.phase(), e.next_action()),
            (Code::ConfigInvalid, Phase::Load, Some(NextAction::Retry))
        );
        let denied = std::io::Error::from_raw_os_error(rustix::io::Errno::ACCESS.raw_os_error());
        let e = definition_error("demo", "capabilities/a.json", io_reason(&denied));
        assert_eq!(e.code(), Code::DefinitionInvalid);
    }

    #[test]
    fn legacy_reads_suffixed_files_anywhere_but_in_skipped_dirs() {
        let f = Fixture::provider();
        f.write("a.capability.json", r#"{"n":1}"#)
            .write("nested/deep/b.capability.json", r#"{"n":2}"#)
            .write("coverage-guide/c.capability.json", r#"{"n":3}"#)
            .write("capabilities/d.json", "not a legacy definition")
            .write("notes.json", "ignored")
            .write("README.md", "ignored");
        for skipped in SKIPPED_DIRS {
            f.write(&format!("{skipped}/x.capability.json"), "{")
                .write(&format!("sub/{skipped}/provider.json"), "{}")
                .write(&format!("{skipped}/pkg/capability.json"), "{}");
        }
        let files = f.read(Layout::Legacy).unwrap();
        assert_eq!(files.provider, json!({"id": "demo"}));
        let got: Vec<(&str, &Value)> = files
            .definitions
            .iter()
            .map(|d| (d.file.as_str(), &d.value))
            .collect();
        assert_eq!(
            got,
            [
                ("a.capability.json", &json!({"n": 1})),
                ("coverage-guide/c.capability.json", &json!({"n": 3})),
                ("nested/deep/b.capability.json", &json!({"n": 2})),
            ]
        );
    }

    #[test]
    fn directory_reads_json_under_capabilities_only() {
        let f = Fixture::provider();
        f.write("capabilities/a.json", r#"{"n":1}"#)
            .write("capabilities/group/deep/b.json", r#"{"n":2}"#)
            .write("capabilities/capability.json", r#"{"n":3}"#)
            .write("capabilities/coverage-guide/c.json", r#"{"n":4}"#)
            .write("capabilities/x.capability.json", r#"{"n":5}"#)
            .write("capabilities/coverage/skipped.json", "{")
            .write("capabilities/node_modules/pkg/skipped.json", "{")
            .write("capabilities/notes.md", "ignored")
            .write("other/ignored.json", "{")
            .write("knowledge/provider.json", "{")
            .write("knowledge/guide/provider.json", "{")
            .write("node_modules/pkg/provider.json", "{}")
            .write("node_modules/pkg/x.capability.json", "{}");
        let files = f.read(Layout::Directory).unwrap();
        assert_eq!(files.provider, json!({"id": "demo"}));
        let got: Vec<(&str, &Value)> = files
            .definitions
            .iter()
            .map(|d| (d.file.as_str(), &d.value))
            .collect();
        assert_eq!(
            got,
            [
                ("capabilities/a.json", &json!({"n": 1})),
                ("capabilities/capability.json", &json!({"n": 3})),
                ("capabilities/coverage-guide/c.json", &json!({"n": 4})),
                ("capabilities/group/deep/b.json", &json!({"n": 2})),
                ("capabilities/x.capability.json", &json!({"n": 5})),
            ]
        );
    }

    #[test]
    fn empty_providers_are_valid() {
        let legacy = Fixture::provider();
        assert_eq!(legacy.read(Layout::Legacy).unwrap().definitions, []);
        let directory = Fixture::provider();
        directory.mkdir("capabilities");
        assert_eq!(directory.read(Layout::Directory).unwrap().definitions, []);
    }

    #[test]
    fn definitions_are_sorted_by_byte_order() {
        let f = Fixture::provider();
        let names = [
            "a/x.capability.json",
            "a.capability.json",
            "Z.capability.json",
            "a.b.capability.json",
            "a-b/x.capability.json",
            "é.capability.json",
        ];
        for name in names {
            f.write(name, "{}");
        }
        let expected = [
            "Z.capability.json",
            "a-b/x.capability.json",
            "a.b.capability.json",
            "a.capability.json",
            "a/x.capability.json",
            "é.capability.json",
        ];
        assert_eq!(f.files(Layout::Legacy), strings(&expected));
    }

    #[test]
    fn many_files_are_read_in_order() {
        let f = Fixture::provider();
        for i in 0..700 {
            f.write(
                &format!("capabilities/g{}/{i:04}.json", i % 7),
                format!("{i}"),
            );
        }
        let files = f.read(Layout::Directory).unwrap();
        assert_eq!(files.definitions.len(), 700);
        assert!(files.definitions.windows(2).all(|w| w[0].file < w[1].file));
        for d in &files.definitions {
            let stem = d.file.rsplit('/').next().unwrap().trim_end_matches(".json");
            assert_eq!(d.value, json!(stem.parse::<u64>().unwrap()));
        }
    }

    #[test]
    fn the_first_failing_file_in_sorted_order_is_reported() {
        let f = Fixture::provider();
        for i in 0..400 {
            f.write(&format!("{i:04}.capability.json"), "{}");
        }
        f.write("0350.capability.json", "{")
            .write("0120.capability.json", "\u{0}")
            .write("0121.capability.json", "[");
        for _ in 0..5 {
            assert_eq!(
                f.failure(Layout::Legacy),
                expect("0120.capability.json", "invalid_json")
            );
        }
        f.write("0120.capability.json", "{}")
            .write("0121.capability.json", "{}");
        assert_eq!(
            f.failure(Layout::Legacy),
            expect("0350.capability.json", "invalid_json")
        );
    }

    // Root -------------------------------------------------------------------------------------

    fn assert_root_error(error: &GraphError) {
        assert_eq!(error.code(), Code::ConfigInvalid);
        assert_eq!(error.phase(), Phase::Load);
        assert_eq!(
            error.to_json(),
            r#"{"code":"CG_CONFIG_INVALID","phase":"load","message":"Configuration is invalid","nextAction":"check_config","details":{"path":"providers[0].authority.rootDir","expected":"readable directory"}}"#
        );
    }

    #[test]
    fn missing_root_is_a_config_error() {
        let f = Fixture::new();
        let missing = f.path("missing");
        for layout in [Layout::Legacy, Layout::Directory] {
            let error = read_at(&missing, layout).unwrap_err();
            assert_root_error(&error);
            assert_no_absolute_path(&error, &f.root);
        }
    }

    #[test]
    fn root_that_is_a_file_is_a_config_error() {
        let f = Fixture::new();
        f.write("file", "{}");
        let error = read_at(&f.path("file"), Layout::Legacy).unwrap_err();
        assert_root_error(&error);
        assert_no_absolute_path(&error, &f.root);
    }

    #[cfg(unix)]
    #[test]
    fn root_behind_a_symlink_is_resolved_once() {
        let f = Fixture::provider();
        f.write("a.capability.json", "{}")
            .symlink(Path::new("a.capability.json"), "b.capability.json");
        let link = Fixture::new();
        link.symlink(&f.root, "root");
        let files = read_at(&link.path("root"), Layout::Legacy);
        let files: Vec<String> = files
            .unwrap()
            .definitions
            .into_iter()
            .map(|d| d.file)
            .collect();
        assert_eq!(files, strings(&["a.capability.json", "b.capability.json"]));
    }

    // Manifest ----------------------------------------------------------------------------------

    #[test]
    fn missing_manifest_is_required() {
        let f = Fixture::new();
        f.mkdir("capabilities");
        for layout in [Layout::Legacy, Layout::Directory] {
            assert_eq!(
                f.failure(layout),
                expect("provider.json", "provider_manifest_required")
            );
        }
    }

    #[test]
    fn manifest_that_is_not_a_file_is_unreadable() {
        let f = Fixture::new();
        f.mkdir("provider.json");
        assert_eq!(
            f.failure(Layout::Legacy),
            expect("provider.json", "file_unreadable")
        );
    }

    #[test]
    fn manifest_content_errors_name_the_manifest() {
        let f = Fixture::new();
        f.write("provider.json", "{");
        assert_eq!(
            f.failure(Layout::Legacy),
            expect("provider.json", "invalid_json")
        );
        f.write("provider.json", b"\xEF\xBB\xBF{\"bom\":true}");
        assert_eq!(
            f.read(Layout::Legacy).unwrap().provider,
            json!({"bom": true})
        );
    }

    #[cfg(unix)]
    #[test]
    fn unreadable_manifest_and_directory_are_reported() {
        use std::os::unix::fs::PermissionsExt;
        let f = Fixture::provider();
        f.write("locked/a.capability.json", "{}");
        let locked = f.path("locked");
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).unwrap();
        // Root ignores permission bits, so there is nothing to observe there.
        let observable = fs::read_dir(&locked).is_err();
        let result = observable.then(|| f.failure(Layout::Legacy));
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o755)).unwrap();
        if let Some(failure) = result {
            assert_eq!(failure, expect("locked", "directory_unreadable"));
            let manifest = f.path(MANIFEST);
            fs::set_permissions(&manifest, fs::Permissions::from_mode(0o000)).unwrap();
            let failure = f.failure(Layout::Legacy);
            fs::set_permissions(&manifest, fs::Permissions::from_mode(0o644)).unwrap();
            assert_eq!(failure, expect("provider.json", "file_unreadable"));
        }
    }

    // Layout violations ---------------------------------------------------------------------------

    #[test]
    fn nested_manifest_is_refused_outside_knowledge() {
        let f = Fixture::provider();
        f.mkdir("capabilities")
            .write("knowledge/provider.json", "{}")
            .write("knowledge/deep/provider.json", "{}")
            .write("sub/provider.json", "{}");
        for layout in [Layout::Legacy, Layout::Directory] {
            assert_eq!(
                f.failure(layout),
                expect("sub/provider.json", "nested_provider_manifest")
            );
        }
        let f = Fixture::provider();
        f.write("capabilities/provider.json", "{}");
        assert_eq!(
            f.failure(Layout::Directory),
            expect("capabilities/provider.json", "nested_provider_manifest")
        );
    }

    #[test]
    fn knowledge_may_hold_provider_manifests() {
        let f = Fixture::provider();
        f.write("capabilities/a.json", "{}")
            .write("knowledge/provider.json", "{}")
            .write("knowledge/x/provider.json", "{}");
        assert_eq!(f.files(Layout::Legacy), Vec::<String>::new());
        assert_eq!(
            f.files(Layout::Directory),
            strings(&["capabilities/a.json"])
        );
    }

    #[test]
    fn bare_capability_json_is_refused() {
        let f = Fixture::provider();
        f.write("sub/capability.json", "{}");
        assert_eq!(
            f.failure(Layout::Legacy),
            expect(
                "sub/capability.json",
                "use_directory_layout_or_capability_suffix"
            )
        );
        let f = Fixture::provider();
        f.write("capability.json", "{}").mkdir("capabilities");
        assert_eq!(
            f.failure(Layout::Directory),
            expect(
                "capability.json",
                "use_directory_layout_or_capability_suffix"
            )
        );
        let f = Fixture::provider();
        f.write("capabilities/capability.json", "{}");
        assert_eq!(
            f.failure(Layout::Legacy),
            expect(
                "capabilities/capability.json",
                "use_directory_layout_or_capability_suffix"
            )
        );
    }

    #[test]
    fn suffixed_files_outside_capabilities_mix_layouts() {
        let f = Fixture::provider();
        f.write("capabilities/a.json", "{}")
            .write("old/b.capability.json", "{}");
        assert_eq!(
            f.failure(Layout::Directory),
            expect("old/b.capability.json", "mixed_definition_layout")
        );
    }

    #[test]
    fn directory_layout_requires_a_real_capabilities_dir() {
        let f = Fixture::provider();
        assert_eq!(
            f.failure(Layout::Directory),
            expect("capabilities", "definition_directory_required")
        );
        f.write("capabilities", "{}");
        assert_eq!(
            f.failure(Layout::Directory),
            expect("capabilities", "definition_directory_required")
        );
    }

    #[cfg(unix)]
    #[test]
    fn capabilities_dir_behind_a_symlink_is_refused() {
        let f = Fixture::provider();
        f.write("real/a.json", "{}")
            .symlink(Path::new("real"), "capabilities");
        assert_eq!(
            f.failure(Layout::Directory),
            expect("capabilities", "definition_directory_required")
        );
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_inside_capabilities_are_refused() {
        let f = Fixture::provider();
        f.write("capabilities/a.json", "{}")
            .write("shared/b.json", "{}")
            .symlink(&f.path("shared/b.json"), "capabilities/group/b.json");
        assert_eq!(
            f.failure(Layout::Directory),
            expect(
                "capabilities/group/b.json",
                "definition_symlink_unsupported"
            )
        );
        let f = Fixture::provider();
        f.mkdir("capabilities/a")
            .symlink(Path::new("a"), "capabilities/linked-dir");
        assert_eq!(
            f.failure(Layout::Directory),
            expect("capabilities/linked-dir", "definition_symlink_unsupported")
        );
    }

    #[test]
    fn case_collisions_report_the_later_path() {
        let f = Fixture::provider();
        f.write("Foo.capability.json", "{}")
            .write("bar.capability.json", "{}")
            .write("foo.capability.json", "{}");
        assert_eq!(
            f.failure(Layout::Legacy),
            expect("foo.capability.json", "definition_case_collision")
        );
        let f = Fixture::provider();
        f.write("capabilities/A/x.json", "{}")
            .write("capabilities/a/x.json", "{}")
            .write("capabilities/a/y.json", "{}");
        assert_eq!(
            f.failure(Layout::Directory),
            expect("capabilities/a/x.json", "definition_case_collision")
        );
    }

    #[test]
    fn the_smallest_offending_path_is_reported() {
        let f = Fixture::provider();
        for dir in ["m", "c", "x", "b/z"] {
            f.write(&format!("{dir}/provider.json"), "{}");
        }
        f.write("d/capability.json", "{}");
        assert_eq!(
            f.failure(Layout::Legacy),
            expect("b/z/provider.json", "nested_provider_manifest")
        );
    }

    #[cfg(unix)]
    #[test]
    fn undecodable_names_are_refused_where_they_matter() {
        use std::os::unix::ffi::OsStrExt;
        let f = Fixture::provider();
        let name = OsStr::from_bytes(b"bad\xFF.capability.json");
        fs::write(f.root.join(name), "{}").unwrap();
        let (file, reason) = f.failure(Layout::Legacy);
        assert_eq!(reason, "invalid_file_name");
        assert_eq!(file, "bad\u{FFFD}.capability.json");

        let f = Fixture::provider();
        fs::write(f.root.join(OsStr::from_bytes(b"bad\xFF.md")), "").unwrap();
        assert_eq!(f.files(Layout::Legacy), Vec::<String>::new());
    }

    // Reading -----------------------------------------------------------------------------------

    #[cfg(unix)]
    #[test]
    fn legacy_symlinks_must_stay_inside_the_root() {
        let outside = Fixture::new();
        outside.write("secret.capability.json", r#"{"secret":true}"#);
        let f = Fixture::provider();
        f.write("shared/real.json", r#"{"linked":true}"#)
            .symlink(Path::new("shared/real.json"), "in.capability.json");
        let files = f.read(Layout::Legacy).unwrap();
        assert_eq!(files.definitions[0].file, "in.capability.json");
        assert_eq!(files.definitions[0].value, json!({"linked": true}));

        f.symlink(
            &outside.path("secret.capability.json"),
            "out.capability.json",
        );
        let error = f.error(Layout::Legacy);
        assert_no_absolute_path(&error, &outside.root);
        assert_eq!(
            f.failure(Layout::Legacy),
            expect("out.capability.json", "outside_root")
        );
    }

    #[cfg(unix)]
    #[test]
    fn legacy_symlinks_to_directories_are_not_followed() {
        let outside = Fixture::new();
        outside.write("y.capability.json", "{}");
        let f = Fixture::provider();
        f.symlink(&outside.root, "linked");
        assert_eq!(f.files(Layout::Legacy), Vec::<String>::new());

        f.mkdir("dir")
            .symlink(Path::new("dir"), "d.capability.json");
        assert_eq!(
            f.failure(Layout::Legacy),
            expect("d.capability.json", "not_regular_file")
        );
    }

    #[cfg(unix)]
    #[test]
    fn dangling_symlinks_are_unreadable() {
        let f = Fixture::provider();
        f.symlink(Path::new("nowhere.json"), "a.capability.json");
        assert_eq!(
            f.failure(Layout::Legacy),
            expect("a.capability.json", "file_unreadable")
        );
    }

    #[test]
    fn content_must_be_utf8_json_with_an_optional_bom() {
        let f = Fixture::provider();
        f.write("a.capability.json", b"\xEF\xBB\xBF{\"bom\":1}");
        assert_eq!(
            f.read(Layout::Legacy).unwrap().definitions[0].value,
            json!({"bom": 1})
        );
        f.write("a.capability.json", b"{\"x\":\"\xFF\xFE\"}");
        assert_eq!(
            f.failure(Layout::Legacy),
            expect("a.capability.json", "invalid_utf8")
        );
        f.write("a.capability.json", "{\"x\": secret-content}");
        assert_eq!(
            f.failure(Layout::Legacy),
            expect("a.capability.json", "invalid_json")
        );
        let error = f.error(Layout::Legacy);
        assert!(!error.to_json().contains("secret"));
        f.write("a.capability.json", b"\xEF\xBB\xBF\xEF\xBB\xBF{}");
        assert_eq!(
            f.failure(Layout::Legacy),
            expect("a.capability.json", "invalid_json")
        );
    }

    #[test]
    fn files_over_the_budget_are_refused() {
        let f = Fixture::provider();
        let mut exact = vec![b' '; RECORD_MAX_BYTES as usize];
        exact[0] = b'1';
        f.write("capabilities/a.json", &exact);
        assert_eq!(
            f.read(Layout::Directory).unwrap().definitions[0].value,
            json!(1)
        );
        exact.push(b' ');
        f.write("capabilities/a.json", &exact);
        let error = f.error(Layout::Directory);
        assert_eq!(
            error.to_json(),
            r#"{"code":"CG_DEFINITION_INVALID","phase":"load","message":"Provider definition is invalid","nextAction":"fix_input","details":{"providerId":"demo","file":"capabilities/a.json","reason":"file_too_large","maxBytes":262144}}"#
        );
    }

    /// Runs `read` on another thread so that a blocking open fails the test instead of hanging.
    #[cfg(unix)]
    fn failure_within_deadline(f: &Fixture, layout: Layout) -> GraphError {
        let root = f.root.clone();
        let (sender, receiver) = mpsc::channel();
        thread::spawn(move || {
            let _ = sender.send(read_at(&root, layout));
        });
        let result = receiver
            .recv_timeout(Duration::from_secs(10))
            .expect("reading blocked on a FIFO");
        let error = result.expect_err("expected a failure");
        assert_no_absolute_path(&error, &f.root);
        error
    }

    #[cfg(unix)]
    fn file_and_reason(error: &GraphError) -> (String, String) {
        let details = error.details().unwrap();
        let text = |key: &str| details[key].as_str().unwrap().to_owned();
        (text("file"), text("reason"))
    }

    #[cfg(unix)]
    #[test]
    fn fifos_fail_without_blocking() {
        let f = Fixture::provider();
        f.write("a.capability.json", "{}").fifo("x.capability.json");
        let error = failure_within_deadline(&f, Layout::Legacy);
        assert_eq!(
            file_and_reason(&error),
            expect("x.capability.json", "not_regular_file")
        );

        let f = Fixture::provider();
        f.fifo("capabilities/x.json");
        let error = failure_within_deadline(&f, Layout::Directory);
        assert_eq!(
            file_and_reason(&error),
            expect("capabilities/x.json", "not_regular_file")
        );

        let f = Fixture::new();
        f.fifo("provider.json");
        let error = failure_within_deadline(&f, Layout::Legacy);
        assert_eq!(
            file_and_reason(&error),
            expect("provider.json", "file_unreadable")
        );

        let f = Fixture::provider();
        f.fifo("pipe")
            .symlink(Path::new("pipe"), "p.capability.json");
        let error = failure_within_deadline(&f, Layout::Legacy);
        assert_eq!(
            file_and_reason(&error),
            expect("p.capability.json", "not_regular_file")
        );
    }

    #[cfg(unix)]
    #[test]
    fn regular_entry_replaced_by_a_fifo_is_refused_without_blocking() {
        let f = Fixture::provider();
        f.fifo("x.capability.json");
        let (sender, receiver) = mpsc::channel();
        let root = f.root.clone();
        thread::spawn(move || {
            let root = RootDir::open(&root).unwrap();
            let _ = sender.send(Reader::new(&root).read("x.capability.json", EntryType::Regular));
        });
        let result = receiver.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(result, Err(Reason::NotRegularFile));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn opening_a_fifo_does_not_wait_for_a_writer() {
        let f = Fixture::new();
        f.fifo("pipe");
        let (sender, receiver) = mpsc::channel();
        let root = f.root.clone();
        thread::spawn(move || {
            let outcome = RootDir::open(&root).unwrap().open_file("pipe").map(|_| ());
            let _ = sender.send(outcome);
        });
        let outcome = receiver.recv_timeout(Duration::from_secs(10));
        assert_eq!(outcome.unwrap(), Err(Refusal::NotRegular));
    }

    /// procfs reports a size of 0 for files that do have content: the same mismatch a file
    /// written to during the read produces.
    #[cfg(target_os = "linux")]
    #[test]
    fn size_mismatch_while_reading_is_detected() {
        let file = File::open("/proc/self/stat").unwrap();
        let mut bytes = Vec::new();
        assert_eq!(
            read_whole(&file, &mut bytes),
            Err(Reason::FileChangedWhileReading)
        );
    }

    #[test]
    fn case_folding_borrows_lowercase_ascii() {
        assert!(matches!(fold_case("a/b.json"), Cow::Borrowed(_)));
        assert_eq!(fold_case("A/É.json"), "a/é.json");
    }
}
