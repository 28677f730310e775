//! Document bytes: a whole body up to a budget, or one page of any size of document. Files are
//! opened beneath their root's handle without blocking (a FIFO never hangs a read), must stay
//! the same regular file for the whole read, and must be strict UTF-8; BOM and CRLF are kept as
//! they are.

use super::Located;
use crate::error::{input_invalid as invalid, Code, GraphError, NextAction, Result};
use crate::fsx::Stamp;
use crate::snapshot::revision::{content_id, content_id_of};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Bytes hashed per step when a whole document is scanned.
const SCAN_CHUNK: usize = 256 * 1024;
/// The most a read reserves before it has read anything; beyond it the buffer grows with the
/// bytes actually read.
const FIRST_BUFFER: u64 = 64 * 1024;

fn too_large(max_bytes: u64) -> GraphError {
    GraphError::new(Code::DocumentTooLarge)
        .detail("budget", "read.maxResponseBytes")
        .detail("limit", max_bytes)
}

fn changed() -> GraphError {
    GraphError::new(Code::DocumentUnreadable)
        .with_action(NextAction::Retry)
        .detail("reason", "changed_while_reading")
}

/// A page read its caller aborted: it settles at once, whatever the reader still does.
pub fn page_read_aborted() -> GraphError {
    GraphError::new(Code::DocumentUnreadable)
        .with_phase(crate::error::Phase::Document)
        .with_action(NextAction::Retry)
        .detail("reason", "aborted")
}

/// A read that needs the long-read lane while [`crate::lane::LANE_QUEUE`] reads already wait
/// for it: refused at once, to be tried again.
pub fn long_reads_busy() -> GraphError {
    GraphError::new(Code::DocumentUnreadable)
        .with_phase(crate::error::Phase::Document)
        .with_action(NextAction::Retry)
        .detail("reason", "long_reads_busy")
}

/// Documents up to this size are scanned wherever the read runs; a larger one is scanned on
/// the long-read lane (`crate::lane`), never on the pool every other call shares.
pub const LONG_READ_BYTES: u64 = 8 * 1024 * 1024;

/// How one read may run: whether its caller's signal aborted it (a local file's scan stops at
/// its next chunk instead of hashing the rest of the document for nobody), and whether it can
/// hand itself over to the long-read lane. A read that can (the body reads the binding runs on
/// the pool) and would scan more than [`LONG_READ_BYTES`] stops before it starts and asks for
/// the lane (see [`ReadControl::wants_lane`]); every other read (on the lane, or one with no lane
/// to go to: the default) scans where it runs.
#[derive(Clone, Debug, Default)]
pub struct ReadControl {
    cancel: Option<Arc<AtomicBool>>,
    can_hand_off: bool,
    wants_lane: Arc<AtomicBool>,
}

impl ReadControl {
    /// A body read's control: `on_lane` once it runs on the lane, else it may hand itself over.
    pub fn new(cancel: Option<Arc<AtomicBool>>, on_lane: bool) -> ReadControl {
        ReadControl {
            cancel,
            can_hand_off: !on_lane,
            wants_lane: Arc::default(),
        }
    }

    fn check(&self) -> Result<()> {
        match &self.cancel {
            Some(flag) if flag.load(Ordering::Relaxed) => Err(page_read_aborted()),
            _ => Ok(()),
        }
    }

    /// Whether work of `bytes` may run here; if not, the read is marked for the lane and stops
    /// (its answer is discarded, so the error it stops with is never seen).
    fn may_scan(&self, bytes: u64) -> Result<()> {
        if !self.can_hand_off || bytes <= LONG_READ_BYTES {
            return Ok(());
        }
        self.wants_lane.store(true, Ordering::Relaxed);
        Err(GraphError::new(Code::Internal))
    }

    /// Whether the read stopped to run again on the long-read lane.
    pub fn wants_lane(&self) -> bool {
        self.wants_lane.load(Ordering::Relaxed)
    }
}

pub(super) fn not_utf8() -> GraphError {
    GraphError::new(Code::DocumentUnreadable).detail("reason", "invalid_utf8")
}

