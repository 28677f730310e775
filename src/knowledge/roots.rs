//! Trusted document roots, bound once when a provider loads: the provider's own root (a file
//! provider's folder, an inline provider's `documentRoot`) and its `knowledgeRoots` aliases
//! (directories, or installed npm packages found as Node.js would find them). Each is opened
//! once as a directory handle that every read beneath it goes through; no root path ever
//! appears in an output.

use crate::config::{KnowledgeRootSpec, ProviderSource, SourceKind};
use crate::error::{Code, GraphError, Phase, Result};
use crate::fsx::beneath::RootDir;
use crate::snapshot::{BoundRoot, DocumentRoots};
use serde_json::Value;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// `package.json` files larger than this are not read.
const PACKAGE_JSON_MAX_BYTES: u64 = 262_144;

fn unusable(path: String, expected: &str) -> GraphError {
    GraphError::new(Code::ConfigInvalid)
        .with_phase(Phase::Load)
        .detail("path", path)
        .detail("expected", expected)
}

fn real_dir(path: &Path) -> Option<PathBuf> {
    fs::canonicalize(path).ok().filter(|p| p.is_dir())
}

/// Opens a root; a failure is `unusable(path, expected)`, with `retry` when the machine was only
/// out of descriptors or memory (SPEC §14 D20): the root itself may be fine.
fn open_dir(dir: &Path, path: impl FnOnce() -> String, expected: &str) -> Result<Arc<RootDir>> {
    RootDir::open(dir).map(Arc::new).map_err(|e| {
        let error = unusable(path(), expected);
        if crate::fsx::is_transient_io(&e) {
            error
                .with_action(crate::error::NextAction::Retry)
                .detail("reason", "temporarily_unreadable")
        } else {
            error
        }
    })
}

/// The first `node_modules/<name>` from `from` upwards, as `require` looks for packages.
fn find_package(from: &Path, name: &str) -> Option<PathBuf> {
    from.ancestors()
        .map(|dir| dir.join("node_modules").join(name))
        .find_map(|candidate| real_dir(&candidate))
}

/// The identity of the package whose directory is at `dir` now, read by path: what a later
/// read compares with the identity bound, to tell a reinstalled package from the one bound.
pub fn package_identity(dir: &Path, name: &str) -> Option<String> {
    identity_in(fs::File::open(dir.join("package.json")).ok()?, name)
}

/// Checks a `package.json` names the package; returns its identity (name, version, hash).
fn identity_in(file: fs::File, name: &str) -> Option<String> {
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > PACKAGE_JSON_MAX_BYTES {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(PACKAGE_JSON_MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    let manifest: Value = serde_json::from_slice(&bytes).ok()?;
    let version = manifest.get("version")?.as_str()?;
    (manifest.get("name")?.as_str()? == name).then(|| {
        format!(
            "package:{name}@{version}:{}",
            &blake3::hash(&bytes).to_hex()[..16]
        )
    })
}

fn bind_alias(alias: &str, spec: &KnowledgeRootSpec, path: &str) -> Result<BoundRoot> {
    let at = format!("{path}.knowledgeRoots[{}]", Value::from(alias));
    match spec {
        KnowledgeRootSpec::Directory { root_dir } => {
            open_dir(root_dir, || format!("{at}.rootDir"), "readable directory").map(|handle| {
                BoundRoot {
                    handle,
                    identity: "directory".into(),
                    package: None,
                }
            })
        }
        KnowledgeRootSpec::Package {
            package_name,
            resolve_from,
        } => {
            let dir = find_package(resolve_from, package_name).ok_or_else(|| {
                unusable(
                    format!("{at}.packageName"),
                    "package installed where resolveFrom can require it",
                )
            })?;
            let handle = open_dir(
                &dir,
                || format!("{at}.packageName"),
                "package directory that can be opened",
            )?;
            // Read beneath the handle just opened: the identity bound is that directory's.
            let identity = handle
                .open_file("package.json")
                .ok()
                .and_then(|file| identity_in(file, package_name))
                .ok_or_else(|| {
                    unusable(
                        format!("{at}.packageName"),
                        "package with a readable package.json naming it",
                    )
                })?;
            Ok(BoundRoot {
                handle,
                identity,
                package: Some(package_name.clone()),
            })
        }
    }
}

/// Opens the provider's own document root when its source names one: an inline provider's
/// `documentRoot` or a database view's `knowledgeRootDir`. A file provider's root is opened
/// by its loader, which reads the definitions beneath the same handle.
pub fn open_own(
    source: &ProviderSource,
    database_root: Option<PathBuf>,
) -> Result<Option<Arc<RootDir>>> {
    let (dir, at, expected) = match (&source.kind, database_root) {
        (
            SourceKind::Inline {
                document_root: Some(dir),
                ..
            },
            _,
        ) => (
            dir.clone(),
            format!("{}.documentRoot", source.path),
            "readable directory",
        ),
        (SourceKind::Database { .. }, Some(dir)) => (
            dir,
            format!("{}.authority", source.path),
            "database view with a readable knowledgeRootDir",
        ),
        _ => return Ok(None),
    };
    open_dir(&dir, || at, expected).map(Some)
}

/// Binds every root of `source`: `own` is its own root, opened already, and each
/// `knowledgeRoots` alias is opened here.
pub fn bind(source: &ProviderSource, own: Option<Arc<RootDir>>) -> Result<DocumentRoots> {
    let aliases = source
        .knowledge_roots
        .iter()
        .map(|(alias, spec)| Ok((alias.clone(), bind_alias(alias, spec, &source.path)?)))
        .collect::<Result<_>>()?;
    Ok(DocumentRoots {
        default_root: own,
        aliases,
    })
}
