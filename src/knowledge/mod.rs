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
use std::cell::RefCell;
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
/// go through the handle whatever this says; it tells a reinstalled package from the one bound,
/// so the package's `package.json` is read where the package is installed now (a reinstall may
/// have put a new directory there).
fn still_bound(root: &BoundRoot) -> bool {
    crate::opcount::tick(crate::opcount::Op::RootCheck);
    let dir = root.dir();
    let same_dir = fs::canonicalize(dir).is_ok_and(|d| d == dir);
    same_dir
        && match &root.package {
            None => true,
            Some(name) => roots::package_identity(dir, name).as_ref() == Some(&root.identity),
        }
}

/// The bound alias roots one call has checked, and how each check came out: however many of a
/// root's documents a call reads, the root is checked once, and every read of the call sees the
/// same outcome.
#[derive(Default)]
pub struct RootChecks {
    done: RefCell<Vec<(Arc<RootDir>, bool)>>,
}

impl RootChecks {
    fn check(&self, root: &BoundRoot) -> Result<()> {
        let known = self
            .done
            .borrow()
            .iter()
            .find(|(handle, _)| Arc::ptr_eq(handle, &root.handle))
            .map(|&(_, same)| same);
        let same = known.unwrap_or_else(|| {
            let same = still_bound(root);
            self.done.borrow_mut().push((root.handle.clone(), same));
            same
        });
        if same {
            Ok(())
        } else {
            Err(unreadable_retry().detail("reason", "root_changed"))
        }
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

    /// The content IDs already known of files beneath the document's root.
    pub fn content_ids(&self) -> &crate::fsx::ContentIds {
        &self.root.content_ids
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
                // A loop, a name too long or missing permissions stay until the tree changes;
                // running out of descriptors or memory passes.
                Refusal::Unreadable => GraphError::new(Code::DocumentUnreadable),
                Refusal::Transient => unreadable_retry(),
            })
    }
}

/// Where a relative-file document lies. URL documents are references only (the engine never
/// fetches). An alias root is checked once per call (`checks`).
pub fn locate(s: &ProviderSnapshot, doc: &DocumentRef, checks: &RootChecks) -> Result<Located> {
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
            checks.check(bound)?;
            bound.handle.clone()
        }
    };
    Ok(Located::new(root, path))
}

#[cfg(test)]
mod tests {
    use crate::engine::Engine;
    use crate::knowledge::body::ReadControl;
    use crate::opcount::{count, reset, Op};
    use serde_json::{json, Value};
    use std::fs;

    /// A provider whose three documents lie in an installed package, and the package's
    /// `package.json`.
    fn open_with_package(dir: &std::path::Path) -> (Engine, std::path::PathBuf) {
        let package = dir.join("node_modules").join("lib");
        fs::create_dir_all(&package).unwrap();
        let manifest = package.join("package.json");
        fs::write(&manifest, r#"{"name":"lib","version":"1.0.0"}"#).unwrap();
        let knowledge: Vec<Value> = (1..=3)
            .map(|i| {
                fs::write(package.join(format!("d{i}.md")), format!("# {i}\n")).unwrap();
                json!({ "kind": "document", "knowledgeId": format!("D-{i}"), "role": "guide",
                        "locator": { "type": "relative-file", "path": format!("d{i}.md"), "root": "pkg" } })
            })
            .collect();
        let config = json!({ "providers": [{
            "definition": { "providerId": "acme", "name": "A", "version": "1", "capabilities": [
                { "capabilityId": "x", "name": "X", "description": "D.", "whenToUse": "W.", "knowledge": knowledge },
            ] },
            "knowledgeRoots": { "pkg": { "kind": "package", "packageName": "lib", "resolveFrom": dir } },
        }] });
        match Engine::open(&config.to_string(), None) {
            Ok(engine) => (engine, manifest),
            Err(e) => panic!("open failed: {}", e.to_json()),
        }
    }

    /// Each slot of a `readDocuments` of `x`: `Ok(text)` or the error's details.
    fn read(engine: &Engine) -> Vec<Result<String, Value>> {
        let args = json!({ "selected": ["acme::x"] }).to_string();
        let out = engine
            .read(
                engine.pin(),
                "readDocuments",
                &args,
                None,
                None,
                Vec::new(),
                ReadControl::default(),
            )
            .unwrap();
        let out: Value = serde_json::from_str(&out).unwrap();
        out["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|slot| match slot["ok"].as_bool() {
                Some(true) => Ok(slot["value"]["text"].as_str().unwrap().to_owned()),
                _ => Err(slot["error"].clone()),
            })
            .collect()
    }

    #[test]
    fn a_package_root_is_checked_once_per_call_and_a_reinstall_is_root_changed() {
        let dir = std::env::temp_dir().join(format!("cg-root-check-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let (engine, manifest) = open_with_package(&dir);
        reset();
        assert_eq!(
            read(&engine),
            ["# 1\n", "# 2\n", "# 3\n"].map(|t| Ok(t.to_owned()))
        );
        assert_eq!(count(Op::RootCheck), 1, "one check for three documents");

        // Reinstalled as another version: every document of the call says so.
        fs::write(&manifest, r#"{"name":"lib","version":"2.0.0"}"#).unwrap();
        let slots = read(&engine);
        assert_eq!(count(Op::RootCheck), 2, "each call checks anew");
        for slot in slots {
            let e = slot.unwrap_err();
            assert_eq!(
                (&e["code"], &e["nextAction"], &e["details"]["reason"]),
                (
                    &json!("CG_DOCUMENT_UNREADABLE"),
                    &json!("retry"),
                    &json!("root_changed")
                )
            );
        }
        // The package bound is back: its documents read again.
        fs::write(&manifest, r#"{"name":"lib","version":"1.0.0"}"#).unwrap();
        assert!(read(&engine).iter().all(Result::is_ok));
        fs::remove_dir_all(&dir).unwrap();
    }
}