/// Opens a located document beneath its root, with its stamp as of the open.
fn open(at: &Located) -> Result<(File, Stamp)> {
    let file = at.open()?;
    let stamp = stamp_of(&file)?;
    Ok((file, stamp))
}

fn stamp_of(file: &File) -> Result<Stamp> {
    let meta = file.metadata().map_err(|_| changed())?;
    if !meta.is_file() {
        return Err(
            GraphError::new(Code::DocumentAccessDenied).detail("reason", "not_regular_file")
        );
    }
    Ok(Stamp::of(&meta))
}

/// A whole document body, as text.
pub struct Whole {
    pub text: String,
    pub content_id: String,
}

/// Reads a whole document of at most `max_bytes` (else `CG_DOCUMENT_TOO_LARGE`).
pub fn read_whole(at: &Located, max_bytes: u64, control: &ReadControl) -> Result<Whole> {
    let (file, before) = open(at)?;
    if before.len > max_bytes {
        return Err(too_large(max_bytes));
    }
    control.may_scan(before.len)?;
    // Memory grows with the bytes read, never with the size the file reports: a file may lie.
    let mut bytes = Vec::with_capacity(before.len.min(FIRST_BUFFER) as usize);
    (&file)
        .take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|_| changed())?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large(max_bytes));
    }
    if stamp_of(&file)? != before || bytes.len() as u64 != before.len {
        return Err(changed());
    }
    let content_id = content_id(&bytes);
    let text = String::from_utf8(bytes).map_err(|_| not_utf8())?;
    at.content_ids().insert(before, &content_id);
    Ok(Whole { text, content_id })
}

/// What a page cursor remembers of its document: the whole document's content ID (hashed once,
/// on the first page) and the file's stamp digest.
#[derive(Clone, Debug, PartialEq)]
pub struct Known {
    pub content_id: String,
    pub stamp: String,
}

pub struct Page {
    pub text: String,
    pub start: u64,
    pub end: u64,
    pub total: u64,
    pub known: Known,
    pub page_content_id: String,
}

/// Hashes and validates a whole document without holding it in memory.
fn scan(file: &mut File, cancel: &ReadControl) -> Result<String> {
    crate::opcount::tick(crate::opcount::Op::DocumentScan);
    let mut hasher = blake3::Hasher::new();
    let mut buf = vec![0u8; SCAN_CHUNK];
    // Bytes of a code point split across two chunks.
    let mut carry: Vec<u8> = Vec::with_capacity(4);
    loop {
        cancel.check()?;
        let n = file.read(&mut buf).map_err(|_| changed())?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        let mut chunk = std::mem::take(&mut carry);
        chunk.extend_from_slice(&buf[..n]);
        match std::str::from_utf8(&chunk) {
            Ok(_) => {}
            Err(e) if e.error_len().is_none() => carry = chunk[e.valid_up_to()..].to_vec(),
            Err(_) => return Err(not_utf8()),
        }
    }
    if !carry.is_empty() {
        return Err(not_utf8());
    }
    Ok(content_id_of(hasher.finalize()))
}

fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

/// Where a page that does not reach the end should stop: after the last blank line or code
/// fence line that ends in the second half of the page, else at the code-point boundary `cut`.
fn preferred_end(window: &[u8], cut: usize) -> usize {
    let half = cut / 2;
    let mut best = None;
    let mut line_start = 0;
    for (i, &b) in window[..cut].iter().enumerate() {
        if b != b'\n' {
            continue;
        }
        let line = &window[line_start..i];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let end = i + 1;
        if end >= half && (line.is_empty() || line.starts_with(b"```") || line.starts_with(b"~~~"))
        {
            best = Some(end);
        }
        line_start = end;
    }
    best.unwrap_or(cut)
}

/// Reads the page starting at byte `start`, at most `max_bytes` long. Without `known` (a first
/// page) the whole document is scanned once for its content ID; with it, only the page's own
/// bytes are read, after checking the file is still the one the cursor was served from.
pub fn read_page(at: &Located, start: u64, max_bytes: u64, known: Option<&Known>) -> Result<Page> {
    read_page_until(at, start, max_bytes, known, &ReadControl::default())
}

