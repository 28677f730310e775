//! Knowledge documents on disk: where a document lives (never outside its trusted root), and
//! reading its bytes — whole, or one page — strictly and stably (SPEC §7, §14 D8–D9).

pub mod body;
pub mod host;
pub mod roots;
pub mod stream;

use crate::definitions::model::{DocumentRef, Locator};
use crate::error::{Code, GraphError, NextAction, Result};
use crate::snapshot::{BoundRoot, ProviderSnapshot};
use std::fs;
use std::path::PathBuf;

/// How a document's location is reported: its path, `root:<alias>/<path>`, or its URL.
pub fn source(doc: &DocumentRef) -> String {
    match &doc.locator {
        Locator::RelativeFile {
            path, root: None, ..
        } => path.clone(),
        Locator::RelativeFile {
            path,
            root: Some(alias),
            ..
        } => format!("root:{alias}/{path}"),
        Locator::Http { url, .. } => url.clone(),
    }
}

/// `text/markdown` for `.md` and `.mdx`, plain text otherwise.
pub fn content_type(doc: &DocumentRef) -> &'static str {
    let name = match &doc.locator {
        Locator::RelativeFile { path, .. } => path.rsplit('/').next().unwrap_or(path),
        Locator::Http { url, .. } => url.as_str(),
    };
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("md" | "mdx") => "text/markdown; charset=utf-8",
        _ => "text/plain; charset=utf-8",
    }
}

fn unreadable_retry() -> GraphError {
    GraphError::new(Code::DocumentUnreadable).with_action(NextAction::Retry)
}

/// A bound alias root must still be what it was bound to: same real path, same package.
fn check_root(root: &BoundRoot) -> Result<()> {
    let same_dir = fs::canonicalize(&root.dir).is_ok_and(|d| d == root.dir);
    let same_identity = match &root.package {
        None => true,
        Some(name) => roots::package_identity(&root.dir, name).as_ref() == Some(&root.identity),
    };
    if same_dir && same_identity {
        Ok(())
    } else {
        Err(unreadable_retry().detail("reason", "root_changed"))
    }
}

/// The real path of a relative-file document, inside its root. URL documents are references
/// only (the engine never fetches).
pub fn locate(s: &ProviderSnapshot, doc: &DocumentRef) -> Result<PathBuf> {
    let (path, alias) = match &doc.locator {
        Locator::RelativeFile { path, root, .. } => (path, root),
        Locator::Http { .. } => return Err(GraphError::new(Code::DocumentReferenceOnly)),
    };
    let root = match alias {
        None => s
            .roots
            .default_root
            .clone()
            .ok_or_else(|| GraphError::new(Code::DocumentRootRequired))?,
        Some(alias) => {
            let bound = s
                .roots
                .aliases
                .iter()
                .find(|(a, _)| a == alias)
                .map(|(_, r)| r)
                .ok_or_else(|| GraphError::new(Code::Internal))?;
            check_root(bound)?;
            bound.dir.clone()
        }
    };
    let mut joined = root.clone();
    joined.extend(path.split('/'));
    let real = match fs::canonicalize(&joined) {
        Ok(real) => real,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            return Err(GraphError::new(Code::DocumentNotFound))
        }
        Err(_) => return Err(unreadable_retry()),
    };
    // Symlinks and junctions may point anywhere; only what stays inside the root is served.
    if !real.starts_with(&root) {
        return Err(GraphError::new(Code::DocumentAccessDenied));
    }
    Ok(real)
}
