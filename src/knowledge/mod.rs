//! Knowledge documents on disk: where a document lives (never outside its trusted root), and
//! reading its bytes — whole, or one page — strictly and stably (SPEC §7, §14 D8–D9).

pub mod body;
pub mod host;
pub mod roots;
pub mod stream;

use crate::definitions::model::{DocumentRef, Locator};
use crate::error::{Code, GraphError, NextAction, Result};
use crate::fsx::beneath::{Refusal, RootDir};
use crate::snapshot::{BoundRoot, ProviderSnapshot};
use std::fs::{self, File};
use std::sync::Arc;

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

/// A bound alias root must still be what it was bound to: same real path, same package. Reads
/// go through the handle whatever this says; it tells a reinstalled package from the one bound.
fn check_root(root: &BoundRoot) -> Result<()> {
    let dir = root.dir();
    let same_dir = fs::canonicalize(dir).is_ok_and(|d| d == dir);
    let same_identity = match &root.package {
        None => true,
        Some(name) => roots::package_identity(dir, name).as_ref() == Some(&root.identity),
    };
    if same_dir && same_identity {
        Ok(())
    } else {
        Err(unreadable_retry().detail("reason", "root_changed"))
    }
}

/// A relative-file document: the root handle it lies beneath and its path there. Every read
/// opens it anew through the handle, so what a cursor or a retriever reads later is checked
/// the same way as the first read.
#[derive(Clone, Debug)]
pub struct Located {
    root: Arc<RootDir>,
    rel: String,
}

impl Located {
    pub fn new(root: Arc<RootDir>, rel: &str) -> Located {
        Located {
            root,
            rel: rel.to_owned(),
        }
    }

    /// Opens the document beneath its root: a regular file inside it, or a document error.
    pub fn open(&self) -> Result<File> {
        self.root
            .open_file(&self.rel)
            .map_err(|refusal| match refusal {
                Refusal::NotFound => GraphError::new(Code::DocumentNotFound),
                // Symlinks may point anywhere; only what stays inside the root is served.
                Refusal::Outside => GraphError::new(Code::DocumentAccessDenied),
                Refusal::NotRegular => {
                    GraphError::new(Code::DocumentAccessDenied).detail("reason", "not_regular_file")
                }
                Refusal::Unreadable => unreadable_retry(),
            })
    }
}

/// Where a relative-file document lies. URL documents are references only (the engine never
/// fetches).
pub fn locate(s: &ProviderSnapshot, doc: &DocumentRef) -> Result<Located> {
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
            bound.handle.clone()
        }
    };
    Ok(Located::new(root, path))
}