fn document_changed() -> GraphError {
    GraphError::new(Code::RevisionMismatch).detail("reason", "document_changed")
}

/// The content ID of the open `file` (stamped `before`): remembered beneath its root, or
/// scanned once, on the long-read lane when the document is large, and remembered.
fn content_id_for(
    at: &Located,
    file: &mut File,
    before: &Stamp,
    control: &ReadControl,
) -> Result<String> {
    if let Some(id) = at.content_ids().get(before) {
        return Ok(id);
    }
    control.may_scan(before.len)?;
    let id = scan(file, control)?;
    if stamp_of(file)? != *before {
        return Err(changed());
    }
    at.content_ids().insert(*before, &id);
    Ok(id)
}

/// [`read_page`] that stops between chunks of its scan once `control` is cancelled. The
/// document's content ID is known once per file stamp, so a page read costs its page: a first
/// page, a page at `startOffset` and a cursor's page alike. A cursor's content ID is compared
/// with the document's own, never echoed unchecked.
pub fn read_page_until(
    at: &Located,
    start: u64,
    max_bytes: u64,
    known: Option<&Known>,
    control: &ReadControl,
) -> Result<Page> {
    control.check()?;
    let (mut file, before) = open(at)?;
    if known.is_some_and(|k| k.stamp != before.digest()) {
        return Err(document_changed());
    }
    let content_id = content_id_for(at, &mut file, &before, control)?;
    if known.is_some_and(|k| k.content_id != content_id) {
        return Err(document_changed());
    }
    let known = Known {
        content_id,
        stamp: before.digest(),
    };
    let total = before.len;
    if start > total {
        return Err(invalid("startOffset", "offset within the document"));
    }
    let want = max_bytes.min(total - start);
    // One byte past the window shows whether the cut splits a code point.
    let mut window = Vec::with_capacity((want + 1).min(FIRST_BUFFER) as usize);
    file.seek(SeekFrom::Start(start)).map_err(|_| changed())?;
    (&file)
        .take(want + 1)
        .read_to_end(&mut window)
        .map_err(|_| changed())?;
    let cut = cut_page(&window, want as usize, start + want == total)?;
    window.truncate(cut);
    if stamp_of(&file)? != before {
        return Err(changed());
    }
    page_of(window, start, total, known)
}

/// Identifies a whole document without holding it: its content ID and file stamp, and its size.
pub fn identify(at: &Located) -> Result<(Known, u64)> {
    let (mut file, before) = open(at)?;
    let content_id = content_id_for(at, &mut file, &before, &ReadControl::default())?;
    let known = Known {
        content_id,
        stamp: before.digest(),
    };
    Ok((known, before.len))
}

/// Exactly the bytes `start..end` of a document identified earlier (`None` past its end); the
/// file must still be the one `known` describes.
pub fn read_range(at: &Located, start: u64, end: u64, known: &Known) -> Result<Option<Vec<u8>>> {
    let (mut file, before) = open(at)?;
    if known.stamp != before.digest() {
        return Err(document_changed());
    }
    if end > before.len || start > end {
        return Ok(None);
    }
    let mut bytes = Vec::with_capacity((end - start).min(FIRST_BUFFER) as usize);
    file.seek(SeekFrom::Start(start)).map_err(|_| changed())?;
    (&file)
        .take(end - start)
        .read_to_end(&mut bytes)
        .map_err(|_| changed())?;
    if stamp_of(&file)? != before {
        return Err(changed());
    }
    Ok(Some(bytes))
}

