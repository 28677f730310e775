//! Provider sources: where definitions come from (inline objects, file trees; database
//! authorities through the JS layer). Each source is read whole and validated into a snapshot.

pub mod database;
pub mod file;

use crate::config::{ProviderSource, SourceKind};
use crate::definitions::{
    file_problems, provider_problems, validate_files, validate_provider, CheckedDefinition, Roots,
};
use crate::error::{Code, GraphError, Result};
use crate::knowledge::roots;
use crate::matching::semantic::file::Offered;
use crate::snapshot::{AuthorityKind, ProviderSnapshot};
use serde_json::Value;
use std::sync::Arc;

/// The `knowledgeRoots` aliases a source's locators may name.
fn alias_names(source: &ProviderSource) -> Vec<String> {
    source
        .knowledge_roots
        .iter()
        .map(|(a, _)| a.clone())
        .collect()
}

/// Every relative-file locator has a root to resolve against: the provider's own (an inline
/// provider without `documentRoot` is told so when a document is read) or an alias.
fn root_rules(aliases: &[String]) -> Roots<'_> {
    Roots {
        aliases,
        default_root: true,
    }
}

/// A provider read and validated: its snapshot and, for a database provider, what comes with
/// it but is kept beside it (SPEC D28).
pub struct Loaded {
    pub snapshot: ProviderSnapshot,
    /// The state of the source it was read in (`DatabaseRead::identity`).
    pub source: Option<Arc<Value>>,
    /// What the source keeps with the snapshot for the next read (a view offering
    /// `changedSince`).
    pub kept: Option<database::KeptRead>,
    /// The vectors the view offered, for the semantic executor's build of the snapshot.
    pub offered: Option<Offered>,
}

impl Loaded {
    fn snapshot(snapshot: ProviderSnapshot) -> Loaded {
        Loaded {
            snapshot,
            source: None,
            kept: None,
            offered: None,
        }
    }
}

/// Reads and validates one provider. `definition` replaces an inline provider's definition
/// (reload); an inline source keeps no definition of its own after it loaded. `database` is
/// what the JS layer read through a database authority's adapter, `current` the provider's
/// current snapshot when it is reloaded (see [`database::DatabaseRead::validate_after`]).
pub fn load(
    source: &ProviderSource,
    definition: Option<&Value>,
    database: Option<&database::DatabaseRead>,
    current: Option<database::Current>,
) -> Result<Loaded> {
    let aliases = alias_names(source);
    let rules = root_rules(&aliases);
    match &source.kind {
        SourceKind::Inline {
            definition: own, ..
        } => {
            let roots = roots::bind(source, roots::open_own(source, None)?)?;
            let raw = definition.unwrap_or(own);
            let validated = validate_provider(raw, None, &rules)?;
            Ok(Loaded::snapshot(ProviderSnapshot::build(
                validated,
                AuthorityKind::Inline,
                roots,
            )))
        }
        SourceKind::File { root, layout, .. } => {
            let provider_id = source.provider_id.as_deref().unwrap_or_default();
            let config_path = format!("{}.authority.rootDir", source.path);
            // Definitions and documents are read beneath the same handle of the root.
            let own = Arc::new(file::open_root(root, &config_path)?);
            // Each file is validated by the thread that read it: no parsed tree outlives its
            // own file, so memory at load stays close to what the snapshot keeps.
            let check = |file: &str, value: Value| {
                crate::definitions::capability_in_file(provider_id, file, &value, &rules)
            };
            let files = file::read_provider_dir_with(&own, *layout, provider_id, &check)?;
            let roots = roots::bind(source, Some(own))?;
            let checked = files
                .definitions
                .into_iter()
                .map(|d| (d.file, d.value))
                .collect();
            let validated = validate_files(&files.provider, checked, provider_id, &rules)?;
            Ok(Loaded::snapshot(ProviderSnapshot::build(
                validated,
                AuthorityKind::File,
                roots,
            )))
        }
        SourceKind::Database { .. } => {
            let read = database.ok_or_else(|| GraphError::new(Code::Internal))?;
            let default_root = read.knowledge_root();
            let rules = Roots {
                aliases: &aliases,
                default_root: default_root.is_some(),
            };
            let roots = roots::bind(source, roots::open_own(source, default_root)?)?;
            let provider_id = source.provider_id.as_deref().unwrap_or_default();
            let snapshot = read.snapshot_after(provider_id, &rules, current, roots)?;
            let identity = Arc::new(read.identity());
            // The snapshot holds the records validated: kept with it without their text.
            let kept = read.kept().and_then(|k| k.published(&snapshot));
            Ok(Loaded {
                kept: kept.map(|records| database::KeptRead {
                    records: Arc::new(records),
                    identity: identity.clone(),
                }),
                source: Some(identity),
                offered: read.take_vectors(),
                snapshot,
            })
        }
    }
}

/// Every problem `load` would meet in `source`, not just the first (for `doctor`): a definition
/// file that cannot be read or parsed is one of them. What stops a source from being read at
/// all (its folder, its manifest, a database read) is the one problem it has; a database
/// view's records are checked as `load` checks them.
pub fn problems(
    source: &ProviderSource,
    database: Option<&database::DatabaseRead>,
) -> Vec<GraphError> {
    let aliases = alias_names(source);
    let rules = root_rules(&aliases);
    let found = match &source.kind {
        SourceKind::Inline { definition, .. } => roots::open_own(source, None)
            .and_then(|own| roots::bind(source, own))
            .map(|_| provider_problems(definition, None, &rules)),
        SourceKind::File { root, layout, .. } => {
            let provider_id = source.provider_id.as_deref().unwrap_or_default();
            let config_path = format!("{}.authority.rootDir", source.path);
            file::open_root(root, &config_path).and_then(|own| {
                let own = Arc::new(own);
                // A file that cannot be read or parsed is one problem among the others.
                let check = |file: &str, value: Result<Value>| match value {
                    Ok(value) => crate::definitions::definition_problems_in_file(
                        provider_id,
                        file,
                        &value,
                        &rules,
                    ),
                    Err(e) => CheckedDefinition::unreadable(e),
                };
                let files = file::read_provider_dir_each(&own, *layout, provider_id, &check)?;
                roots::bind(source, Some(own))?;
                let checked = files
                    .definitions
                    .into_iter()
                    .map(|d| (d.file, d.value))
                    .collect();
                Ok(file_problems(&files.provider, checked, provider_id, &rules))
            })
        }
        SourceKind::Database { .. } => load(source, None, database, None).map(|_| Vec::new()),
    };
    // A source that cannot be reached (its folder, its roots) has no definitions to list: its
    // config error is the check's message.
    found.unwrap_or_else(|e| match e.code() {
        Code::ConfigInvalid => Vec::new(),
        _ => vec![e],
    })
}