/// Where a page cut from `window` (the page's bytes plus one) ends: the whole window on the
/// last page, else a code-point boundary, moved back to a blank or fence line when one ends in
/// the second half of the page.
fn cut_page(window: &[u8], want: usize, last_page: bool) -> Result<usize> {
    if window.first().is_some_and(|&b| is_continuation(b)) {
        return Err(invalid(
            "startOffset",
            "offset on a UTF-8 character boundary",
        ));
    }
    if last_page {
        return Ok(want);
    }
    let mut cut = want;
    while cut > 0 && window.get(cut).is_some_and(|&b| is_continuation(b)) {
        cut -= 1;
    }
    if cut == 0 {
        return Err(
            GraphError::new(Code::BudgetExceeded).detail("reason", "page_smaller_than_character")
        );
    }
    Ok(preferred_end(window, cut))
}

fn page_of(bytes: Vec<u8>, start: u64, total: u64, known: Known) -> Result<Page> {
    let end = start + bytes.len() as u64;
    let page_content_id = content_id(&bytes);
    let text = String::from_utf8(bytes).map_err(|_| not_utf8())?;
    Ok(Page {
        text,
        start,
        end,
        total,
        known,
        page_content_id,
    })
}

/// A page of a body a host reader delivered whole. Its cursor binds the content ID only.
pub fn page_in(bytes: &[u8], start: u64, max_bytes: u64, known: Option<&Known>) -> Result<Page> {
    let content_id = content_id(bytes);
    check_known(known, &content_id)?;
    std::str::from_utf8(bytes).map_err(|_| not_utf8())?;
    let total = bytes.len() as u64;
    let from = start.min(total) as usize;
    let window = &bytes[from..(start + max_bytes + 1).min(total) as usize];
    page_window(window, start, total, content_id, max_bytes)
}

/// A host body's content ID against the one a page cursor was issued for.
pub fn check_known(known: Option<&Known>, content_id: &str) -> Result<()> {
    if known.is_some_and(|k| k.content_id != content_id) {
        return Err(document_changed());
    }
    Ok(())
}

/// A page of a host body of `total` bytes (valid UTF-8, identified by `content_id`) from the
/// bytes at `start`: `window` holds them, up to `max_bytes + 1`.
pub fn page_window(
    window: &[u8],
    start: u64,
    total: u64,
    content_id: String,
    max_bytes: u64,
) -> Result<Page> {
    if start > total {
        return Err(invalid("startOffset", "offset within the document"));
    }
    let want = max_bytes.min(total - start);
    let window = &window[..(want + 1).min(window.len() as u64) as usize];
    let cut = cut_page(window, want as usize, start + want == total)?;
    let known = Known {
        content_id,
        stamp: String::new(),
    };
    page_of(window[..cut].to_vec(), start, total, known)
}

/// Checks a body a host reader delivered for a whole read.
pub fn whole_in(bytes: Vec<u8>, max_bytes: u64) -> Result<Whole> {
    if bytes.len() as u64 > max_bytes {
        return Err(too_large(max_bytes));
    }
    let content_id = content_id(&bytes);
    let text = String::from_utf8(bytes).map_err(|_| not_utf8())?;
    Ok(Whole { text, content_id })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fsx::beneath::RootDir;
    use std::fs;
    use std::io::Write;
    use std::path::{Path, PathBuf};
    use std::sync::Arc;

    fn dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("cg-body-{}-{name}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn at(dir: &Path, rel: &str) -> Located {
        Located::new(Arc::new(RootDir::open(dir).unwrap()), rel)
    }

    /// `doc.md` in a fresh root, as a document and as a path to rewrite it by.
    fn temp(name: &str, bytes: &[u8]) -> (Located, PathBuf) {
        let dir = dir(name);
        let path = dir.join("doc.md");
        fs::File::create(&path).unwrap().write_all(bytes).unwrap();
        (at(&dir, "doc.md"), path)
    }

    #[test]
    fn pages_concatenate_to_the_file_on_character_boundaries() {
        let mut text = String::from("\u{feff}# 标题\r\n\r\n");
        for i in 0..2000 {
            text.push_str(&format!("行 {i} 🙂 ünïcödé\n"));
            if i % 37 == 0 {
                text.push_str("\n```\ncode\n```\n");
            }
        }
        let (doc, _) = temp("pages", text.as_bytes());
        let first = read_page(&doc, 0, 1000, None).unwrap();
        let mut out = first.text.clone();
        let mut next = first.end;
        let known = first.known.clone();
        assert_eq!(known.content_id, content_id(text.as_bytes()));
        while next < first.total {
            let page = read_page(&doc, next, 1000, Some(&known)).unwrap();
            assert!(page.end > page.start && page.end - page.start <= 1000);
            out.push_str(&page.text);
            next = page.end;
        }
        assert_eq!(out, text);
        let whole = read_whole(&doc, 10_000_000, &ReadControl::default()).unwrap();
        assert_eq!(whole.text, text);
        assert_eq!(whole.content_id, known.content_id);
    }

    #[test]
    fn a_document_is_hashed_once_per_stamp_and_a_cursor_content_id_is_checked() {
        use crate::opcount::{count, reset, Op};
        let text = "line of text\n\n".repeat(4096);
        let (doc, path) = temp("once", text.as_bytes());
        reset();
        let first = read_page(&doc, 0, 1000, None).unwrap();
        // Pages at an offset, with or without the first page's cursor, read only themselves.
        let later = read_page(&doc, 20_000, 1000, None).unwrap();
        let next = read_page(&doc, first.end, 1000, Some(&first.known)).unwrap();
        assert_eq!(count(Op::DocumentScan), 1);
        assert_eq!((&later.known, &next.known), (&first.known, &first.known));
        // A content ID the document does not have is refused, whatever the stamp says.
        let forged = Known {
            content_id: "c:forged".into(),
            stamp: first.known.stamp.clone(),
        };
        let e = read_page(&doc, first.end, 1000, Some(&forged))
            .err()
            .unwrap();
        assert_eq!(e.code(), Code::RevisionMismatch);
        // Elsewhere (another process, another snapshot's root) the ID is computed once again.
        let fresh = at(path.parent().unwrap(), "doc.md");
        let again = read_page(&fresh, first.end, 1000, Some(&first.known)).unwrap();
        assert_eq!(again.text, next.text);
        assert_eq!(count(Op::DocumentScan), 2);
    }

    #[cfg(unix)]
    #[test]
    fn a_same_size_rewrite_with_its_modification_time_restored_is_a_changed_document() {
        let (doc, path) = temp("touch", b"first version\n\nof the text\n");
        let first = read_page(&doc, 0, 16, None).unwrap();
        let mtime = fs::metadata(&path).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        fs::write(&path, b"FIRST VERSION\n\nOF THE TEXT\n").unwrap();
        fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
        assert_eq!(fs::metadata(&path).unwrap().modified().unwrap(), mtime);
        let e = read_page(&doc, first.end, 16, Some(&first.known))
            .err()
            .unwrap();
        assert_eq!(e.code(), Code::RevisionMismatch);
    }

    #[test]
    fn off_the_lane_a_large_document_asks_for_the_lane_before_reading() {
        let dir = dir("lane");
        let path = dir.join("big.md");
        let file = fs::File::create(&path).unwrap();
        file.set_len(LONG_READ_BYTES + 1).unwrap();
        let doc = at(&dir, "big.md");
        let pool = ReadControl::new(None, false);
        assert!(read_page_until(&doc, 0, 10, None, &pool).is_err());
        assert!(pool.wants_lane());
        let whole = ReadControl::new(None, false);
        assert!(read_whole(&doc, LONG_READ_BYTES * 2, &whole).is_err());
        assert!(whole.wants_lane());
        // A read with no lane to go to (a knowledge retriever's access) reads where it runs.
        let nowhere = ReadControl::default();
        assert!(read_whole(&doc, LONG_READ_BYTES * 2, &nowhere).is_ok());
        assert!(!nowhere.wants_lane());
        let doc = at(&dir, "big.md");
        let lane = ReadControl::new(None, true);
        let page = read_page_until(&doc, 0, 10, None, &lane).unwrap();
        assert_eq!(page.text, "\0".repeat(10));
        assert!(!lane.wants_lane());
        // Known from then on, the document's pages are read wherever the call runs.
        let pool = ReadControl::new(None, false);
        assert!(read_page_until(&doc, 10, 10, None, &pool).is_ok());
        assert!(!pool.wants_lane());
    }

    #[test]
    fn a_cancelled_page_read_stops_with_the_aborted_error() {
        let text = "ünïcödé line\n".repeat(3 * SCAN_CHUNK / 10);
        let (doc, _) = temp("cancel", text.as_bytes());
        let flag = Arc::new(AtomicBool::new(false));
        let cancel = ReadControl::new(Some(flag.clone()), true);
        let page = read_page_until(&doc, 0, 100, None, &cancel).unwrap();
        assert_eq!(page.text, read_page(&doc, 0, 100, None).unwrap().text);
        flag.store(true, Ordering::Relaxed);
        for known in [None, Some(&page.known)] {
            let e = read_page_until(&doc, 0, 100, known, &cancel).err().unwrap();
            assert_eq!(e.to_json_value(), page_read_aborted().to_json_value());
        }
        // The scan itself looks at the flag before each chunk it hashes.
        let (mut file, _) = open(&doc).unwrap();
        let e = scan(&mut file, &cancel).unwrap_err();
        assert_eq!(
            e.details().and_then(|d| d.get("reason")?.as_str()),
            Some("aborted")
        );
        assert!(scan(&mut file, &ReadControl::default()).is_ok());
    }

    #[test]
    fn bad_offsets_and_tiny_pages_are_rejected() {
        let (doc, _) = temp("offsets", "é€🙂".as_bytes());
        assert_eq!(
            read_page(&doc, 1, 10, None).err().unwrap().code(),
            Code::InputInvalid
        );
        assert_eq!(
            read_page(&doc, 99, 10, None).err().unwrap().code(),
            Code::InputInvalid
        );
        assert_eq!(
            read_page(&doc, 2, 2, None).err().unwrap().code(),
            Code::BudgetExceeded
        );
        let all = read_page(&doc, 0, 100, None).unwrap();
        assert_eq!(all.text, "é€🙂");
        assert_eq!(
            read_whole(&doc, 3, &ReadControl::default())
                .err()
                .unwrap()
                .code(),
            Code::DocumentTooLarge
        );
    }

    #[test]
    fn invalid_utf8_and_changed_files_are_unreadable() {
        let (doc, _) = temp("utf8", b"ok \xff bad");
        assert_eq!(
            read_whole(&doc, 100, &ReadControl::default())
                .err()
                .unwrap()
                .code(),
            Code::DocumentUnreadable
        );
        assert_eq!(
            read_page(&doc, 0, 100, None).err().unwrap().code(),
            Code::DocumentUnreadable
        );
        let (doc, path) = temp("changed", b"one\n\ntwo\n\nthree");
        let first = read_page(&doc, 0, 6, None).unwrap();
        fs::File::create(&path)
            .unwrap()
            .write_all(b"ONE\n\ntwo\n\nthree!")
            .unwrap();
        let e = read_page(&doc, first.end, 6, Some(&first.known))
            .err()
            .unwrap();
        assert_eq!(e.code(), Code::RevisionMismatch);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn directories_and_fifos_are_denied_without_blocking() {
        let dir = dir("fifo");
        fs::create_dir_all(dir.join("sub")).unwrap();
        assert_eq!(
            read_whole(&at(&dir, "sub"), 10, &ReadControl::default())
                .err()
                .unwrap()
                .code(),
            Code::DocumentAccessDenied
        );
        let fifo = dir.join("pipe.md");
        let _ = fs::remove_file(&fifo);
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert_eq!(
            read_whole(&at(&dir, "pipe.md"), 10, &ReadControl::default())
                .err()
                .unwrap()
                .code(),
            Code::DocumentAccessDenied
        );
        assert_eq!(
            read_page(&at(&dir, "pipe.md"), 0, 10, None)
                .err()
                .unwrap()
                .code(),
            Code::DocumentAccessDenied
        );
    }
}
